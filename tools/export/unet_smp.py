"""U-Net + Poly.: export a segmentation_models_pytorch U-Net (EfficientNet-B3 encoder, one class, no activation).

    python tools/export/unet_smp.py --checkpoint unet.pth --out unet.onnx

The checkpoint is the model's ``state_dict``. The graph returns logits
(batch, 1, H, W); the card applies the sigmoid
(``polytopo.output_activation = "sigmoid"``), thresholds at 0.5 and simplifies
at 1 px (the paper's A.3). Height and width are dynamic (multiples of 32).
"""

from common import Graph, parser, run


def options():
    return parser(__doc__)


def build(args):
    import segmentation_models_pytorch as smp
    import torch

    model = smp.Unet("efficientnet-b3", encoder_weights=None, classes=1, activation=None)
    model.load_state_dict(torch.load(args.checkpoint, map_location="cpu"))
    axes = {"input": {0: "batch", 2: "height", 3: "width"}, "output": {0: "batch", 2: "height", 3: "width"}}
    return [Graph(model, (torch.zeros(1, 3, args.tile, args.tile),), args.out, ["input"], ["output"], axes, "unet_smp")]


if __name__ == "__main__":
    run(options, build)
