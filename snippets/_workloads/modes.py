"""The base of the snippets' TorchDispatchModes (operator logs, byte counters): one that Dynamo does not wrap.

TorchDispatchMode wraps a subclass's ``__torch_dispatch__`` in ``torch._disable_dynamo`` unless the subclass
opts out, and that wrapper imports ``torch._dynamo`` on its first call: 1.5 s on this project's CPUs, in every
process that uses a mode (a claim worker, each gloo rank). No mode here is active while ``torch.compile``
traces, so the wrapper would have nothing to do.
"""

from __future__ import annotations

from torch.utils._python_dispatch import TorchDispatchMode


class Mode(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False
