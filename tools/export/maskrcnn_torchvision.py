"""Mask R-CNN + Poly.: export torchvision's maskrcnn_resnet50_fpn (2 classes: background, building) behind a batch-1 wrapper.

    python tools/export/maskrcnn_torchvision.py --checkpoint maskrcnn.pth --out maskrcnn.onnx

The checkpoint is the detector's ``state_dict``. torchvision's detector
takes a list of (3, H, W) images in [0, 1] and normalizes and resizes them
inside the graph; the wrapper takes one (1, 3, H, W) tile, as the engine
feeds it, and returns the detections of that image: boxes (N, 4) x1, y1, x2,
y2 in input pixels, labels (N,) int64, scores (N,), masks (N, 1, H, W)
probabilities pasted at the input's resolution. The card keeps detections
scoring 0.05 or more and thresholds masks at 0.5 (the paper's A.3). For SAM2
prompts the paper keeps boxes scoring 0.5 or more: write a copy with
``--set det_conf=0.5``.
"""

from common import Graph, parser, run


def options():
    return parser(__doc__)


def build(args):
    import torch
    import torchvision

    class OneImage(torch.nn.Module):
        def __init__(self, detector):
            super().__init__()
            self.detector = detector

        def forward(self, images):
            found = self.detector([images[0]])[0]
            return found["boxes"], found["labels"], found["scores"], found["masks"]

    detector = torchvision.models.detection.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=2,
                                                                  box_score_thresh=0.05)
    detector.load_state_dict(torch.load(args.checkpoint, map_location="cpu"))
    axes = {"images": {2: "height", 3: "width"}, "boxes": {0: "n"}, "labels": {0: "n"}, "scores": {0: "n"},
            "masks": {0: "n", 2: "height", 3: "width"}}
    return [Graph(OneImage(detector), (torch.rand(1, 3, args.tile, args.tile),), args.out, ["images"],
                  ["boxes", "labels", "scores", "masks"], axes, "maskrcnn_torchvision")]


if __name__ == "__main__":
    run(options, build)
