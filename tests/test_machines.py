"""Every machine we have observations from, judged by today's claims.

The committed files under ``evidence/`` hold other machines' records (re-keyed bundles of
``../shared/machines/`` and recordings); the bundles in ``../shared/machines/`` beside the checkout,
where there is one, are judged as they are too. A record whose measuring code is unchanged is judged by
the current expectation: an expectation that fails on one of them is wrong, and so is a bound of a
measured claim (``perf`` or ``measured``) that keeps less than 25% room there.
"""

from __future__ import annotations

import pytest

from tests._project import REPO
from verify.core import evidence, room
from verify.core.records import Outcome
from verify.settings import Settings
from verify.storage import recorded, scan

SETTINGS = Settings.for_root(REPO)
REGISTRY = scan.load_registry(SETTINGS)
SHARED = REPO.parent / "shared" / "machines"
MACHINES = recorded.load_all(SETTINGS)
MACHINES.update({f"shared:{p.name}": recorded.read(p, f"../shared/machines/{p.name}").claims
                 for p in sorted(SHARED.glob("*.bundle.json"))})


def _current(device: str):
    for cid, record in sorted(MACHINES[device].items()):
        if evidence.is_current(REGISTRY, record):
            yield cid, evidence.rejudge(REGISTRY.claims[cid], record)


def test_observations_of_other_machines_are_committed():
    committed = [d for d in MACHINES if not d.startswith("shared:")]
    assert len(committed) >= 3, f"expected at least three machines under evidence/, found {committed}"


@pytest.mark.parametrize("device", sorted(MACHINES))
def test_every_current_record_passes_on(device):
    bad = [f"{cid}: {r.outcome}: {r.message}" for cid, r in _current(device) if r.outcome.bad]
    assert not bad, f"on {device} ({MACHINES[device] and next(iter(MACHINES[device].values())).provenance.device_name}):\n" + "\n".join(bad)
    if not device.startswith("shared:"):  # a shared bundle made before records were keyed by measuring code
        # is current only as its re-keyed copy under evidence/
        assert sum(1 for _ in _current(device)) > 0, f"no record of {device} is current: re-key or record it again"


@pytest.mark.parametrize("device", sorted(MACHINES))
def test_measured_bounds_keep_room_on(device):
    tight = []
    for cid, record in _current(device):
        spec = REGISTRY.claims[cid]
        if not room.is_measured(spec.kind) or record.outcome is not Outcome.PASS:
            continue
        for m in room.margins(spec.expect, record.observed):
            if m.room < room.ROOM:
                tight.append(f"{cid}: {m.key} {m.bound}, observed {m.observed:.4g} ({m.room:.0%} room)")
    assert not tight, f"measured bounds with less than {room.ROOM:.0%} room on {device}:\n" + "\n".join(tight)


def test_room_is_measured_from_the_bound():
    ms = {m.key: m.room for m in room.margins(
        {"a": {">=": 2.0}, "b": {"<": 1.0}, "c": {"between": [0.5, 2.0]}, "d": {"approx": [16, 0.05]}, "e": 3},
        {"a": 3.0, "b": 0.8, "c": 1.5, "d": 16.1, "e": 3})}
    assert ms == {"a": pytest.approx(0.5), "b": pytest.approx(0.2), "c": pytest.approx(0.25)}


def test_every_claim_a_gpu_is_not_needed_for_has_a_current_committed_pass():
    """A reader's install (``make read``, no torch) shows committed evidence only: every claim that can run
    without a GPU needs a current, passing record under ``evidence/`` from some machine. CUDA claims wait
    for a GPU recording."""
    committed = {d: recs for d, recs in MACHINES.items() if not d.startswith("shared:")}

    def passes(cid: str) -> bool:
        spec = REGISTRY.claims[cid]
        return any(r is not None and evidence.is_current(REGISTRY, r) and evidence.rejudge(spec, r).outcome is Outcome.PASS
                   for r in (recs.get(cid) for recs in committed.values()))

    missing = sorted(cid for cid, spec in REGISTRY.claims.items() if "cuda" not in spec.needs and not passes(cid))
    assert not missing, (f"{len(missing)} claim(s) have no current passing record under evidence/ (run `verify report` "
                         "and `verify merge` its bundle, or `verify record`): " + ", ".join(missing))
