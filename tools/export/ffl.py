"""FFL (Frame Field Learning): export the model's ``seg`` and ``crossfield`` heads, with FFL's per-image standardization inside.

    python tools/export/ffl.py --run-dir runs/inria_dataset_osm_aligned.unet16 --checkpoint checkpoint.tar --out ffl.onnx

FFL standardizes each image with its own per-channel mean and std (computed
from the 0-1 image); the wrapper does that per tile, in the graph, so the
card uses the identity standardization. Outputs: ``seg`` (batch, 2, H, W)
sigmoid probabilities (interior, edge) and ``crossfield`` (batch, 4, H, W),
the frame-field coefficients (Re c0, Im c0, Re c2, Im c2) in [-2, 2], with
directions in FFL's ij convention. FFL's active-contour optimisation is not
exported: the engine's frame-field decoder aligns the mask contour to the
field and places corners where its directions switch.
"""

from common import export_and_write_card, parser

if __name__ == "__main__":
    options = parser(__doc__)
    options.add_argument("--run-dir", required=True, help="FFL run folder holding config.json")
    args = options.parse_args()
    import json
    import os

    import torch
    from backbone import get_backbone
    from frame_field_learning.model import FrameFieldModel

    class Standardized(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, image):
            mean = image.mean(dim=(2, 3), keepdim=True)
            std = image.std(dim=(2, 3), keepdim=True).clamp(min=1e-6)
            outputs = self.model.inference((image - mean) / std)
            return outputs["seg"], outputs["crossfield"]

    with open(os.path.join(args.run_dir, "config.json"), encoding="utf-8") as handle:
        config = json.load(handle)
    model = FrameFieldModel(config, backbone=get_backbone(config["backbone_params"]))
    model.load_state_dict(torch.load(args.checkpoint, map_location="cpu")["model_state_dict"])
    axes = {"input": {0: "batch", 2: "height", 3: "width"}, "seg": {0: "batch", 2: "height", 3: "width"},
            "crossfield": {0: "batch", 2: "height", 3: "width"}}
    export_and_write_card(Standardized(model), torch.rand(1, 3, args.tile, args.tile), args.out, ["input"],
                          ["seg", "crossfield"], axes, args.opset, "ffl", args.set)
