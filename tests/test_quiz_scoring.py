"""Key-point coverage: keywords and synonyms found at word boundaries, Chinese segmented."""

from __future__ import annotations

import pytest

from tests._quiz_samples import score

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


# --- contradictions, negations, keyword lists ---------------------------------------------------

import yaml  # noqa: E402

from tests import _quiz_samples as samples  # noqa: E402

REPEAT_EXPAND = yaml.safe_load(samples.REPEAT_EXPAND_KEY_POINTS)


def test_a_suffix_glued_to_the_end_of_a_word_still_counts():
    # segmenters read 「写穿到」 as 写|穿到: the keyword's end falls inside a segment
    kp = [{"point": "写入写穿", "keywords": ["写穿"], "synonyms": {"写穿": ["共享元素"]}}]
    assert score("y[0, 0] = 100 写穿到所有共享的行", kp).points[0].hits == {"写穿": "写穿"}
    assert score("公共享有", [{"point": "p", "keywords": ["共享"]}]).points[0].hits == {"共享": None}  # start still needs a boundary


@pytest.mark.parametrize("answer, found", [
    ("add_ 会报错", "报错"), ("不会报错", None), ("没有报错", None), ("也不报错", None), ("无论如何都报错", "报错"),
    ("写进去并不拷贝", None), ("没错，会报错", "报错"),
])
def test_a_negated_keyword_does_not_count(answer, found):
    kp = [{"point": "p", "keywords": ["报错"] if "报错" in answer else ["拷贝"]}]
    hits = score(answer, kp).points[0].hits
    assert list(hits.values()) == [found]


def test_a_contradiction_costs_the_point_and_names_what_was_said():
    result = score("expand 其实会拷贝数据，stride 为 0，共享存储，不拷贝", REPEAT_EXPAND[:1])
    point = result.points[0]
    assert point.status == "contradicted" and point.fraction == 0 and result.coverage == 0
    assert point.contradicted == {"statement": "expand 会拷贝", "said": "expand 其实会拷贝"}


@pytest.mark.parametrize("answer", [
    "repeat 会拷贝，expand 不拷贝",  # the parts are in different clauses
    "expand 不会拷贝数据",  # negated
    "view 并不要求 contiguous",  # a negation between the parts
    "view 不一定要求 contiguous",
])
def test_no_contradiction_where_the_answer_says_the_opposite(answer):
    assert all(p.contradicted is None for p in score(answer, REPEAT_EXPAND).points), answer


def test_a_keyword_list_counts_half():
    result = score("stride 0 共享 不拷贝", REPEAT_EXPAND[:1])
    assert result.points[0].weights == {"stride": 0.5, "0": 0.5, "共享": 0.5, "不拷贝": 0.5}
    assert result.points[0].listed == ["stride", "0", "共享", "不拷贝"] and result.coverage == 0.5
    # the same words in a sentence count in full
    assert score("expand 把扩展维的 stride 设为 0，和原张量共享存储，不拷贝数据。", REPEAT_EXPAND[:1]).coverage == 1.0


def test_good_inverted_and_keyword_answers_are_told_apart():
    got = {name: score(text, REPEAT_EXPAND).coverage for name, text in samples.ANSWERS.items()}
    assert got["good"] > 0.8, got
    assert got["inverted"] < 0.4, got
    assert got["keywords"] < 0.6, got
    inverted = score(samples.INVERTED_ANSWER, REPEAT_EXPAND)
    assert [p.status for p in inverted.points] == ["contradicted"] * 5


def test_quoting_a_wrong_claim_to_refute_it_is_not_saying_it():
    assert score("“view 要求 contiguous”是简化说法，真正的要求是 stride 兼容", REPEAT_EXPAND).points[3].contradicted is None
    assert score("view 要求 contiguous", REPEAT_EXPAND).points[3].contradicted is not None


def test_a_statement_may_carry_its_own_negation():
    kp = [{"point": "print 会断图", "keywords": ["断图"], "contradicts": ["print 不会 断图"]}]
    assert score("其实 print 不会断图", kp).points[0].contradicted == {"statement": "print 不会 断图", "said": "print 不会断图"}
    assert score("print 会断图，控制流也会", kp).points[0].contradicted is None


# --- suggestions for the candidate's own marks ------------------------------------------------------

KV = [{"point": "因果掩码让历史位置的 K、V 不变，所以能缓存", "keywords": ["因果掩码", "缓存"],
       "synonyms": {"因果掩码": ["causal mask"], "缓存": ["cache"]}, "contradicts": ["K 每步 会变"]},
      {"point": "expand 只改 stride，不拷贝", "keywords": ["stride", "不拷贝"],
       "synonyms": {"不拷贝": ["零拷贝"], "stride": ["步长"]}, "contradicts": ["expand 会 拷贝"]}]


def _marks(answer: str) -> list[str]:
    from verify.quiz.schema import KeyPoint  # noqa: PLC0415
    from verify.quiz.scoring import suggest  # noqa: PLC0415

    return [s.mark for s in suggest(answer, [KeyPoint.of(k) for k in KV])]


@pytest.mark.parametrize("answer, marks", [
    ("因果掩码让历史的 K、V 不变，所以可以缓存下来。expand 只改 stride，零拷贝。", ["said", "said"]),
    # a negation anywhere in the clause, not only just before the keyword
    ("有没有因果掩码都无所谓，照样缓存", ["missed", "missed"]),
    ("缓存跟因果掩码无关", ["missed", "missed"]),
    ("并非因为因果掩码才能缓存", ["missed", "missed"]),
    ("不需要 causal mask 也能 cache", ["missed", "missed"]),
    # the point's own negated word (不变) and a keyword that carries its negation (不拷贝) are no negation
    ("因果掩码下历史 K 不变，能缓存；expand 改 stride 不拷贝", ["said", "said"]),
    # a paraphrase of a contradicts statement (拷贝's synonym) is said wrong
    ("expand 会零拷贝吗？不，expand 会拷贝。", ["missed", "wrong"]),
    ("因果掩码 缓存 stride 不拷贝", ["missed", "missed"]),  # a list of terms is no answer
])
def test_said_is_suggested_only_where_nothing_negates_or_contradicts_it(answer, marks):
    assert _marks(answer) == marks


def test_a_contradiction_with_a_synonym_is_found():
    from verify.quiz.schema import KeyPoint  # noqa: PLC0415
    from verify.quiz.scoring import suggest  # noqa: PLC0415

    kp = KeyPoint.of({"point": "repeat 会复制", "keywords": ["复制"], "synonyms": {"复制": ["拷贝"]},
                      "contradicts": ["repeat 不 复制"]})
    sug = suggest("repeat 其实不拷贝数据", [kp])[0]
    assert sug.mark == "wrong" and sug.said == "repeat 其实不拷贝" and sug.statement == "repeat 不 复制"


@pytest.mark.parametrize("marks, over, grade", [
    (["said", "said"], False, 4), (["said", "said"], True, 3), (["said", "missed"], False, 2),
    (["said", "missed", "missed"], False, 1), (["said", "wrong"], False, 1), ([], False, 1)])
def test_the_rating_follows_from_the_marks(marks, over, grade):
    from verify.quiz.scoring import rating  # noqa: PLC0415

    assert rating(marks, over_time=over) == grade


@pytest.mark.parametrize("answer, marks", [
    ("缓存要不要因果掩码？要：因果掩码保证前缀不变，所以能缓存。", ["said", "missed"]),  # A-not-A asks, denies nothing
    ("因果掩码让 K 变少，所以能缓存", ["missed", "missed"]),  # a comparison the point does not make
    ("因果掩码那种说法是错的，缓存靠别的", ["missed", "missed"]),  # calling it wrong denies it
])
def test_questions_comparisons_and_denials(answer, marks):
    assert _marks(answer) == marks
