"""The read model: every claim's evidence here and elsewhere, and what a reader is told of it.

``verify.running.engine.verify`` produces a :class:`Ledger` (cached, run and recorded records,
judged); the site, the quiz and the commands read it: a claim's status, a bound value with where
it came from, the sentence with its values filled in. Nothing here runs a claim.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verify.core import binding, evidence, states
from verify.errors import Failure
from verify.core.records import Evidence, Machine
from verify.core.registry import Registry
from verify.settings import Settings


@dataclass
class Ledger:
    """What one verification found: every claim's evidence here, and what other machines recorded."""

    settings: Settings
    registry: Registry
    probe: Machine  # this machine, as the probe found it
    local: dict[str, Evidence]
    remote: dict[str, dict[str, Evidence]]
    failures: list[Failure] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: wall seconds of each snippet file whose every runnable claim ran this time (worker start-up included)
    file_seconds: dict[str, float] = field(default_factory=dict)
    #: claims that were to run but got no record: the run's deadline came first
    left: list[str] = field(default_factory=list)
    _sentences: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def status(self, claim_id: str) -> str:
        return evidence.status_of(self.local.get(claim_id), self.registry.key(claim_id),
                                  local=True)

    def value(self, ref: binding.Ref) -> tuple[str, str, str]:
        """(text, status, where) of one bound value: from this machine's evidence, else from a current
        record of another device (or from the device ``ref`` names). ``"—"`` while nothing observed it;
        :class:`binding.BindError` when the claim or the key does not exist.
        """
        spec = self.registry.claims.get(ref.claim)
        if spec is None:
            raise binding.BindError(f"no snippet declares claim {ref.claim!r}")
        current = self.registry.key(spec.id)
        if ref.device and ref.device != self.probe.device_key:
            if ref.device not in self.remote:
                raise binding.BindError(f"no evidence is recorded for device {ref.device!r} "
                                        f"(recorded: {', '.join(sorted(self.remote)) or 'none'})")
            record = self.remote[ref.device].get(ref.claim)
            if record is None:
                raise binding.BindError(f"{ref.device} has no record of claim {ref.claim!r}")
            status = evidence.status_of(record, current, local=False)
            return binding.resolve(record.observed, ref.key, ref.spec), status, where(record)
        record, status = self.best_record(ref.claim)
        if record is None:
            return "—", status, ""
        return binding.resolve(record.observed, ref.key, ref.spec), status, where(record)

    def best_record(self, claim_id: str) -> tuple[Evidence | None, str]:
        """The record a reader is shown for a claim, and its status: the one rule of which record wins.

        This machine's record when it observed something (verified, or failed: a failure shows its
        values); else the first current record of another device whose state shows values; else no
        record, with this machine's status (stale, not run, needs CUDA, not applicable).
        """
        local = self.local.get(claim_id)
        status = self.status(claim_id)
        if local is not None and local.observed and (states.observed(status) or status == evidence.FAILED):
            return local, status
        current = self.registry.key(claim_id)
        for _dev, records in sorted(self.remote.items()):  # not observed here: a current record elsewhere
            other = records.get(claim_id)
            if other is not None and states.observed(st := evidence.status_of(other, current, local=False)):
                return other, st
        return None, status

    def remote_statuses(self, claim_id: str) -> dict[str, str]:
        """device key -> status of each other device's record of the claim."""
        current = self.registry.key(claim_id)
        return {dev: evidence.status_of(records.get(claim_id), current, local=False)
                for dev, records in self.remote.items() if claim_id in records}

    def waiting(self, claim_id: str) -> tuple[str, str] | None:
        """``(where it runs, what it measures)`` for a claim that nothing has observed and whose function
        says in its docstring what it measures: read instead of a sentence with holes. None otherwise."""
        spec = self.registry.claims[claim_id]
        if not spec.pending:
            return None
        record, status = self.best_record(claim_id)
        if record is not None or evidence.FAILED in self.remote_statuses(claim_id).values():
            return None  # observed; or recorded elsewhere and failed, which the sentence's marks say
        row = states.get(status)
        return row.waiting or row.label, spec.pending

    def sentence(self, claim_id: str) -> str:
        """The claim's statement as plain text with its values filled in (the ledger, quiz and cards);
        ``GPU 上待测：<what it measures>`` while nothing has observed it (:meth:`waiting`)."""
        if claim_id not in self._sentences:  # asked by the ledger, the evidence lists, the quiz and the cards
            spec = self.registry.claims[claim_id]
            waiting = self.waiting(claim_id)
            self._sentences[claim_id] = f"{waiting[0]}：{waiting[1]}" if waiting else binding.fill(
                spec.statement, lambda key, fmt: self.value(binding.Ref(claim_id, key, fmt))[0])
        return self._sentences[claim_id]

    def sentences(self) -> dict[str, str]:
        return {cid: self.sentence(cid) for cid in sorted(self.registry.claims)}


def where(record: Evidence) -> str:
    """`` · device · torch · date`` of a record, for a marker's title."""
    prov = record.provenance
    parts = [prov.device_name, f"torch {prov.torch}" if prov.torch else None, (prov.date or "")[:10]]
    return " · " + " · ".join(p for p in parts if p)


