"""Published GPU specifications, one table, each value with the NVIDIA document it comes from.

Two kinds of rows: a compute capability's per-SM limits (the CUDA C++ Programming Guide's table
"Technical Specifications per Compute Capability"), and a product's counts and rates (its
datasheet or architecture whitepaper). Rates are dense: NVIDIA's datasheets print Tensor Core
rates with 2:4 structured sparsity, twice the dense rate, and mark them so; the dense figure is
what a plain GEMM can reach. A claim that uses a value says so (``specs.get``) and its sentence
names the GPU; the page marks it 按规格计算.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snippets._gpu.note import note


@dataclass(frozen=True)
class Spec:
    value: float
    unit: str
    source: str


def _load() -> tuple[dict[str, dict[str, Spec]], dict[str, dict[str, Spec]]]:
    """The table's two groups from ``specs.json`` beside this file: the one place a value is written.

    The site's GPU 规格表 page reads the same file as data (``verify/site/gpuspecs.py``); a claim that
    imports this module is keyed by the file's bytes, so a changed value runs its claims again.
    """
    data = json.loads((Path(__file__).parent / "specs.json").read_text(encoding="utf-8"))
    groups = tuple({name: {field: Spec(v["value"], v["unit"], v["source"]) for field, v in fields.items()}
                    for name, fields in data[key].items()} for key in ("gpus", "capabilities"))
    return groups[0], groups[1]


#: products: their compute capability, counts and rates (dense Tensor Core rates); and the per-SM
#: limits of a compute capability
GPUS, CAPABILITY = _load()


def row(name: str) -> dict[str, Spec]:
    if name in GPUS:
        return GPUS[name]
    if name in CAPABILITY:
        return CAPABILITY[name]
    raise KeyError(f"no GPU or compute capability {name!r} in the spec table (known: {', '.join([*GPUS, *CAPABILITY])})")


def get(ctx: Any, name: str, field: str) -> float:
    """One published value; the claim's record names the GPU (or capability) and the document."""
    try:
        spec = row(name)[field]
    except KeyError:
        raise KeyError(f"spec table: {name!r} has no {field!r} (it has {', '.join(row(name))})") from None
    note(ctx, "spec", gpus=(name if name in GPUS else f"compute capability {name}",))
    ctx.observed.setdefault("sources", {})[f"{name} {field}"] = spec.source
    return spec.value


def capability_of(name: str) -> str:
    """A product's compute capability as the per-SM table's key (``9.0``)."""
    return f"{GPUS[name]['capability'].value:.1f}"


def table() -> list[dict[str, Any]]:
    """Every value with its unit and source, for the page that shows the table."""
    out = []
    for group in (GPUS, CAPABILITY):
        for name, fields in group.items():
            for key, spec in fields.items():
                out.append({"gpu": name, "field": key, "value": spec.value, "unit": spec.unit, "source": spec.source})
    return out
