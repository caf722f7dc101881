from __future__ import annotations

import pytest

from verify.core.matchers import check, describe


@pytest.mark.parametrize(("expected", "observed", "ok"), [
    ([0, 1], (0, 1), True),
    ([0, 1], [1, 0], False),
    ({">=": 2.0}, 2.0, True),
    ({">=": 2.0}, 1.99, False),
    ({"<": 3}, 2.5, True),
    ({"between": [1, 2]}, 2.5, False),
    ({"approx": [1.0, 0.05]}, 1.04, True),
    ({"approx": [1.0, 0.05]}, 1.06, False),
    ({"contains": "view size"}, "RuntimeError: view size is not compatible", True),
    ({"in": ["a", "b"]}, "c", False),
    ({"!=": 0}, 1, True),
    ({"type": "bool"}, True, True),
    ({"x": 1}, {"x": 1}, True),  # a dict that is not a matcher compares as a value
])
def test_matchers(expected, observed, ok):
    assert (check({"k": expected}, {"k": observed}) == []) is ok


def test_mismatch_messages_name_key_expected_and_observed():
    (msg,) = check({"stride": [0, 1]}, {"stride": [3, 1]})
    assert msg == "stride: expected == [0, 1], observed [3, 1]"
    (missing,) = check({"speedup": {">=": 2}}, {})
    assert "speedup" in missing and "did not observe" in missing


def test_comparing_a_string_with_a_number_is_a_failure_not_a_crash():
    (msg,) = check({"t": {">": 1}}, {"t": "fast"})
    assert "cannot compare" in msg


def test_describe():
    assert describe({">=": 2}) == ">= 2"
    assert describe((0, 1)) == "== [0, 1]"
