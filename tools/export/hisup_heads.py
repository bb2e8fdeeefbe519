"""HiSup: export BuildingDetector with its heads brought to the tile's resolution.

    python tools/export/hisup_heads.py --config config-files/inria_hrnet48.yaml --checkpoint model.pth --out hisup.onnx

HiSup predicts at 1/4 of the input (128 x 128 for 512 px): ``remask`` logits
(2 channels), junction logits ``jloc`` (none, concave, convex), ``joff`` (a
sub-cell offset, sigmoid - 0.5) and the attraction field ``afm``. The engine
needs dense outputs at the tile's resolution, so the wrapper returns
``mask`` = softmax(remask)[:, 1], upsampled bilinearly x4 (as HiSup's
``cv2.resize``), and ``vertices`` = the junction probability (concave +
convex) of each cell, placed at the cell's junction ``4 (cell + 0.5 + joff)``
as a Gaussian of 1 px. ``afm`` is not used (HiSup uses it in training and for
the refined mask only).

(The script is not called ``hisup.py``: Python puts the script's folder first
on its path, and a ``hisup.py`` there would hide HiSup's package ``hisup``.)
"""

from common import Graph, parser, run


def options():
    args = parser(__doc__)
    args.add_argument("--config", required=True, help="HiSup config file, e.g. config-files/inria_hrnet48.yaml")
    return args


def build(args):
    import numpy as np
    import torch
    import torch.nn.functional as F
    from hisup.config import cfg
    from hisup.detector import BuildingDetector

    class TileHeads(torch.nn.Module):
        def __init__(self, detector, tile):
            super().__init__()
            self.d = detector
            centres = torch.arange(tile, dtype=torch.float32) + 0.5
            self.register_buffer("py", centres[:, None].expand(tile, tile))
            self.register_buffer("px", centres[None, :].expand(tile, tile))
            cells = torch.div(torch.arange(tile), 4, rounding_mode="floor").float() + 0.5
            self.register_buffer("cy", cells[:, None].expand(tile, tile))
            self.register_buffer("cx", cells[None, :].expand(tile, tile))

        def forward(self, image):
            d = self.d
            outputs, features = d.backbone(image)
            jloc_f, afm_f = d.jloc_head(features), d.afm_head(features)  # HiSup's mask head is unused at inference
            jloc = d.jloc_predictor(jloc_f + d.a2j_att(afm_f, jloc_f))
            afm = d.afm_predictor(afm_f)
            remask = d.final_conv(torch.cat((features, d.refuse_conv(afm)), dim=1))
            joff = outputs[:, :2].sigmoid() - 0.5
            mask = F.interpolate(remask.softmax(1)[:, 1:], scale_factor=4, mode="bilinear", align_corners=False)
            junction = F.interpolate(1 - jloc.softmax(1)[:, :1], scale_factor=4, mode="nearest")
            offset = F.interpolate(joff, scale_factor=4, mode="nearest")
            dx = self.px - 4 * (self.cx + offset[:, 0:1])
            dy = self.py - 4 * (self.cy + offset[:, 1:2])
            return mask, junction * torch.exp(-0.5 * (dx * dx + dy * dy)), joff, afm

    if not hasattr(np, "int"):
        np.int = int  # HiSup's HRNet backbones call np.int, which NumPy 1.24 removed
    cfg.merge_from_file(args.config)
    detector = BuildingDetector(cfg, test=True)
    # HiSup's checkpoints hold the optimizer and scheduler state next to the model (not only tensors).
    detector.load_state_dict(torch.load(args.checkpoint, map_location="cpu", weights_only=False)["model"])
    return [Graph(TileHeads(detector, args.tile), (torch.zeros(1, 3, args.tile, args.tile),), args.out, ["input"],
                  ["mask", "vertices", "joff", "afm"], {"input": {0: "batch"}}, "hisup")]


if __name__ == "__main__":
    run(options, build)
