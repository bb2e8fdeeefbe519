"""Bandit finds no medium- or high-severity security issue in ``plugin/``.

The plugin runs pip and the Python interpreter (the dependency installer) and
writes files chosen by the user, so it is scanned like ``bandit -r plugin/ -ll``.
Bandit is a development requirement; without it the test is skipped and says so.
"""

import importlib.util
import json
import subprocess
import sys

import pytest

TIMEOUT_S = 120


@pytest.mark.skipif(importlib.util.find_spec("bandit") is None,
                    reason="bandit is not installed; install requirements-dev.txt to run the security scan")
def test_bandit_reports_no_medium_or_high_issue(repo_root):
    """Every module of plugin/ is scanned and no finding of medium or high severity remains."""
    plugin = repo_root / "plugin"
    result = subprocess.run([sys.executable, "-m", "bandit", "-r", str(plugin), "-ll", "-f", "json", "-q"],
                            capture_output=True, text=True, timeout=TIMEOUT_S)
    report = json.loads(result.stdout)
    findings = [f"{issue['filename']}:{issue['line_number']} {issue['test_id']} {issue['issue_severity']}: "
                f"{issue['issue_text']}" for issue in report["results"]]
    assert findings == []
    assert report["errors"] == []
    scanned = {key for key in report["metrics"] if key != "_totals"}
    modules = {str(path) for path in plugin.glob("*.py")}
    assert modules <= scanned
    assert result.returncode == 0
