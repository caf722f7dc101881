"""A study page, not a reference (issue 35): what a reader reads without opening a fold stays short.

The main flow (``tests/_main_flow.py``: text after the front matter and before 证据, less collapsed
folds, plus the statement of each claim shown outside a fold) is at most 12,000 characters; machine
detail lives in ``??? note "深入：…"`` folds.
"""

from __future__ import annotations

import pytest

from tests._main_flow import LIMIT, _statements, length, main_flow
from tests._project import REPO

PAGES = sorted((REPO / "docs" / "questions").glob("*.md"))


@pytest.fixture(scope="module")
def statements() -> dict[str, str]:
    return _statements(REPO)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_the_main_flow_is_at_most_twelve_thousand_characters(path, statements):
    n = length(path, statements)
    assert n <= LIMIT, (f"{path.name}: main flow {n:,} characters (at most {LIMIT:,}): move machine detail into "
                        "a ??? note \"深入：…\" fold")


def test_a_fold_and_a_claim_in_it_are_left_out_of_the_main_flow():
    page = ("---\nid: x\n---\n# 题\n\n正文一句。\n\n```claim\na.b\n```\n\n??? note \"深入：细节\"\n    折叠里的话。\n\n"
            "    ```claim\n    c.d\n    ```\n\n回到正文。\n\n## 证据\n\n证据不算。\n")
    flow, ids = main_flow(page)
    assert "正文一句" in flow and "回到正文" in flow
    assert "折叠里的话" not in flow and "证据不算" not in flow and ids == ["a.b"]


def test_a_reference_chip_is_not_prose():
    flow, _ = main_flow("---\nid: x\n---\n# 题\n\n正文一句 `#!see some.long-claim-id`。\n")
    assert flow == "# 题\n\n正文一句。"
