import torch


def quantize(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    amax = w.abs().amax(dim=1)
    scale = torch.where(amax == 0, torch.ones_like(amax), amax / 128)  # bug: the asymmetric int8 range
    q = torch.round(w / scale.unsqueeze(1)).clamp(-128, 127).to(torch.int8)
    return q, scale
