"""Shards and merged evidence: ``verify run --shard K/N``, ``verify merge``, ``snippets/durations.json``.

The end-to-end test runs two shards of a small project in parallel processes, each from a cold
cache of its own (as two CI machines would), merges their bundles, and compares the ledger the
build then shows with the ledger of one unsharded run.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests._project import MKDOCS_YML, cold_cache, question_page, settings, start_verify, write
from verify.core import evidence
from verify.errors import ClaimError
from verify.running import shards
from verify.settings import Settings
from verify.site import session
from verify.storage import bundles, scan

Q = "shardq"


def _snippet(name: str, values: list[int], work: int = 0) -> str:
    """A snippet file with one claim per value; ``work`` loops of arithmetic make a claim take a while."""
    out = ["from verify.claim import claim", "", f'Q = "{Q}"', ""]
    for i, v in enumerate(values):
        out += [f'@claim("{Q}.{name}-{i}", question=Q, statement="{name} {i} 的值是 {{n}}。", expect={{"n": {v}}})',
                "def _(ctx):", f"    total = sum(range({work}))", f"    return {{'n': {v} + 0 * total}}", "", ""]
    return "\n".join(out)


FILES = {"a": ([1, 2, 3], 3_000_000), "b": ([4, 5], 1_000_000), "c": ([6], 0), "d": ([7, 8, 9, 10], 500_000)}


def _project(root: Path) -> Path:
    fences = "\n".join(f"```claim\n{Q}.{name}-{i}\n```\n" for name, (vals, _) in FILES.items()
                       for i in range(len(vals)))
    files = {"mkdocs.yml": MKDOCS_YML, "docs/index.md": "# 首页\n",
             f"docs/questions/{Q}.md": question_page(fences, qid=Q).replace("{qid}", Q)}
    files.update({f"snippets/{Q}/{name}.py": _snippet(name, vals, work) for name, (vals, work) in FILES.items()})
    return write(root, files)


def _finish(proc: subprocess.Popen[str]) -> str:
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    return out


def _ledger(root: Path, cache: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    """What a build that runs nothing shows: status and observed keys of every claim."""
    sess = session.Session(Settings.for_root(root, {"VERIFY_CACHE_DIR": str(cache), "VERIFY_NO_RUN": "1"}), run=False)
    return {row.id: (row.status, tuple(sorted(row.observed or {}))) for row in sess.ledger()}


# --- the split ------------------------------------------------------------------------------------

def test_shard_text_is_checked():
    assert shards.parse("2/4") == (2, 4)
    for bad in ("0/2", "3/2", "1", "a/b", "1/0"):
        with pytest.raises(ClaimError, match="expected K/N"):
            shards.parse(bad)


def test_the_plan_covers_every_file_once_and_deals_longest_first():
    weights = {"f1": 10.0, "f2": 9.0, "f3": 6.0, "f4": 5.0, "f5": 4.0, "f6": 1.0}
    plan = shards.plan(weights, 2)
    assert sorted(f for s in plan.shards for f in s) == sorted(weights)
    # longest first, each to the lighter shard (ties to the first): 10 | 9, 6 | 5 onto 10 | 4 onto 15 | 1 onto 15
    assert plan.shards == (("f1", "f4", "f5"), ("f2", "f3", "f6")) and plan.loads == (19.0, 16.0)
    assert plan == shards.plan(dict(reversed(list(weights.items()))), 2)  # the order files come in does not matter
    assert shards.plan(weights, 6).balance == pytest.approx(10.0 / (35.0 / 6))


def test_weights_come_from_recorded_durations(tmp_path):
    root = _project(tmp_path)
    reg = scan.load_registry(settings(root))
    (root / "snippets" / shards.FILE).write_text(json.dumps({
        "format": 1, "claims": {f"{Q}.a-{i}": 2.0 for i in range(3)} | {f"{Q}.c-0": 0.0},
        "files": {f"snippets/{Q}/a.py": 7.5}}))
    durations = shards.Durations.load(settings(root))
    got = shards.weights(reg, durations)
    lanes = shards.LANES
    assert got[f"snippets/{Q}/a.py"] == 7.5 / lanes  # its claims' 6 s plus the 1.5 s start-up it recorded
    assert got[f"snippets/{Q}/c.py"] == 0.0  # recorded as skipped here: no worker starts
    assert got[f"snippets/{Q}/b.py"] == (2 * 2.0 + 1.5) / lanes  # unknown: the typical claim and start-up


def test_timing_claims_weigh_their_whole_time_because_they_run_alone(tmp_path):
    root = write(tmp_path, {"snippets/p/a.py": "from verify.claim import claim\n\n"
                            "@claim('p.fact', question='p', statement='s', expect={'x': 1})\ndef _(ctx):\n    pass\n\n"
                            "@claim('p.perf', question='p', statement='s', kind='perf', expect={'x': 1})\n"
                            "def _(ctx):\n    pass\n"})
    durations = shards.Durations({"p.fact": 4.0, "p.perf": 4.0}, {"snippets/p/a.py": 9.0})
    got = shards.weights(scan.load_registry(settings(root)), durations)
    assert got == {"snippets/p/a.py": (4.0 + 1.0) / shards.LANES + 4.0}


def test_a_bad_durations_file_names_itself(tmp_path):
    root = _project(tmp_path)
    (root / "snippets" / shards.FILE).write_text(json.dumps({"claims": {"x": "slow"}}))
    with pytest.raises(ClaimError, match=r"snippets/durations.json: not a durations file: claims\[...\]: expected float"):
        shards.Durations.load(settings(root))


# --- shards, bundles, merge -----------------------------------------------------------------------

@pytest.mark.slow
def test_two_parallel_shards_merged_show_what_one_run_shows(tmp_path):
    root = _project(tmp_path / "repo")
    caches = [cold_cache(tmp_path / f"cache-{k}") for k in (1, 2)]
    whole = cold_cache(tmp_path / "cache-whole")
    procs = [start_verify(root, caches[k - 1], "run", "--shard", f"{k}/2", "--bundle", str(tmp_path / f"s{k}.json"))
             for k in (1, 2)]
    one = start_verify(root, whole, "run", "--bundle", str(tmp_path / "whole.json"))
    for proc in [*procs, one]:
        _finish(proc)
    parts = [json.loads((tmp_path / f"s{k}.json").read_text()) for k in (1, 2)]
    assert all(p["kind"] == bundles.KIND and p["shard"] == [k, 2] for k, p in enumerate(parts, 1))
    held = [set(p["claims"]) for p in parts]
    assert held[0] and held[1] and not held[0] & held[1]
    assert held[0] | held[1] == set(scan.load_registry(settings(root)).claims)
    assert {f for p in parts for f in p["files"]} == {f"snippets/{Q}/{n}.py" for n in FILES}  # each ran whole

    expected = _ledger(root, whole)
    assert {status for status, _ in expected.values()} == {evidence.VERIFIED_HERE}
    report = bundles.merge(settings(root), [tmp_path / "s1.json", tmp_path / "s2.json"])
    assert list(report.written) == [parts[0]["device_key"]] and not report.failing and not report.stale
    assert not report.missing
    assert _ledger(root, cold_cache(tmp_path / "cache-build")) == expected

    # the durations the shards recorded balance the next split
    durations_cmd = start_verify(root, whole, "durations", str(tmp_path / "s1.json"), str(tmp_path / "s2.json"))
    _finish(durations_cmd)
    recorded = shards.Durations.load(settings(root))
    assert set(recorded.files) == {f"snippets/{Q}/{n}.py" for n in FILES}
    assert recorded.claims[f"{Q}.a-0"] > recorded.claims[f"{Q}.c-0"]  # the long loop took longer


def _bundle_of_tiny_run(tmp_path: Path) -> tuple[Path, Path]:
    root = _project(tmp_path / "repo")
    _finish(start_verify(root, cold_cache(tmp_path / "cache-run"), "run", "--bundle", str(tmp_path / "b.json")))
    return root, tmp_path / "b.json"


@pytest.mark.slow
def test_merge_marks_stale_fails_loudly_and_never_half_writes(tmp_path):
    root, bundle = _bundle_of_tiny_run(tmp_path)
    build_cache = cold_cache(tmp_path / "cache-build")

    # one shard of two merged alone: the claims of the other are reported, not silently absent
    only = json.loads(bundle.read_text())
    only["claims"] = {cid: rec for cid, rec in only["claims"].items() if not cid.startswith(f"{Q}.d-")}
    half = tmp_path / "half.json"
    half.write_text(json.dumps(only))
    assert bundles.merge(settings(root), [half]).missing == [f"{Q}.d-{i}" for i in range(4)]

    # a snippet edited after its bundle was made: its claims are stale, the others still verified
    path = root / "snippets" / Q / "b.py"
    path.write_text(path.read_text() + "\nEDITED = 1  # code changed after the run\n")
    report = bundles.merge(settings(root), [bundle])
    assert sorted(report.stale) == sorted((f"{Q}.b-{i}", report.bundles[0][1]) for i in range(2))
    ledger = _ledger(root, build_cache)
    assert ledger[f"{Q}.b-0"][0] == evidence.STALE and ledger[f"{Q}.a-0"][0] == evidence.VERIFIED_HERE
    assert not session.Session(Settings.for_root(root, {"VERIFY_CACHE_DIR": str(build_cache)}), run=False).failures

    # a forged pass: the observation contradicts the claim; judged again, it fails the build
    data = json.loads(bundle.read_text())
    data["claims"][f"{Q}.a-0"]["observed"] = {"n": 99}
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(data))
    report = bundles.merge(settings(root), [forged])
    assert [c for c, _, _ in report.failing] == [f"{Q}.a-0"]
    sess = session.Session(Settings.for_root(root, {"VERIFY_CACHE_DIR": str(build_cache)}), run=False)
    assert any(f.claim == f"{Q}.a-0" for f in sess.failures)

    # the newer, current record of a claim wins over an older one
    report = bundles.merge(settings(root), [bundle, forged])
    assert [c for c, _, _ in report.failing] == [f"{Q}.a-0"]  # same date: the later bundle
    before = {p.name: p.read_bytes() for p in (root / "evidence").iterdir()}

    # a record of a claim no snippet declares any more stays in the device file, and is not counted
    device_file = next((root / "evidence").glob("*.json"))
    data_on_disk = json.loads(device_file.read_text())
    data_on_disk["claims"]["gone.claim"] = {**data_on_disk["claims"][f"{Q}.c-0"], "id": "gone.claim"}
    device_file.write_text(json.dumps(data_on_disk))
    report = bundles.merge(settings(root), [bundle])
    assert "gone.claim" in json.loads(device_file.read_text())["claims"]
    assert all(cid != "gone.claim" for cid, _ in report.stale)
    before = {p.name: p.read_bytes() for p in (root / "evidence").iterdir()}

    # a broken bundle is named, with the claim, and nothing recorded is lost
    data["claims"][f"{Q}.c-0"] = {"id": f"{Q}.c-0"}
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    proc = start_verify(root, build_cache, "merge", str(bundle), str(broken))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2 and f"broken.json: claims.{Q}.c-0: not an evidence record" in out
    assert {p.name: p.read_bytes() for p in (root / "evidence").iterdir()} == before
