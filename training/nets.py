"""The U-Net used by every bundled model, and the wrapper that becomes the ONNX graph.

Importing this module imports PyTorch (see :mod:`.torch_support`).

:class:`UNet` is a plain 4-level U-Net (two 3 x 3 convolutions with batch
normalization and ReLU per level, max-pool down, transposed-convolution up,
skip concatenation) that returns raw logits. :class:`ExportWrapper` adds what
the exported graph needs: it pads any input to a multiple of 16 px and crops
the output back (so the graph accepts any tile size), and turns the logits
into the outputs the card names:

* ``binary`` head: ``probabilities`` (N, 1, H, W), sigmoid of the logit;
* ``boundary3`` head: ``probabilities`` (N, 2, H, W) = (P(background),
  P(building) + P(boundary)) from a softmax over the three classes;
* ``vertex`` head: ``mask`` and ``vertices`` (N, 1, H, W), sigmoids.
"""

from .torch_support import require_torch

torch = require_torch()
nn = torch.nn
functional = torch.nn.functional

__all__ = ["DEPTH", "ExportWrapper", "UNet"]

DEPTH = 4
"""Poolings of the U-Net: inputs are padded to a multiple of 2**DEPTH = 16 px."""


def _block(in_channels, out_channels):
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(inplace=True),
        nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(inplace=True),
    )


class UNet(nn.Module):
    """U-Net returning logits of shape (N, out_channels, H, W) for H, W multiples of 16.

    Parameters
    ----------
    in_channels, out_channels : int
    base_channels : int
        Channels of the first level; level k has ``base_channels * 2**k``.
    """

    def __init__(self, in_channels, out_channels, base_channels=16):
        super().__init__()
        widths = [base_channels * 2**level for level in range(DEPTH + 1)]
        self.down = nn.ModuleList(
            _block(in_channels if level == 0 else widths[level - 1], widths[level]) for level in range(DEPTH + 1)
        )
        self.up = nn.ModuleList(
            nn.ConvTranspose2d(widths[level + 1], widths[level], 2, stride=2) for level in reversed(range(DEPTH))
        )
        self.merge = nn.ModuleList(_block(2 * widths[level], widths[level]) for level in reversed(range(DEPTH)))
        self.head = nn.Conv2d(base_channels, out_channels, 1)

    def forward(self, x):
        skips = []
        for level, block in enumerate(self.down):
            x = block(x)
            if level < DEPTH:
                skips.append(x)
                x = functional.max_pool2d(x, 2)
        for up, merge in zip(self.up, self.merge):
            x = merge(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


class ExportWrapper(nn.Module):
    """A trained :class:`UNet` as exported: any tile size in, card outputs out.

    Parameters
    ----------
    net : UNet
    head : str
        ``binary``, ``boundary3`` or ``vertex``.
    """

    def __init__(self, net, head):
        super().__init__()
        self.net = net
        self.head = head

    def forward(self, x):
        height, width = x.shape[2], x.shape[3]
        multiple = 2**DEPTH
        pad_h = (multiple - height % multiple) % multiple
        pad_w = (multiple - width % multiple) % multiple
        logits = self.net(functional.pad(x, (0, pad_w, 0, pad_h), mode="replicate"))
        logits = logits[:, :, :height, :width]
        if self.head == "binary":
            return torch.sigmoid(logits)
        if self.head == "boundary3":
            p = torch.softmax(logits, dim=1)
            return torch.cat([p[:, :1], p[:, 1:2] + p[:, 2:3]], dim=1)
        return torch.sigmoid(logits[:, :1]), torch.sigmoid(logits[:, 1:2])
