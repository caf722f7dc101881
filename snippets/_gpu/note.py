"""What a GPU-side helper tells the record: one kind of evidence per claim, and what it used."""

from __future__ import annotations

from typing import Any

KINDS = ("compiled", "simulated", "spec")


def note(ctx: Any, kind: str, *, targets: tuple[str, ...] = (), tools: dict[str, str] | None = None,
         gpus: tuple[str, ...] = ()) -> None:
    """Add to the claim's ``evidence`` observation.

    A claim is of one kind: compiling and simulating are two claims. Published specs may feed either
    (occupancy from a compiled kernel's registers): the claim stays compiled or simulated, and names the GPU.
    """
    if kind not in KINDS:
        raise ValueError(f"evidence kind {kind!r} is not one of {KINDS}")
    ev = ctx.observed.setdefault("evidence", {"kind": kind, "targets": [], "tools": {}, "gpus": []})
    if ev["kind"] == "spec" and kind != "spec":
        ev["kind"] = kind
    elif kind != "spec" and ev["kind"] != kind:
        raise ValueError(f"claim mixes {ev['kind']} and {kind} evidence: make them two claims")
    for name, items in (("targets", targets), ("gpus", gpus)):
        ev[name] += [t for t in items if t not in ev[name]]
    ev["tools"].update(tools or {})
