"""Progress files for the quiz tests: a real browser export, and hostile changes of it.

The terminal (``verify.quiz.progress_file.read``) and the browser (``QuizCore.readProgress``) must
refuse each hostile file whole with the same words; both suites read these cases.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

BROWSER_EXPORT = {
    "version": 1,
    "cards": {
        "expand-demo": {"due": "2026-01-01T00:10:00.000Z", "stability": 2.3065, "difficulty": 2.11810397, "elapsed_days": 0,
                        "scheduled_days": 0, "learning_steps": 1, "reps": 1, "lapses": 0, "state": 1,
                        "last_review": "2026-01-01T00:00:00.000Z"},
        "<img src=x onerror=alert(1)>": {"due": "2026-01-01T00:10:00.000Z", "stability": 1, "difficulty": 5,
                                         "elapsed_days": 0, "scheduled_days": 0, "learning_steps": 0, "reps": 1,
                                         "lapses": 0, "state": 1, "last_review": "2026-01-01T00:00:00.000Z"},
    },
    "log": [{"id": "expand-demo", "rating": 3, "at": "2026-01-01T00:00:00.000Z", "coverage": 0.5, "seconds": 31},
            {"id": "<img src=x onerror=alert(1)>", "rating": 3, "at": "2026-01-01T00:00:01.000Z"}],
}


def _changed(change: Callable[[dict], None]) -> str:
    data = copy.deepcopy(BROWSER_EXPORT)
    change(data)
    return json.dumps(data, ensure_ascii=False)


def _at(when: str) -> str:
    return _changed(lambda d: d["log"][0].update(at=when))


_NOT_A_DATE = "log[0].at 不是带时区的 ISO 8601 时间（如 2026-01-01T08:00:00.000Z）"
_DEEP = 100_000  # arrays inside one another: past Python's recursion limit

#: (what is wrong, the file's text, a part of the reason both readers give). Each case is caught by the
#: schema in verify/quiz/progress_file.py (none has a check of its own); the browser checks the same schema.
HOSTILE: list[tuple[str, str, str]] = [
    ("far-future due", _changed(lambda d: d["cards"]["expand-demo"].update(due="9999-12-31T00:00:00.000Z")),
     "cards.expand-demo.due 不在 2000 年到现在之间"),
    ("year-one review, with an offset", _changed(lambda d: d["cards"]["expand-demo"].update(
        last_review="0001-01-01T00:00:00+05:00")), "cards.expand-demo.last_review 不在"),
    ("a review in the future", _at("9999-01-01T00:00:00Z"), "log[0].at 不在"),
    ("a date in words", _at("March 7, 2026"), _NOT_A_DATE),
    # one date format: the five the terminal took and the browser refused, and a day no month has
    ("a date without a time zone", _at("2026-01-01T00:00:00"), _NOT_A_DATE),
    ("a date with a space", _at("2026-01-01 00:00:00Z"), _NOT_A_DATE),
    ("a date without seconds", _at("2026-01-01T00:00Z"), _NOT_A_DATE),
    ("a date in ISO basic format", _at("20260101T000000Z"), _NOT_A_DATE),
    ("an ISO week date", _at("2026-W01-1T00:00:00Z"), _NOT_A_DATE),
    ("an offset without a colon", _at("2026-01-01T00:00:00+0500"), _NOT_A_DATE),
    ("a date only", _at("2026-01-01"), _NOT_A_DATE),
    ("full-width digits", _at("２０２６-01-01T00:00:00Z"), _NOT_A_DATE),
    ("the 30th of February", _at("2026-02-30T00:00:00Z"), "log[0].at 不是日期"),
    ("HTML as coverage", _changed(lambda d: d["log"][0].update(coverage="<img src=x>")),
     "log[0].coverage 应为数或空值 null，不是字符串"),
    ("coverage over 1", _changed(lambda d: d["log"][0].update(coverage=3)), "log[0].coverage 应 ≤ 1"),
    ("seconds as text", _changed(lambda d: d["log"][0].update(seconds="12")),
     "log[0].seconds 应为数或空值 null，不是字符串"),
    ("negative reps", _changed(lambda d: d["cards"]["expand-demo"].update(reps=-1)), "cards.expand-demo.reps 应 ≥ 0"),
    ("a fraction of a rep", _changed(lambda d: d["cards"]["expand-demo"].update(reps=1.5)),
     "cards.expand-demo.reps 应为整数"),
    ("a boolean as a number", _changed(lambda d: d["cards"]["expand-demo"].update(lapses=True)),
     "cards.expand-demo.lapses 应为数，不是布尔值"),
    # a card no scheduler can rate: every rating of it crashed in the terminal and threw in the browser
    ("stability 0", _changed(lambda d: d["cards"]["expand-demo"].update(stability=0)),
     "cards.expand-demo.stability 应 ≥ 0.001"),
    ("difficulty past FSRS's range", _changed(lambda d: d["cards"]["expand-demo"].update(difficulty=11)),
     "cards.expand-demo.difficulty 应 ≤ 10"),
    ("a new card", _changed(lambda d: d["cards"]["expand-demo"].update(state=0)), "cards.expand-demo.state 应 ≥ 1"),
    ("a number past a double", json.dumps(BROWSER_EXPORT).replace('"stability": 2.3065', '"stability": 1e999', 1),
     "cards.expand-demo.stability 超出数的范围"),
    ("NaN", json.dumps(BROWSER_EXPORT).replace('"stability": 2.3065', '"stability": NaN', 1), "文件不是合法的 JSON"),
    ("a rating of 7", _changed(lambda d: d["log"].append({"id": "x", "rating": 7, "at": "2026-01-01T00:00:00Z"})),
     "log[2].rating 应 ≤ 4"),
    # reviews without their card were imported, then dropped by the next export
    ("a review without its card", _changed(lambda d: d["log"].append(
        {"id": "compile-demo", "rating": 3, "at": "2026-01-01T00:00:00Z"})),
     "log 里有 1 条自评没有对应的卡片（如 「compile-demo」）"),
    ("an id too long", _changed(lambda d: d["cards"].update({"x" * 301: d["cards"]["expand-demo"]})),
     "cards 的键 太长（最多 300 个字符）"),
    ("an empty id", _changed(lambda d: d["log"][0].update(id="")), "log[0].id 不能为空"),
    ("a field no reader knows", _changed(lambda d: d["cards"]["expand-demo"].update(note="hi")),
     "cards.expand-demo 有未知字段 note"),
    ("a missing field", _changed(lambda d: d["cards"]["expand-demo"].pop("due")), "cards.expand-demo 缺少字段 due"),
    # very deep JSON: a RecursionError in the terminal, accepted by the browser; the shape bounds the depth
    ("very deep JSON in a field of its own", json.dumps(BROWSER_EXPORT)[:-1] + ', "x": ' + "[" * _DEEP + "]" * _DEEP + "}",
     "文件 有未知字段 x"),
    ("very deep JSON as a review", json.dumps(BROWSER_EXPORT).replace('"log": [', '"log": [' + "[" * _DEEP + "]" * _DEEP + ", ", 1),
     "log[0] 应为对象，不是数组"),
    ("an array for the file", "[" + json.dumps(BROWSER_EXPORT) + "]", "文件 应为对象，不是数组"),
    ("version 2", _changed(lambda d: d.update(version=2, added_in_2={})), "这是更新的格式（version 2），这里只读得懂 version 1"),
    ("version 0", _changed(lambda d: d.update(version=0)), "version 应 ≥ 1"),
    ("a key twice", json.dumps(BROWSER_EXPORT).replace('"version": 1', '"version": 1, "version": 1', 1),
     "键 'version' 在同一个对象里出现了两次"),
    ("a card key twice", json.dumps(BROWSER_EXPORT).replace('"reps": 1,', '"reps": 1, "reps": 0,', 1),
     "键 'reps' 在同一个对象里出现了两次"),
    ("not JSON", '{"version": 1, "cards": {', "文件不是合法的 JSON"),
]
