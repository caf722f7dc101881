"""The site's ``evidence.json`` is exactly what it was when ledger rows were dicts.

The rows are typed now (:class:`verify.site.session.LedgerRow`); readers of ``evidence.json``
(the quiz, other tools) depend on its bytes. The reference below is the dict-making code the rows
replaced, kept here as the format's specification: a tiny project with records made here, a record
merged from another machine's bundle (with its origin) and one whose snippet changed since.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests._project import cold_cache, recorded_bundle, tiny_project
from verify import hooks
from verify import settings as settings_mod
from verify.core import evidence
from verify.settings import Settings
from verify.site import session
from verify.storage import bundles, git

OTHER = "cpu-other-machine"
LEDGER_FORMAT = 1


def _origin(sess: session.Session, record: Any) -> dict[str, Any] | None:
    if record is None or record.origin is None:
        return None
    commit = record.origin.commit
    history = git.in_history(sess.root, commit) if commit else None
    return {"bundle": record.origin.bundle, "commit": commit, "created": record.origin.created, "in_history": history}


def _reference(sess: session.Session) -> dict[str, Any]:
    """``evidence.json`` as the dict-making code wrote it."""
    rows = []
    out = sess.outcome
    for cid, spec in sorted(out.registry.claims.items()):
        record = out.local.get(cid)
        prov = record.provenance if record else None
        elsewhere = []
        for dev, st in sess.remote_statuses(cid).items():
            other = out.remote[dev][cid]
            elsewhere.append({"device_key": dev, "status": st, "device": other.provenance.device_name,
                              "torch": other.provenance.torch, "date": other.provenance.date,
                              "snippet_hash": other.snippet_hash, "observed": other.observed,
                              "message": other.message, "origin": _origin(sess, other)})
        rows.append({
            "id": cid, "question": spec.question, "statement": out.sentence(cid),
            "statement_source": spec.statement, "kind": spec.kind,
            "page": sess.page_of(cid), "snippet": spec.snippet, "needs": list(spec.needs),
            "status": out.status(cid), "outcome": record.outcome.value if record else None,
            "message": record.message if record else None, "expected": spec.expected_summary(),
            "observed": record.observed if record else None, "device": prov.device_name if prov else None,
            "torch": prov.torch if prov else None, "torch_build": prov.torch_build if prov else None,
            "snippet_hash": out.registry.key(spec.id), "date": prov.date if prov else None,
            "duration_s": record.duration_s if record else None, "origin": _origin(sess, record),
            "elsewhere": elsewhere,
        })
    probe = out.probe.to_json()
    return {"format": LEDGER_FORMAT,
            "built_on": {k: probe.get(k) for k in ("device_name", "device_key", "torch", "torch_build", "python", "os")},
            "claims": rows}


def _git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": os.environ["PATH"], "HOME": str(root)}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout.strip()


def test_evidence_json_is_byte_for_byte_what_the_dict_rows_made(tmp_path, monkeypatch):
    data = recorded_bundle(tmp_path / "run")
    root = tiny_project(tmp_path / "p", extra={"snippets/tiny/more.py": (
        'from verify.claim import claim\n\n\n@claim("tiny.cuda", question="tiny", statement="需要 GPU。", '
        'expect={"n": 1}, needs=["cuda"])\ndef _(ctx):\n    return {"n": 1}\n')})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "tiny")
    data["git_commit"] = _git(root, "rev-parse", "--short=12", "HEAD")
    data["device_key"] = OTHER  # the same records, as another machine's bundle
    data["machine"] = dict(data["machine"], device_name="Other CPU")
    for rec in data["claims"].values():
        rec["provenance"].update(device_key=OTHER, device_name="Other CPU")
    data["claims"]["tiny.error"]["snippet_hash"] = "0" * 16  # made from a snippet that has changed since
    bundle = tmp_path / "other.bundle.json"
    bundle.write_text(json.dumps(data), encoding="utf-8")
    report = bundles.merge(Settings.for_root(root), [bundle])
    assert set(report.written) == {OTHER} and report.stale == [("tiny.error", OTHER)]

    settings = Settings.for_root(root, {"VERIFY_CACHE_DIR": str(cold_cache(tmp_path / "cache")), "VERIFY_JOBS": "1"})
    monkeypatch.setattr(settings_mod, "_site", settings)
    monkeypatch.setattr(session, "RECHECK_S", 0.0)
    sess = session.get()
    rows = {r.id: r for r in sess.ledger()}
    assert rows["tiny.stride"].elsewhere[0].origin is not None and rows["tiny.stride"].elsewhere[0].origin.in_history
    assert rows["tiny.cuda"].status == evidence.NEEDS_CUDA and rows["tiny.cuda"].elsewhere == ()

    new = json.dumps(hooks.ledger_document(sess), ensure_ascii=False, indent=1)
    assert new == json.dumps(_reference(sess), ensure_ascii=False, indent=1)


def test_the_ledger_shows_observations_as_a_reader_reads_them():
    """Key and value per line: units and digits, a timing as its median, a dict as pairs; not a repr."""
    from verify.site.fences import observed_items  # noqa: PLC0415

    items, more = observed_items({"stride": [0, 1], "same": True, "bytes_moved": 123456.789,
                                  "t": {"median_s": 2.5e-6, "spread": 0.1, "n": 9},
                                  "per_dtype": {"fp16": 0.00123456, "bf16": 2.0}, "evidence": {"kind": "spec"}})
    assert items == [("stride", "(0, 1)"), ("same", "是"), ("bytes_moved", "123,500"),
                     ("t", "中位数 2.5 µs（IQR/中位数 10%，n=9）"), ("per_dtype", "fp16: 0.00123；bf16: 2")]
    assert more == 0  # how it was made (evidence) is not an observation
    many, more = observed_items({f"k{i}": i for i in range(12)}, limit=8)
    assert len(many) == 8 and more == 4


def test_a_list_of_dicts_reads_without_a_repr():
    from verify.site.fences import observed_items  # noqa: PLC0415

    items, _ = observed_items({"fx_cache": [{"miss": 1}, {"hit": 1}], "limits": [{"blocks": 32, "shared": 6.0}]})
    assert items == [("fx_cache", "({miss: 1}, {hit: 1})"), ("limits", "({blocks: 32, shared: 6})")]
