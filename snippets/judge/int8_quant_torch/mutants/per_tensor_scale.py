import torch


def quantize(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    amax = w.abs().max()  # bug: one maximum for the whole tensor
    scale = amax / 127 if amax > 0 else torch.ones(())
    q = torch.round(w / scale).clamp(-127, 127).to(torch.int8)
    return q, scale.expand(w.shape[0]).clone()
