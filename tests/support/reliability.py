"""The bad-input and fault cases of ``docs/reliability.md``, declared on the tests themselves.

A test (or one parameter of a parametrized test) is a case of the table when it carries
:func:`case`::

    @pytest.mark.parametrize("argv", [
        pytest.param([...], marks=case("NaN minimum hole area", "evaluator CLI", "exit 2: Expected ...")),
    ])

``scripts/reliability-table`` collects the suite and rewrites the table from these marks;
``tests/test_reliability_doc.py`` fails when the document is not current.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

__all__ = ["BEGIN", "DOCUMENT", "END", "case", "collected_table", "current_document", "main", "render_table"]

DOCUMENT = Path("docs") / "reliability.md"

BEGIN = "<!-- begin generated table: scripts/reliability-table -->"
END = "<!-- end generated table -->"


def case(name, entry, gets):
    """Mark a test as the case ``name`` of ``entry`` (entry point), where the user ``gets`` this."""
    return pytest.mark.reliability(case=name, entry=entry, gets=gets)


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def render_table(rows):
    """The Markdown table of ``(entry, case, gets, test id)`` rows, grouped by entry point."""
    lines = [BEGIN, "", "| Case | Entry point | What the user gets | Test |", "|---|---|---|---|"]
    for entry, name, gets, test in sorted(rows, key=lambda row: (row[0], row[3])):
        lines.append(f"| {_cell(name)} | {_cell(entry)} | {_cell(gets)} | `{_cell(test)}` |")
    lines += ["", f"{len(rows)} cases.", "", END]
    return "\n".join(lines) + "\n"


def collected_table(root):
    """The table of every case the test suite under ``root`` declares (collects it in a subprocess)."""
    with tempfile.TemporaryDirectory() as folder:
        table = Path(folder) / "table.md"
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               f"--reliability-table={table}", "tests"], cwd=root, env=env, capture_output=True,
                              text=True, check=False)
        if done.returncode != 0 or not table.exists():
            raise RuntimeError(f"collecting the tests failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return table.read_text(encoding="utf-8")


def current_document(root, table):
    """``docs/reliability.md`` under ``root`` with its generated table replaced by ``table``."""
    text = (Path(root) / DOCUMENT).read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END + "\n")
    return head + table + tail


def main(argv):
    """``scripts/reliability-table [--check]``: rewrite the table, or exit 1 when it is not current."""
    root = Path(__file__).resolve().parents[2]
    wanted = current_document(root, collected_table(root))
    if "--check" in argv:
        if wanted != (root / DOCUMENT).read_text(encoding="utf-8"):
            print(f"{DOCUMENT} is not current: run scripts/reliability-table", file=sys.stderr)
            return 1
        return 0
    (root / DOCUMENT).write_text(wanted, encoding="utf-8")
    print(f"wrote {DOCUMENT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
