"""Pix2Poly: export the ViT encoder and one step of the vertex-token decoder with the permutation head.

    python tools/export/pix2poly.py --checkpoint runs/EXP/logs/checkpoints/best.pth --out pix2poly_encoder.onnx

Writes ``pix2poly_encoder.onnx`` (``input`` (1, 3, 224, 224) in [0, 1] →
``memory``, the encoder's patch features; its AdaptiveAvgPool1d bottleneck,
which the exporter refuses, becomes the equal matrix product) and, beside it,
``pix2poly_decoder.onnx``: ``memory`` and ``tokens`` (1, T) int64, the
sequence so far padded with PAD to T = 2 · N_VERTICES + 1 (as Pix2Poly's
``Decoder.predict`` pads it), → ``logits`` (1, T, NUM_BINS + 3) at every
position and ``successors`` (1, N, N) = scorenet1 + scorenet2ᵀ of the
decoder features (each ScoreNet's first layer split over the vertex pair:
equal scores, a quarter of the operations). The engine's vertex-sequence
decoder runs the greedy loop (T steps per tile, as ``test_generate``), the
tokenizer's decoding and the Hungarian assignment. Pix2Poly resizes its input to 224 px: the card's
resolution 68.57 cm makes a 512 px crop at 30 cm one 224 px tile.
"""

from common import Graph, parser, run


def options():
    return parser(__doc__)


def build(args):
    import os

    import torch
    from config import CFG
    from models.model import Decoder, Encoder, EncoderDecoder
    from tokenizer import Tokenizer
    from utils import create_mask

    tokenizer = Tokenizer(num_classes=1, num_bins=CFG.NUM_BINS, width=CFG.INPUT_WIDTH, height=CFG.INPUT_HEIGHT,
                          max_len=CFG.MAX_LEN)
    CFG.PAD_IDX = tokenizer.PAD_code
    encoder = Encoder(model_name=CFG.MODEL_NAME, pretrained=False, out_dim=256)
    decoder = Decoder(cfg=CFG, vocab_size=tokenizer.vocab_size, encoder_len=CFG.NUM_PATCHES, dim=256, num_heads=8,
                      num_layers=6)
    model = EncoderDecoder(cfg=CFG, encoder=encoder, decoder=decoder)
    # Pix2Poly's checkpoints hold the optimizer, scheduler, epoch and loss next to the model (not only tensors).
    model.load_state_dict(torch.load(args.checkpoint, map_location="cpu", weights_only=False)["state_dict"])

    class Step(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, memory, tokens):
            d = self.model.decoder
            tgt_mask, tgt_padding_mask = create_mask(tokens, CFG.PAD_IDX)
            tgt = d.decoder_pos_drop(d.embedding(tokens) + d.decoder_pos_embed).transpose(0, 1)
            memory = d.encoder_pos_drop(memory + d.encoder_pos_embed).transpose(0, 1)
            feats = d.decoder(memory=memory, tgt=tgt, tgt_mask=tgt_mask, tgt_key_padding_mask=tgt_padding_mask).transpose(0, 1)
            successors = pair_scores(self.model.scorenet1, feats) + torch.transpose(
                pair_scores(self.model.scorenet2, feats), 1, 2)
            return d.output(feats), successors

    def pair_scores(scorenet, feats):
        """Pix2Poly's ScoreNet with its first 1 x 1 convolution split over the pair of vertices.

        ScoreNet convolves [f_i; f_j] for every pair (i, j); W [f_i; f_j] =
        W_i f_i + W_j f_j, so the first layer is computed per vertex and
        summed per pair: the same scores with about a quarter of the
        operations (the engine runs this graph 2 N + 1 times per tile).
        """
        f = feats[:, 1:]
        f = f.reshape(f.shape[0], f.shape[1] // 2, 2, f.shape[2]).mean(dim=2)
        weight = scorenet.conv1.weight[:, :, 0, 0]
        width = f.shape[2]
        first = torch.einsum("cd,bnd->bcn", weight[:, :width], f)
        second = torch.einsum("cd,bnd->bcn", weight[:, width:], f)
        x = first[:, :, :, None] + second[:, :, None, :] + scorenet.conv1.bias[None, :, None, None]
        x = scorenet.relu(scorenet.bn1(x))
        x = scorenet.relu(scorenet.bn2(scorenet.conv2(x)))
        x = scorenet.relu(scorenet.bn3(scorenet.conv3(x)))
        return scorenet.conv4(x)[:, 0]

    class PooledEncoder(torch.nn.Module):
        """The encoder with its AdaptiveAvgPool1d bottleneck (384 -> 256 features) as the equal matrix product.

        The ONNX exporter refuses adaptive pooling to a size that does not
        divide the input's; the pooling is linear, so its matrix is the pool
        of the identity.
        """

        def __init__(self, encoder):
            super().__init__()
            self.model = encoder.model
            width = encoder.model.num_features
            with torch.no_grad():
                self.register_buffer("pool", encoder.bottleneck(torch.eye(width)[None])[0])

        def forward(self, x):
            return self.model(x)[:, 1:] @ self.pool

    image = torch.rand(1, 3, CFG.INPUT_HEIGHT, CFG.INPUT_WIDTH)
    length = CFG.MAX_LEN - 1
    tokens = torch.full((1, length), CFG.PAD_IDX, dtype=torch.long)
    tokens[0, 0] = tokenizer.BOS_code
    step_path = os.path.join(os.path.dirname(os.path.abspath(args.out)), "pix2poly_decoder.onnx")
    with torch.no_grad():
        memory = model.eval().encoder(image)
    # The decoder is written first: the encoder's card names it and is checked against it.
    return [Graph(Step(model), (memory, tokens), step_path, ["memory", "tokens"], ["logits", "successors"]),
            Graph(PooledEncoder(model.encoder), (image,), args.out, ["input"], ["memory"], None, "pix2poly")]


if __name__ == "__main__":
    run(options, build)
