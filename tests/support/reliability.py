"""The bad-input and fault cases of ``docs/reliability.md``, declared on the tests themselves.

A test (or one parameter of a parametrized test) is a case of the table when it carries
:func:`case`::

    @pytest.mark.parametrize("argv", [
        pytest.param([...], marks=case("NaN minimum hole area", "evaluator CLI", "exit 2: Expected ...")),
    ])

``scripts/reliability-table`` collects the suite and rewrites the table from these marks;
``tests/test_reliability_doc.py`` fails when the document is not current.
"""

import pytest

__all__ = ["BEGIN", "END", "case", "render_table"]

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
