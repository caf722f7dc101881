"""Key-point coverage: keywords and synonyms found at word boundaries, Chinese segmented."""

from __future__ import annotations

import pytest

from verify.quiz.scoring import score

KP = [
    {"point": "expand 只改 stride，不拷贝", "keywords": ["stride", "不拷贝"],
     "synonyms": {"stride": ["步长"], "不拷贝": ["零拷贝", "共享内存"]}},
    {"point": "数据共享", "keywords": ["共享"], "synonyms": {}},
    {"point": "复杂度", "keywords": ["O(1)"], "synonyms": {"O(1)": ["常数时间"]}},
]

# (answer, expected hits per keyword) ; the expected values are what a reader would judge
CASES = [
    ("expand 只改 stride，不拷贝数据", {"stride": "stride", "不拷贝": "不拷贝", "共享": None, "O(1)": None}),
    ("改的是步长，零拷贝", {"stride": "步长", "不拷贝": "零拷贝", "共享": None, "O(1)": None}),
    ("它们共享内存，expand 是 O(1)", {"stride": None, "不拷贝": "共享内存", "共享": "共享", "O(1)": "O(1)"}),
    ("ＳＴＲＩＤＥＳ都是 0", {"stride": "stride", "不拷贝": None, "共享": None, "O(1)": None}),  # full width, plural
    ("公共享有的 strider", {"stride": None, "不拷贝": None, "共享": None, "O(1)": None}),  # no word boundary
    ("expand 会拷贝数据，常数时间", {"stride": None, "不拷贝": None, "共享": None, "O(1)": "常数时间"}),
    ("o (1) 的开销", {"stride": None, "不拷贝": None, "共享": None, "O(1)": "O(1)"}),
    ("", {"stride": None, "不拷贝": None, "共享": None, "O(1)": None}),
]


@pytest.mark.parametrize("answer, expected", CASES)
def test_hits(answer, expected):
    result = score(answer, KP)
    hits = {k: v for p in result.points for k, v in p.hits.items()}
    assert hits == expected


def test_coverage_and_status():
    result = score("expand 只改 stride，数据共享", KP)
    assert [p.status for p in result.points] == ["partial", "covered", "missed"]
    assert result.points[0].missing == ["不拷贝"]
    assert result.coverage == pytest.approx((0.5 + 1 + 0) / 3)
    assert result.to_dict()["points"][1]["status"] == "covered"


def test_full_answer_scores_one():
    assert score("stride 为 0，不拷贝，共享，O(1)", KP).coverage == 1.0


def test_longest_match_wins():
    kps = [{"point": "不拷贝", "keywords": ["不拷贝"], "synonyms": {"不拷贝": ["零拷贝"]}},
           {"point": "repeat 拷贝", "keywords": ["拷贝"], "synonyms": {}}]
    assert [p.status for p in score("expand 是零拷贝", kps).points] == ["covered", "missed"]
    assert [p.status for p in score("expand 零拷贝，repeat 要拷贝", kps).points] == ["covered", "covered"]
    kps2 = [{"point": "连续", "keywords": ["连续"], "synonyms": {}},
            {"point": "expand 不连续", "keywords": ["不连续"], "synonyms": {}}]
    assert [p.status for p in score("expand 的结果不连续", kps2).points] == ["missed", "covered"]
