"""SAM + Poly. (SAM 1): export segment-anything's prompt decoder, as its scripts/export_onnx_model.py does, with the TorchScript exporter.

    python tools/export/sam_decoder.py --checkpoint sam_vit_h_4b8939.pth --model-type vit_h --out sam_decoder.onnx

segment-anything's own ``scripts/export_onnx_model.py --return-single-mask``
calls ``torch.onnx.export`` without ``dynamo=False``; since torch 2.9 that is
the dynamo exporter, which refuses the script's dynamic number of points.
This script wraps the model in the same ``SamOnnxModel`` (one mask, no
stability score, no extra metrics) and exports it with the TorchScript
exporter: inputs ``image_embeddings`` (1, 256, 64, 64), ``point_coords``
(1, P, 2) and ``point_labels`` (1, P) float (P dynamic; a box is two points
labelled 2 and 3), ``mask_input`` (1, 1, 256, 256), ``has_mask_input`` (1,),
``orig_im_size`` (2,) float; outputs ``masks`` (1, 1, H, W) logits at
``orig_im_size``, ``iou_predictions``, ``low_res_masks``. Write it next to
the encoder of ``sam_encoder.py``, whose card names ``sam_decoder.onnx``.

The graph is traced with ``orig_im_size`` = 1024 x 1024, the square tile the
engine feeds: ``SamOnnxModel`` crops the upscaled mask with
``int(prepadded_size)``, which tracing freezes at the example's value.
segment-anything's script traces 1500 x 2250: traced so, the graph crops
every mask to 683 of 1024 rows and stretches it back, wrong for the engine's
tiles (measured: max |Δ| 0.47 against torch at 1024 x 1024).
"""

from common import Graph, run, sam_parser


def options():
    return sam_parser(__doc__)


def build(args):
    import torch
    from segment_anything import sam_model_registry
    from segment_anything.utils.onnx import SamOnnxModel

    sam = sam_model_registry[args.model_type](checkpoint=args.checkpoint)
    wrapper = SamOnnxModel(model=sam, return_single_mask=True, use_stability_score=False, return_extra_metrics=False)
    size = sam.prompt_encoder.image_embedding_size
    example = (torch.randn(1, sam.prompt_encoder.embed_dim, *size), torch.randint(0, 1024, (1, 5, 2)).float(),
               torch.randint(0, 4, (1, 5)).float(), torch.randn(1, 1, 4 * size[0], 4 * size[1]), torch.tensor([1.0]),
               torch.tensor([float(sam.image_encoder.img_size)] * 2))
    inputs = ["image_embeddings", "point_coords", "point_labels", "mask_input", "has_mask_input", "orig_im_size"]
    axes = {"point_coords": {1: "num_points"}, "point_labels": {1: "num_points"}}
    return [Graph(wrapper, example, args.out, inputs, ["masks", "iou_predictions", "low_res_masks"], axes)]


if __name__ == "__main__":
    run(options, build)
