"""Bandit finds no medium- or high-severity security issue in ``evaluator/``, ``models/`` and ``plugin/``.

The plugin runs pip and the Python interpreter (the dependency installer), the engine
loads untrusted model files and writes files chosen by the user, and the evaluator reads
and writes user files, so all three are scanned like ``bandit -r evaluator models plugin -ll``.
Bandit is a pinned development requirement (``requirements-dev.txt``), installed by the
test command's set-up, so the scan always runs with the suite.
"""

import json
import subprocess
import sys

TIMEOUT_S = 120
PACKAGES = ("evaluator", "models", "plugin")


def test_bandit_reports_no_medium_or_high_issue(repo_root):
    """Every module of the three packages is scanned and no finding of medium or high severity remains."""
    folders = [repo_root / name for name in PACKAGES]
    result = subprocess.run([sys.executable, "-m", "bandit", "-r", *map(str, folders), "-ll", "-f", "json", "-q"],
                            capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.stdout, f"bandit did not run (install requirements-dev.txt): {result.stderr[-500:]}"
    report = json.loads(result.stdout)
    findings = [f"{issue['filename']}:{issue['line_number']} {issue['test_id']} {issue['issue_severity']}: "
                f"{issue['issue_text']}" for issue in report["results"]]
    assert findings == []
    assert report["errors"] == []
    scanned = {key for key in report["metrics"] if key != "_totals"}
    modules = {str(path) for folder in folders for path in folder.rglob("*.py")}
    assert modules <= scanned
    assert result.returncode == 0
