"""Generated hostile files against the readers of untrusted input: bundles and progress files.

Hypothesis changes one field of a real file at a time (any field, to any JSON value, or away),
or writes bytes at random. Each reader may only answer with the file read, or with its one named
error; a refused file changes nothing, and whatever a reader accepts, the next step can use
(merge writes a device file that reads back; an imported progress file exports again).
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests._progress_files import BROWSER_EXPORT
from tests._project import recorded_bundle, tiny_project
from verify.errors import ClaimError
from verify.quiz import progress, progress_file
from verify.quiz.progress import Progress
from verify.settings import Settings
from verify.storage import bundles, recorded

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
                    | st.sampled_from(["2026-01-01T00:00:00Z", "9999-12-31T00:00:00+00:00", "../x", "pass", ""]),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                    max_leaves=12)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def changed(draw: st.DrawFn, original: Any) -> Any:
    """``original`` with one field replaced by any JSON value, removed, or a key added beside it."""
    data = copy.deepcopy(original)
    path = draw(st.sampled_from(_paths(data)[1:]))
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    how = draw(st.sampled_from(["replace", "remove", "add"]))
    if how == "remove":
        del parent[path[-1]]
    elif how == "add" and isinstance(parent, dict):
        parent[draw(st.text(max_size=12))] = draw(JSON)
    else:
        parent[path[-1]] = draw(JSON)
    return data


# --- bundles -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_bundle(tmp_path_factory) -> dict[str, Any]:
    data = recorded_bundle(tmp_path_factory.mktemp("fuzz-run"))
    data["git_commit"] = "0123456789ab"
    return data


@pytest.fixture(scope="module")
def project(tmp_path_factory, real_bundle) -> Path:
    root = tiny_project(tmp_path_factory.mktemp("fuzz-merge") / "p")
    (root / "evidence").mkdir()
    bundles.merge(Settings.for_root(root), [_write(root.parent / "first.json", json.dumps(real_bundle).encode())])
    return root


def _write(path: Path, raw: bytes) -> Path:
    path.write_bytes(raw)
    return path


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root.parent).as_posix(): p.read_bytes() for p in root.parent.rglob("*")
            if p.is_file() and ".cache" not in p.parts and p.name != "bundle.json"}


def _merge_or_refuse(project: Path, raw: bytes) -> None:
    before = _tree(project)
    try:
        report = bundles.merge(Settings.for_root(project), [_write(project.parent / "bundle.json", raw)])
    except ClaimError as exc:
        event("bundle refused")
        assert "bundle.json" in str(exc)  # the file is named
        assert _tree(project) == before  # and nothing changed, in evidence/ or beside it
        return
    event("bundle merged")
    for dev, path in report.written.items():  # what merge accepted, a later build reads back
        assert path.parent == project / "evidence"
        recorded.read(path, f"evidence/{dev}.json", device_key=dev)
    for path in (project / "evidence").iterdir():
        path.unlink()  # the next example starts from the first recording again
    bundles.merge(Settings.for_root(project), [project.parent / "first.json"])


@FUZZ
@given(data=st.data())
def test_a_bundle_with_any_one_field_changed_is_merged_or_refused_by_name(project, real_bundle, data):
    _merge_or_refuse(project, json.dumps(data.draw(changed(real_bundle)), ensure_ascii=False).encode())


@FUZZ
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_bytes_at_random_are_a_named_error(project, raw):
    _merge_or_refuse(project, raw)


# --- progress files --------------------------------------------------------------------------------
# Through the one schema (verify.quiz.progress_file): what it accepts imports, every card of it can be
# rated (a card of stability 0 crashed each rating), and the export reads back; what it refuses is named.

KNOWN = {"expand-demo", "compile-demo"}


def _import_or_refuse(tmp_path: Path, raw: bytes) -> None:
    store = Progress.open(tmp_path / "p.sqlite3").store
    try:
        before = store.reviews()
        try:
            obj = progress.read(raw)
        except progress.NotAProgressFile:
            event("progress refused")
            assert store.reviews() == before
            return
        event("progress imported")
        done = progress.import_into(store, obj, KNOWN)
        exported = progress.export(store, KNOWN)
        assert len(exported["log"]) == len(store.reviews()) >= done.reviews  # no review imported, then dropped
        progress.read(json.dumps(exported).encode())  # the export is a progress file
        for item_id in store.ids():
            store.review(item_id, 3)  # and every card imported can be rated
    finally:
        store.close()
        (tmp_path / "p.sqlite3").unlink()


@FUZZ
@given(data=st.data())
def test_a_progress_file_with_any_one_field_changed_imports_and_exports_or_is_refused(tmp_path, data):
    _import_or_refuse(tmp_path, json.dumps(data.draw(changed(BROWSER_EXPORT)), ensure_ascii=False).encode())


@FUZZ
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_progress_bytes_at_random_are_a_named_error(tmp_path, raw):
    _import_or_refuse(tmp_path, raw)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


_PAST = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2026, 1, 1), timezones=st.just(timezone.utc))


@st.composite
def edge_cards(draw: st.DrawFn) -> dict[str, Any]:
    """A card with every value anywhere in the schema's range, its edges included."""
    def within(low: float, high: float) -> float:
        return draw(st.sampled_from([low, high]) | st.floats(low, high))

    def whole(low: int, high: int) -> int:
        return draw(st.sampled_from([low, high]) | st.integers(low, high))

    last = draw(_PAST)
    return {"due": _iso(last + timedelta(days=within(0, 36_000))), "stability": within(*progress_file.STABILITY),
            "difficulty": within(*progress_file.DIFFICULTY), "elapsed_days": whole(0, progress_file.MAX_DAYS),
            "scheduled_days": whole(0, progress_file.MAX_DAYS), "learning_steps": whole(0, 100),
            "reps": whole(0, 1000), "lapses": whole(0, 1000), "state": whole(1, 3),
            "last_review": draw(st.none() | st.just(_iso(last)))}


@FUZZ
@given(card=edge_cards(), rating=st.integers(1, 4), coverage=st.none() | st.floats(0, 1))
def test_a_card_anywhere_in_the_schemas_range_imports_rates_and_exports(tmp_path, card, rating, coverage):
    review = {"id": "expand-demo", "rating": rating, "at": card["last_review"] or "2026-01-01T00:00:00.000Z"}
    if coverage is not None:
        review["coverage"] = coverage
    _import_or_refuse(tmp_path, json.dumps({"version": 1, "cards": {"expand-demo": card}, "log": [review]}).encode())
