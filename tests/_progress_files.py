"""Progress files for the quiz tests: a real browser export, and hostile changes of it.

The terminal (``verify.quiz.progress.read``) and the browser (``QuizCore.readProgress``) must
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


#: (what is wrong, the file's text, a part of the reason both readers give)
HOSTILE: list[tuple[str, str, str]] = [
    ("far-future due", _changed(lambda d: d["cards"]["expand-demo"].update(due="9999-12-31T00:00:00.000Z")),
     "cards.expand-demo.due 不在 2000 年到现在之间"),
    ("year-one review, with an offset", _changed(lambda d: d["cards"]["expand-demo"].update(
        last_review="0001-01-01T00:00:00+05:00")), "cards.expand-demo.last_review 不在"),
    ("a review in the future", _changed(lambda d: d["log"][0].update(at="9999-01-01T00:00:00Z")), "log[0].at 不在"),
    ("a date in words", _changed(lambda d: d["log"][0].update(at="March 7, 2026")), "log[0].at 不是日期"),
    ("HTML as coverage", _changed(lambda d: d["log"][0].update(coverage="<img src=x>")),
     "log[0].coverage 不是 0 到 1 之间的数"),
    ("coverage over 1", _changed(lambda d: d["log"][0].update(coverage=3)), "log[0].coverage 不是 0 到 1 之间的数"),
    ("seconds as text", _changed(lambda d: d["log"][0].update(seconds="12")), "log[0].seconds 不是非负数"),
    ("negative reps", _changed(lambda d: d["cards"]["expand-demo"].update(reps=-1)), "cards.expand-demo.reps 不是非负数"),
    ("a boolean as a number", _changed(lambda d: d["cards"]["expand-demo"].update(lapses=True)),
     "cards.expand-demo.lapses 不是非负数"),
    ("a rating of 7", _changed(lambda d: d["log"].append({"id": "x", "rating": 7, "at": "2026-01-01T00:00:00Z"})),
     "log[2] 格式不对"),
    ("version 2", _changed(lambda d: d.update(version=2)), "version 必须是 1"),
    ("a key twice", json.dumps(BROWSER_EXPORT).replace('"version": 1', '"version": 1, "version": 1', 1),
     "键 'version' 在同一个对象里出现了两次"),
    ("a card key twice", json.dumps(BROWSER_EXPORT).replace('"reps": 1,', '"reps": 1, "reps": 0,', 1),
     "键 'reps' 在同一个对象里出现了两次"),
    ("not JSON", '{"version": 1, "cards": {', "文件不是合法的 JSON"),
]
