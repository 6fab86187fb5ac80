"""A tiny randomly initialised stand-in for the frozen DINOv2 encoder (the task has no
pretrained weights): a patch embedding and one transformer layer, returning patch
tokens (B, N, hidden_size) like Dinov2withNorm, with a parameter-free LayerNorm at the
end as in the authors' `normalize=True`. Written for this task (notes.md)."""

import torch
from torch import nn

from . import register_encoder


@register_encoder()
class TinyStandInEncoder(nn.Module):
    def __init__(self, patch_size: int = 4, hidden_size: int = 16, seed: int = 0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.patch_size = patch_size
        self.hidden_size = hidden_size
        self.proj = nn.Conv2d(3, hidden_size, kernel_size=patch_size, stride=patch_size)
        self.layer = nn.TransformerEncoderLayer(hidden_size, nhead=2, dim_feedforward=2 * hidden_size,
                                                dropout=0.0, batch_first=True)
        self.norm = nn.LayerNorm(hidden_size, elementwise_affine=False)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.3)
        self.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.proj(x).flatten(2).transpose(1, 2)
        return self.norm(self.layer(z))
