"""SAM + Poly. (SAM 1): export segment-anything's image encoder; ``sam_decoder.py`` exports the prompt decoder.

    python tools/export/sam_decoder.py --checkpoint sam_vit_h_4b8939.pth --model-type vit_h --out sam_decoder.onnx
    python tools/export/sam_encoder.py --checkpoint sam_vit_h_4b8939.pth --model-type vit_h --out sam_encoder.onnx

The encoder takes (1, 3, 1024, 1024) standardized with SAM's pixel mean and
std (the card's ImageNet values on 0-255 input) and returns
``image_embeddings`` (1, 256, 64, 64). The decoder (next to the encoder, as
``polytopo.prompt_decoder`` says) returns mask logits at ``orig_im_size``,
which the engine sets to the tile. SAM2 + Poly. (the paper's baseline) is
exported with onnxruntime's SAM 2 tools instead: see docs/baselines.md and
``cards/sam2.json``.
"""

from common import Graph, run, sam_parser


def options():
    return sam_parser(__doc__)


def build(args):
    import torch
    from segment_anything import sam_model_registry

    sam = sam_model_registry[args.model_type](checkpoint=args.checkpoint)
    return [Graph(sam.image_encoder, (torch.zeros(1, 3, 1024, 1024),), args.out, ["image"], ["image_embeddings"],
                  None, "sam")]


if __name__ == "__main__":
    run(options, build)
