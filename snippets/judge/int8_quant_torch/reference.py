"""Reference for int8-quant-torch, in float64 (the judge passes float64 copies of the inputs).

The cases keep w/scale at least 0.05 away from a half-integer, except where the scale is a power of two
and the halves are exact, so float64 here and float32 in a solution round the same way.
"""

import torch


def reference(w):
    amax = w.abs().amax(dim=1)
    scale = torch.where(amax == 0, torch.ones_like(amax), amax / 127)
    q = torch.round(w / scale[:, None]).clamp(-127, 127)  # torch.round: ties to even
    return q.to(torch.int8), scale
