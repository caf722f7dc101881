"""The model of the activation-checkpoint claims: a stack of Transformer MLP blocks, and one forward
pass through it with or without checkpointing (memory.py counts the bytes, compute.py the FLOPs)."""

from __future__ import annotations

import functools

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential, create_selective_checkpoint_contexts

D, T = 128, 512  # model width, tokens in the batch: one block input is T * D float32


class Block(nn.Module):
    """A Transformer MLP block: LayerNorm, Linear(d, 4d), GELU, Linear(4d, d), residual."""

    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 4 * D)
        self.fc2 = nn.Linear(4 * D, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln(x))))


def blocks_and_input(device: str, n_blocks: int = 8) -> tuple[nn.Sequential, torch.Tensor]:
    """``n_blocks`` blocks and a (T, D) input that requires grad, from seed 0."""
    torch.manual_seed(0)
    blocks = nn.Sequential(*[Block() for _ in range(n_blocks)]).to(device)
    return blocks, torch.randn(T, D, device=device, requires_grad=True)


# Selective checkpointing: keep what the matmuls return, recompute everything else.
KEEP_MATMULS = functools.partial(create_selective_checkpoint_contexts,
                                 [torch.ops.aten.addmm.default, torch.ops.aten.mm.default])


def run_blocks(blocks: nn.Sequential, x: torch.Tensor, how: str) -> torch.Tensor:
    """The blocks applied to ``x``: ``none``, each block checkpointed (``full``: non-reentrant, ``reentrant``,
    ``selective``: KEEP_MATMULS), or ``seq<n>``: ``checkpoint_sequential`` with ``n`` segments."""
    if how.startswith("seq"):
        return checkpoint_sequential(blocks, int(how[3:]), x, use_reentrant=False)
    for b in blocks:
        if how == "none":
            x = b(x)
        elif how == "selective":
            x = checkpoint(b, x, use_reentrant=False, context_fn=KEEP_MATMULS)
        else:
            x = checkpoint(b, x, use_reentrant=(how == "reentrant"))
    return x
