"""The U-Nets of the bundled models, and the wrapper that becomes the ONNX graph.

Importing this module imports PyTorch (see :mod:`.torch_support`).

:class:`UNet` is a plain 4-level U-Net (two 3 x 3 convolutions with batch
normalization and ReLU per level, max-pool down, transposed-convolution up,
skip concatenation) trained from scratch. :class:`LiteUNet` puts a U-Net
decoder on an ImageNet-pretrained EfficientNet-Lite of :mod:`.encoders`
(skips at strides 2, 4, 8, 16 and 32, nearest-neighbour upsampling, two
3 x 3 convolutions with batch normalization and ReLU per level, and a last
level at full resolution). Both return raw logits and say by
``reduction`` what multiple of pixels they need (16 and 32).

:class:`ExportWrapper` adds what the exported graph needs: it pads any input
to a multiple of the net's ``reduction`` (edge replicate) and crops the output
back (so the graph accepts any tile size), and turns the logits into the
outputs the card names:

* ``binary`` head: ``probabilities`` (N, 1, H, W), sigmoid of the logit;
* ``boundary3`` head: ``probabilities`` (N, 2, H, W) = (P(background),
  P(building) + P(boundary)) from a softmax over the three classes; with
  ``separate=True`` instead ``probabilities`` (N, 1, H, W) = min(P(building)
  + P(boundary), max over the 3 x 3 neighbourhood of P(building)): the
  building *interior* grown by one pixel and kept inside the foreground, so
  the boundary band between two touching buildings stays background and they
  come out as two polygons;
* ``courtyard4`` head (background, building, boundary, courtyard): with
  ``separate=True`` ``probabilities`` (N, 1, H, W) = the grown interior, or the
  whole foreground P(building) + P(boundary) where it is lower than the
  courtyard probability averaged over 8 x 8 px cells and spread (maximum) by
  ``courtyard_reach_px``: touching buildings come apart, but the roof ring
  around a courtyard is not cut by the walls the net sees on it, so the
  courtyard stays a hole (reach 0: the grown interior everywhere, the
  courtyard class only taught in training);
* ``vertex`` head: ``mask`` and ``vertices`` (N, 1, H, W), sigmoids.

With ``flips`` > 1 the net also sees the tile mirrored (left-right; for 4 also
upside down, and both) and the class probabilities (softmax or sigmoids) of the
views, mirrored back, are averaged before the outputs above are made from them
(test-time augmentation; the graph costs ``flips`` times as much).
"""

import math

from .encoder_variants import LITE_DECODER_CHANNELS
from .recipes import TEST_TIME_FLIPS
from .torch_support import require_torch

torch = require_torch()
nn = torch.nn
functional = torch.nn.functional

__all__ = ["COURTYARD_CELL_PX", "DEPTH", "ExportWrapper", "LiteUNet", "UNet", "build_net"]

DEPTH = 4
"""Poolings of the U-Net: inputs are padded to a multiple of 2**DEPTH = 16 px."""

COURTYARD_CELL_PX = 8
"""``courtyard4`` head: cell edge (px) over which the courtyard probability is averaged before it is
spread by ``courtyard_reach_px`` (a divisor of both nets' padding multiple)."""


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

    reduction = 2**DEPTH

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


class LiteUNet(nn.Module):
    """U-Net decoder on an ImageNet-pretrained EfficientNet-Lite encoder; logits (N, out_channels, H, W).

    Parameters
    ----------
    in_channels, out_channels : int
        ``in_channels`` 3 (RGB), or 1 (a panchromatic band, repeated into the three channels of
        the pretrained stem inside the graph).
    pretrained : bool
        Load the ImageNet weights (:func:`.encoders.load_imagenet`); False for a
        net whose weights come from a checkpoint.
    decoder_channels : tuple of 5 int
    encoder : str
        A name of :data:`.encoder_variants.LITE_VARIANTS`.
    """

    reduction = 32

    def __init__(self, in_channels, out_channels, pretrained=True, decoder_channels=LITE_DECODER_CHANNELS,
                 encoder="efficientnet-lite0"):
        super().__init__()
        from .encoders import EfficientNetLite, load_imagenet

        if in_channels not in (1, 3):
            raise ValueError(f"Expected 1 (replicated to RGB) or 3 input channels but got {in_channels}.")
        self.replicate = in_channels == 1
        self.encoder = EfficientNetLite(encoder, 3)
        if pretrained:
            load_imagenet(self.encoder)
        skips = self.encoder.feature_channels  # strides 2, 4, 8, 16, 32
        below = skips[-1]
        blocks = []
        for level, width in enumerate(decoder_channels):
            skip = skips[-2 - level] if level < len(skips) - 1 else 0
            blocks.append(_block(below + skip, width))
            below = width
        self.decoder = nn.ModuleList(blocks)
        self.head = nn.Conv2d(decoder_channels[-1], out_channels, 1)

    def forward(self, x):
        if self.replicate:
            x = x.repeat(1, 3, 1, 1)  # one band: the pretrained RGB stem sees it as grey
        features = self.encoder.features(x)
        y = features[-1]
        for level, block in enumerate(self.decoder):
            y = functional.interpolate(y, scale_factor=2.0, mode="nearest")
            if level < len(features) - 1:
                y = torch.cat([y, features[-2 - level]], dim=1)
            y = block(y)
        return self.head(y)


def build_net(recipe, pretrained=True):
    """The untrained network of ``recipe`` (its ``encoder``: None for :class:`UNet`, else a Lite encoder's name)."""
    encoder = getattr(recipe, "encoder", None)
    if encoder is None:
        return UNet(len(recipe.bands), recipe.out_channels, recipe.base_channels)
    return LiteUNet(len(recipe.bands), recipe.out_channels, pretrained=pretrained, encoder=encoder)


class ExportWrapper(nn.Module):
    """A trained net as exported: any tile size in, card outputs out.

    Parameters
    ----------
    net : UNet or LiteUNet
    head : str
        ``binary``, ``boundary3``, ``courtyard4`` or ``vertex``.
    separate : bool
        ``boundary3`` and ``courtyard4``: output the grown interior (N, 1, H, W) that keeps
        touching buildings apart (see the module docstring).
    courtyard_reach_px : int
        ``courtyard4`` only: within about this many pixels of a likely courtyard the output is
        the whole foreground instead of the grown interior; 0: no such gate, the grown
        interior everywhere (as the ``boundary3`` head's).
    flips : int
        Views averaged, a key of :data:`.recipes.TEST_TIME_FLIPS` (1: the tile alone).
    """

    def __init__(self, net, head, separate=False, courtyard_reach_px=0, flips=1):
        super().__init__()
        self.net = net
        self.head = head
        self.separate = separate
        self.courtyard_cells = math.ceil(courtyard_reach_px / COURTYARD_CELL_PX)
        self.views = TEST_TIME_FLIPS[flips]

    def forward(self, x):
        height, width = x.shape[2], x.shape[3]
        multiple = getattr(self.net, "reduction", 2**DEPTH)
        pad_h = (multiple - height % multiple) % multiple
        pad_w = (multiple - width % multiple) % multiple
        padded = functional.pad(x, (0, pad_w, 0, pad_h), mode="replicate")
        p = None
        for dims in self.views:
            view = self._activated(self.net(torch.flip(padded, dims) if dims else padded))
            view = torch.flip(view, dims) if dims else view
            p = view if p is None else p + view
        p = p / len(self.views) if len(self.views) > 1 else p
        if self.head == "courtyard4" and self.separate and self.courtyard_cells:
            # on the padded tile: its sides are multiples of the courtyard cell
            return self._courtyard_gated(p)[:, :, :height, :width]
        p = p[:, :, :height, :width]
        if self.head == "binary":
            return p
        if self.head in ("boundary3", "courtyard4"):
            if self.separate:
                return _grown_interior(p)
            return torch.cat([p[:, :1], p[:, 1:2] + p[:, 2:3]], dim=1)
        return p[:, :1], p[:, 1:2]

    def _activated(self, logits):
        """Class probabilities of the logits: a softmax over the classes, or a sigmoid per channel."""
        if self.head in ("boundary3", "courtyard4"):
            return torch.softmax(logits, dim=1)
        return torch.sigmoid(logits)

    def _courtyard_gated(self, p):
        foreground = p[:, 1:2] + p[:, 2:3]
        near = functional.avg_pool2d(p[:, 3:4], COURTYARD_CELL_PX)
        kernel = 2 * self.courtyard_cells + 1
        near = functional.max_pool2d(near, kernel, stride=1, padding=self.courtyard_cells)
        near = functional.interpolate(near, scale_factor=float(COURTYARD_CELL_PX), mode="nearest")
        return torch.maximum(_grown_interior(p), torch.minimum(foreground, near))


def _grown_interior(p):
    """min(max over 3 x 3 of P(building), P(building) + P(boundary)) of class probabilities ``p``."""
    grown = functional.max_pool2d(p[:, 1:2], 3, stride=1, padding=1)
    return torch.minimum(grown, p[:, 1:2] + p[:, 2:3])
