"""docs/reliability.md lists every bad-input and fault case the tests declare, as the tests declare them."""

from reliability import DOCUMENT, collected_table, current_document


def test_the_reliability_table_is_current(repo_root):
    table = collected_table(repo_root)
    assert table.count("\n| ") >= 40  # header plus the cases
    assert current_document(repo_root, table) == (repo_root / DOCUMENT).read_text(encoding="utf-8"), (
        "docs/reliability.md is not current: run scripts/reliability-table")
