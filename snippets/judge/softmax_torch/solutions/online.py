import torch


def softmax(x: torch.Tensor) -> torch.Tensor:
    """One pass over column blocks with a running max and a rescaled running sum, as online softmax does."""
    rows, cols = x.shape
    m = torch.full((rows, 1), float("-inf"))
    s = torch.zeros(rows, 1)
    for start in range(0, cols, 128):
        block = x[:, start:start + 128]
        m_new = torch.maximum(m, block.max(dim=1, keepdim=True).values)
        s = s * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=1, keepdim=True)
        m = m_new
    return torch.exp(x - m) / s
