"""PolyWorld: export backbone, vertex detection and the matching network as one graph with a vertex-graph head.

    python tools/export/polyworld.py --weights trained_weights --out polyworld.onnx --tile 320

PolyWorld's prediction: R2U-Net features, a vertex heatmap (sigmoid), NMS and
the top 256 peaks as vertices (row, col), the attentional GNN that refines
them and scores every ordered pair (``scores = scorenet1 + scorenet2^T``),
then a Hungarian assignment whose cycles are the polygons. All but the
assignment is one graph: the wrapper returns ``vertices`` (1, 256, 2) as
(x, y) pixel centres, ``vertex_scores`` (1, 256) (the heatmap at each vertex)
and ``scores`` (1, 256, 256). The assignment and the cycles run in the
engine's vertex-graph decoder. PolyWorld gives polygons no score: the
decoder scores a ring with the mean heatmap value of its vertices.

PolyWorld's prediction script keeps its modules in training mode, so batch
normalization uses the statistics of the image at hand (its authors found
that better). ``--batch-statistics`` exports that way; run such a model with
``--batch 1`` so the statistics are those of one tile.
"""

from common import Graph, parser, run


def options():
    args = parser(__doc__, checkpoint=False)
    args.add_argument("--weights", required=True, help="folder with polyworld_backbone, polyworld_seg_head, polyworld_matching")
    args.add_argument("--batch-statistics", action="store_true", help="export batch normalization in training mode, as PolyWorld predicts")
    return args


def build(args):
    import os

    import torch
    from models.backbone import DetectionBranch, NonMaxSuppression, R2U_Net
    from models.matching import OptimalMatching

    class VertexGraph(torch.nn.Module):
        def __init__(self, weights):
            super().__init__()
            self.backbone, self.head, self.nms, self.matching = R2U_Net(), DetectionBranch(), NonMaxSuppression(), OptimalMatching()
            for module, name in ((self.backbone, "polyworld_backbone"), (self.head, "polyworld_seg_head"),
                                 (self.matching, "polyworld_matching")):
                module.load_state_dict(torch.load(os.path.join(weights, name), map_location="cpu"))

        def forward(self, image):
            features = self.backbone(image)
            heat, graph = self.nms(self.head(features))
            m = self.matching
            width = image.shape[3]
            descriptors = features[0][:, graph[0, :, 0], graph[0, :, 1]][None]
            normalized = m.normalize_coordinates(graph, width, input="global")
            descriptors, offset = m.gnn(descriptors, normalized)
            refined = m.normalize_coordinates(normalized + offset * m.correction_radius, width, input="normalized")
            scores = m.scorenet1(descriptors) + torch.transpose(m.scorenet2(descriptors), 1, 2)
            vertex_scores = heat[0, 0, graph[0, :, 0], graph[0, :, 1]][None]
            return torch.flip(refined, dims=[2]).float() + 0.5, vertex_scores, scores

    return [Graph(VertexGraph(args.weights), (torch.rand(1, 3, args.tile, args.tile),), args.out, ["input"],
                  ["vertices", "vertex_scores", "scores"], None, "polyworld", args.batch_statistics)]


if __name__ == "__main__":
    run(options, build)
