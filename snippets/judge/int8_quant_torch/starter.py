import torch


def quantize(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row symmetric INT8: scale = amax(|row|) / 127 (1 for an all-zero row), q = clamp(round(w / scale), -127, 127)."""
    raise NotImplementedError
