"""FFL (Frame Field Learning): export the model's ``seg`` and ``crossfield`` heads, with FFL's per-image standardization inside.

    python tools/export/ffl.py --run-dir runs/inria_dataset_osm_aligned.unet16 --checkpoint checkpoint.tar --out ffl.onnx

FFL standardizes each image with its own per-channel mean and std (computed
from the 0-1 image, NumPy's population std); the wrapper does that per tile,
in the graph, so the
card uses the identity standardization. Outputs: ``seg`` (batch, 2, H, W)
sigmoid probabilities (interior, edge) and ``crossfield`` (batch, 4, H, W),
the frame-field coefficients (Re c0, Im c0, Re c2, Im c2) in [-2, 2], with
directions in FFL's ij convention. FFL's active-contour optimisation is not
exported: the engine's frame-field decoder aligns the mask contour to the
field and places corners where its directions switch. FFL's U-Net-ResNet
backbone applies its last 2-D dropout at inference too (``F.dropout2d``
without ``training``); the export uses the identity, dropout's expectation.
"""

from common import Graph, parser, run


def options():
    args = parser(__doc__)
    args.add_argument("--run-dir", required=True, help="FFL run folder holding config.json")
    return args


def build(args):
    import json
    import os

    import types

    import frame_field_learning.unet_resnet as unet_resnet
    import torch
    from backbone import get_backbone
    from frame_field_learning.model import FrameFieldModel

    # FFL's UNetResNetBackbone calls F.dropout2d(dec1, p=0.2) without training=..., so it drops feature channels at
    # inference too (random outputs) and the exporter refuses it; the graph uses dropout's expectation, the identity.
    unet_resnet.F = types.SimpleNamespace(**{**vars(torch.nn.functional), "dropout2d": lambda x, *a, **k: x})

    class Standardized(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, image):
            mean = image.mean(dim=(2, 3), keepdim=True)
            std = image.std(dim=(2, 3), keepdim=True, unbiased=False).clamp(min=1e-6)
            outputs = self.model.inference((image - mean) / std)
            return outputs["seg"], outputs["crossfield"]

    with open(os.path.join(args.run_dir, "config.json"), encoding="utf-8") as handle:
        config = json.load(handle)
    model = FrameFieldModel(config, backbone=get_backbone(config["backbone_params"]))
    # FFL's checkpoints hold the optimizer, scheduler and losses next to the model (not only tensors).
    model.load_state_dict(torch.load(args.checkpoint, map_location="cpu", weights_only=False)["model_state_dict"])
    axes = {"input": {0: "batch", 2: "height", 3: "width"}, "seg": {0: "batch", 2: "height", 3: "width"},
            "crossfield": {0: "batch", 2: "height", 3: "width"}}
    return [Graph(Standardized(model), (torch.rand(1, 3, args.tile, args.tile),), args.out, ["input"],
                  ["seg", "crossfield"], axes, "ffl")]


if __name__ == "__main__":
    run(options, build)
