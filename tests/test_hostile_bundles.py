"""Bundles are untrusted input: a hostile or careless one is refused whole, naming the field.

Each case is a file built here from a real recording of a tiny project, then changed the way a
fork or a broken shard machine could change it. Nothing outside ``evidence/`` is written, nothing
already recorded changes, and a date a bundle wrote itself never decides between a pass and a fail.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests._project import cold_cache, recorded_bundle, start_verify, tiny_project
from verify import settings as settings_mod
from verify.core import evidence
from verify.errors import ClaimError
from verify.core.records import MAX_OBSERVED
from verify.running import record
from verify.settings import Settings
from verify.site import fences, session
from verify.storage import bundles


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory) -> dict[str, Any]:
    """A bundle's content, recorded once for the module: the tiny project's two claims, both passing."""
    return recorded_bundle(tmp_path_factory.mktemp("run"))


@pytest.fixture
def project(tmp_path) -> Path:
    root = tiny_project(tmp_path / "p")
    (root / "evidence").mkdir()
    return root


def _merge(root: Path, tmp_path: Path, data: Any, name: str = "hostile.json", raw: bytes | None = None):
    bundle = tmp_path / name
    bundle.write_bytes(raw if raw is not None else json.dumps(data).encode())
    return bundles.merge(Settings.for_root(root), [bundle])


def _files(tmp_path: Path) -> dict[str, bytes]:
    """Every file the test can see but the project's caches (the registry keeps its scan there)."""
    return {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in tmp_path.rglob("*")
            if p.is_file() and ".cache" not in p.parts}


def _refused(root: Path, tmp_path: Path, data: Any, match: str, raw: bytes | None = None) -> None:
    before = _files(tmp_path)
    with pytest.raises(ClaimError, match=match):
        _merge(root, tmp_path, data, raw=raw)
    after = _files(tmp_path)
    before.pop("hostile.json", None)
    after.pop("hostile.json")
    assert after == before  # nothing written or changed, in evidence/ or anywhere else


def test_a_device_key_that_climbs_out_of_evidence_is_refused(project, tmp_path, recorded_run):
    data = json.loads(json.dumps(recorded_run))
    data["device_key"] = "../../outside/pwned"
    for rec in data["claims"].values():
        rec["provenance"]["device_key"] = data["device_key"]
    _refused(project, tmp_path, data, r"hostile.json: not a recorded-evidence file: device_key: expected str matching regex")
    assert not (tmp_path / "outside").exists()


@pytest.mark.parametrize("date, what", [("9999-12-31T00:00:00+00:00", "outside 2000-01-01"),
                                        ("0001-01-01T00:00:00+05:00", "outside 2000-01-01"),
                                        ("2026-12-01T10:00:00", "no UTC offset"),
                                        ("yesterday", "not an ISO 8601 date")])
def test_a_record_dated_out_of_range_is_refused(project, tmp_path, recorded_run, date, what):
    data = json.loads(json.dumps(recorded_run))
    data["claims"]["tiny.stride"]["provenance"]["date"] = date
    _refused(project, tmp_path, data, rf"claims.tiny.stride.provenance.date: .*{what}")


def test_a_pass_never_replaces_a_current_failure_whatever_its_date(project, tmp_path, recorded_run):
    failing = json.loads(json.dumps(recorded_run))
    failing["claims"]["tiny.stride"]["observed"] = {"stride": [9, 9]}  # judged again: a failure
    report = _merge(project, tmp_path, failing, "real-failure.json")
    assert [c for c, _, _ in report.failing] == ["tiny.stride"]
    passing = json.loads(json.dumps(recorded_run))  # a pass written later on the command line, dated later
    report = _merge(project, tmp_path, passing, "later-pass.json")
    assert [c for c, _, _ in report.failing] == ["tiny.stride"]
    stored = json.loads(next((project / "evidence").glob("*.json")).read_text())
    assert stored["claims"]["tiny.stride"]["observed"] == {"stride": [9, 9]}


def test_observed_values_over_the_runners_cap_are_refused(project, tmp_path, recorded_run):
    data = json.loads(json.dumps(recorded_run))
    data["claims"]["tiny.stride"]["observed"]["padding"] = "x" * (MAX_OBSERVED + 1)
    _refused(project, tmp_path, data, r"claims.tiny.stride: not an evidence record: observed: [\d,]+ bytes of JSON, over the")


def test_text_that_is_not_utf8_or_a_key_given_twice_is_a_named_error(project, tmp_path, recorded_run):
    _refused(project, tmp_path, None, r"hostile.json: not UTF-8 text \(byte 1\)", raw=b'{\xff"claims": {}}')
    text = json.dumps(recorded_run)
    twice = text.replace('"device_key":', '"device_key": "cpu-x", "device_key":', 1).encode()
    _refused(project, tmp_path, None, r"hostile.json: .*'device_key' appears twice", raw=twice)


def test_a_duration_that_is_not_a_number_is_refused(project, tmp_path, recorded_run):
    data = json.loads(json.dumps(recorded_run))
    data["claims"]["tiny.error"]["duration_s"] = "<img src=x>"
    _refused(project, tmp_path, data, r"claims.tiny.error: not an evidence record: duration_s: expected float \| null, got str")


def _git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": os.environ["PATH"], "HOME": str(root)}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("commit, history", [("fabricated000", "不在本仓库历史中"), ("HEAD", "在本仓库历史中")])
def test_a_merged_record_says_which_bundle_and_commit_it_came_from(project, tmp_path, recorded_run, commit, history,
                                                                  monkeypatch):
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "tiny")
    data = json.loads(json.dumps(recorded_run))
    data["git_commit"] = _git(project, "rev-parse", "--short=12", "HEAD") if commit == "HEAD" else commit
    _merge(project, tmp_path, data, "shard-1-of-2.json")
    stored = json.loads(next((project / "evidence").glob("*.json")).read_text())
    assert stored["claims"]["tiny.stride"]["origin"]["bundle"] == "shard-1-of-2.json"

    settings = Settings.for_root(project, {"VERIFY_CACHE_DIR": str(cold_cache(tmp_path / "build-cache")),
                                          "VERIFY_NO_RUN": "1"})
    monkeypatch.setattr(settings_mod, "_site", settings)
    monkeypatch.setattr(session, "RECHECK_S", 0.0)
    sess = session.get()
    row = next(r.to_json() for r in sess.ledger() if r.id == "tiny.stride")
    assert row["status"] == evidence.VERIFIED_HERE  # the same environment: counted as this machine's
    assert row["origin"] == {"bundle": "shard-1-of-2.json", "commit": data["git_commit"],
                             "created": data["created"], "in_history": commit == "HEAD"}
    said = f"合并自 shard-1-of-2.json（其提交 {data['git_commit']}，{history}）"
    assert said in fences.claim_fence("tiny.stride", "claim", "claim", {}, None)
    assert said in fences.ledger_fence("", "ledger", "ledger", {}, None)


def test_a_record_the_runner_made_has_no_origin(tmp_path):
    root = tiny_project(tmp_path / "p")
    settings = Settings.for_root(root, {"VERIFY_CACHE_DIR": str(cold_cache(tmp_path / "cache"))})
    path, _ = record.record(settings, jobs=1)
    assert all("origin" not in r for r in json.loads(path.read_text())["claims"].values())


def test_stale_records_of_a_bundle_are_named_not_dropped_silently(project, tmp_path, recorded_run):
    _merge(project, tmp_path, recorded_run, "fresh.json")
    old = json.loads(json.dumps(recorded_run))
    for rec in old["claims"].values():
        rec["snippet_hash"] = "0" * 16  # made from a snippet that has changed since
    report = _merge(project, tmp_path, old, "old-run.json")
    assert sorted((c, d, Path(n).name) for c, d, n in report.dropped) == sorted(
        (cid, old["device_key"], "old-run.json") for cid in old["claims"])
    stored = json.loads(next((project / "evidence").glob("*.json")).read_text())
    assert {r["origin"]["bundle"] for r in stored["claims"].values()} == {"fresh.json"}

    proc = start_verify(project, cold_cache(tmp_path / "cli-cache"), "merge", str(tmp_path / "old-run.json"))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert f"stale 2 record(s) of {tmp_path / 'old-run.json'} on {old['device_key']}" in " ".join(out.split())


def test_a_report_names_no_path_of_this_machine(tmp_path):
    from verify.core.records import ExceptionInfo, Machine, Outcome, Provenance, WorkerResult  # noqa: PLC0415

    root = tmp_path / "checkout"
    home = str(Path.home())
    record = evidence.make(
        _spec_of_tiny(), "k", Outcome.ERROR, f"FileNotFoundError: {root}/snippets/x.py", Provenance(),
        WorkerResult("tiny.stride", observed={"where": f"{root}/.cache/tmp/run-1"},
                              output=f"warning at {home}/.pyenv/lib/python3.11/site.py",
                              exception=ExceptionInfo("E", "m", f'File "{root}/snippets/x.py", line 3')))
    path = bundles.write(tmp_path / "out" / "b.json", Machine(device_key="cpu-test"), {"tiny.stride": record},
                         shard=None, file_seconds={}, wall_s=1.0, git_commit="0" * 40, created="2026-12-06T00:00:00+00:00",
                         root=root)
    text = path.read_text()
    assert str(root) not in text and (home in ("", "/") or home not in text)
    assert "<checkout>/snippets/x.py" in text and "~/.pyenv" in text
    assert path.stat().st_mode & 0o777 == 0o644


def _spec_of_tiny():
    from verify.core.registry import ClaimSpec  # noqa: PLC0415

    return ClaimSpec(id="tiny.stride", question="tiny", statement="s", kind="fact", snippet="snippets/tiny/basic.py",
                     line=1, expect={"stride": [0, 1]})
