"""Another draw of every claim's randomness, for ``verify stress``: each seed a claim sets is shifted.

Claims seed their own generators (``torch.manual_seed(0)``, ``torch.Generator().manual_seed(1)``,
``np.random.default_rng(0)``), and the worker seeds torch before each claim. A bound set from one
draw holds for that draw only, so a stress variant runs the claim under other seeds without editing
it (an edit would change its key and make every machine's record stale): inside the worker, every
seed a claim passes is shifted by the same offset. Equal seeds stay equal and different ones stay
different, so a claim that seeds two generators alike to compare them still compares like with like.

Processes a claim starts (``torch.multiprocessing.spawn``) import torch afresh and are not shifted.
"""

from __future__ import annotations

import random
from typing import Any

#: how far apart the draws of two shifts are: far from the small seeds claims use (0, 1, rank + 10)
STRIDE = 1_000_003


def shifted(seed: Any, shift: int) -> Any:
    return seed + shift * STRIDE if isinstance(seed, int) and not isinstance(seed, bool) else seed


def install(shift: int) -> None:
    """Shift every seed set from now on in this process by ``shift`` draws; 0 leaves them as they are."""
    if not shift:
        return
    import torch  # noqa: PLC0415

    manual_seed = torch.manual_seed

    def torch_seed(seed: Any) -> Any:
        return manual_seed(shifted(seed, shift))

    base = torch.Generator

    class _Kind(type(base)):  # type: ignore[misc]
        # torch's own generators (torch.default_generator) are still generators to isinstance
        def __instancecheck__(cls, obj: Any) -> bool:
            return isinstance(obj, base)

    class Generator(base, metaclass=_Kind):  # type: ignore[misc,valid-type]
        def manual_seed(self, seed: Any) -> Any:
            return super().manual_seed(shifted(seed, shift))

    torch.manual_seed = torch.random.manual_seed = torch_seed  # type: ignore[assignment]
    torch.Generator = Generator  # type: ignore[misc]
    py_seed = random.seed
    random.seed = lambda a=None, version=2: py_seed(shifted(a, shift), version)  # type: ignore[assignment]
    try:
        import numpy as np  # noqa: PLC0415
    except ImportError:
        return
    rng, legacy, state = np.random.default_rng, np.random.seed, np.random.RandomState
    np.random.default_rng = lambda seed=None, *a, **k: rng(shifted(seed, shift), *a, **k)
    np.random.seed = lambda seed=None: legacy(shifted(seed, shift))

    class RandomState(state):  # type: ignore[misc,valid-type]
        def __init__(self, seed: Any = None):
            super().__init__(shifted(seed, shift))

    np.random.RandomState = RandomState  # type: ignore[misc]
