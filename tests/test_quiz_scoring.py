"""Finding the sentences of an answer that contain a key point's words, and the rating the marks give."""

from __future__ import annotations

import pytest

from verify.quiz.schema import KeyPoint
from verify.quiz.scoring import keywords_in, rating, sentences, shared, words

KP = KeyPoint.of({"point": "expand 只改 stride，不拷贝", "keywords": ["stride", "不拷贝", "O(1)"],
                  "synonyms": {"stride": ["步长"], "不拷贝": ["零拷贝", "共享内存"], "O(1)": ["常数时间"]}})


def test_the_points_words_are_its_keywords_then_their_synonyms():
    assert words(KP) == ["stride", "步长", "不拷贝", "零拷贝", "共享内存", "O(1)", "常数时间"]


@pytest.mark.parametrize("answer, found", [
    ("expand 只改 stride，不拷贝数据。", [("expand 只改 stride，不拷贝数据。", ["stride", "不拷贝"])]),
    # each sentence on its own, as typed; one without the words is left out
    ("改的是步长。它很快！零拷贝", [("改的是步长。", ["步长"]), ("零拷贝", ["零拷贝"])]),
    ("ＳＴＲＩＤＥＳ都是 0", [("ＳＴＲＩＤＥＳ都是 0", ["stride"])]),  # full width, an English plural
    ("strider 和 substride 不算", []),  # a Latin word needs a boundary
    ("o (1) 的开销", [("o (1) 的开销", ["O(1)"])]),  # a space may be typed or not
    ("expand 会拷贝数据", []),  # 不拷贝 is not in it
    ("expand 不会不拷贝？", [("expand 不会不拷贝？", ["不拷贝"])]),  # found, whatever it means
    ("stride 是 0。\nstride 是 0。", [("stride 是 0。", ["stride"])]),  # a sentence said twice shows once
    ("", []),
])
def test_shared_finds_the_sentences_that_contain_the_points_words(answer, found):
    assert shared(answer, KP) == found


def test_a_one_character_word_points_at_nothing():
    # 「0」 and 「快」 are in too many sentences: a point's one-character words are not looked for
    kp = KeyPoint.of({"point": "expand 的 stride 是 0", "keywords": ["0", "stride"], "synonyms": {"stride": ["快"]}})
    assert words(kp) == ["stride"]
    assert shared("它很快。步长是 0。stride 不是 0。", kp) == [("stride 不是 0。", ["stride"])]


def test_chinese_is_not_segmented_so_containing_is_containing():
    kp = KeyPoint.of({"point": "数据共享", "keywords": ["共享"]})
    assert shared("公共享有", kp) == [("公共享有", ["共享"])]


def test_an_inversion_contains_the_same_words_as_the_point():
    """Why nothing is pre-selected: the right sentence and its inversion find the same words."""
    right, inverted = "expand 只改 stride，不拷贝，O(1)。", "expand 并非只改 stride、不拷贝、O(1)。"
    assert [w for _s, w in shared(right, KP)] == [w for _s, w in shared(inverted, KP)] == [["stride", "不拷贝", "O(1)"]]


def test_sentences_end_at_each_stop_and_line_break():
    assert sentences("一。二！三？四；五\n\n六!七?八;九") == ["一。", "二！", "三？", "四；", "五", "六!", "七?", "八;", "九"]


def test_keywords_in_counts_a_keyword_said_by_a_synonym():
    assert keywords_in("步长为 0，零拷贝", KP) == ["stride", "不拷贝"]
    assert keywords_in("无关的句子", KP) == []


@pytest.mark.parametrize("marks, over, grade", [
    (["said", "said"], False, 4), (["said", "said"], True, 3), (["said", "missed"], False, 2),
    (["said", "missed", "missed"], False, 1), (["said", "wrong"], False, 1), ([], False, 1)])
def test_the_rating_follows_from_the_marks(marks, over, grade):
    assert rating(marks, over_time=over) == grade
