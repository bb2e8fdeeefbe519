"""Run every export recipe for real and check what it writes: ONNX against torch, the card, and a run of the engine.

    python tools/export/verify.py --raster IMAGE.tif --hisup-repo HISUP --ffl-repo FFL \
        --pix2poly-repo PIX2POLY --polyworld-repo POLYWORLD --sam2-repo SAM2 \
        [--sam-repo SEGMENT_ANYTHING] [--out DIR]

For each baseline the network is built from its own code (a package version
or the repository checkout given, whose commit is reported) with random
weights, saved as the checkpoint its export script reads, and the script is
run as a user runs it (from the repository's root, with that root on the
Python path). Then:

1. every ONNX output is compared with the same torch module (the script's own
   ``build``) on the same input, a crop of ``--raster`` scaled as the engine
   scales it: max |Δ| at the card's tile size and, where the graph's height
   and width are dynamic, at a second size;
2. ``python -m polytopo.models info MODEL.onnx`` must accept the card;
3. ``python -m polytopo.models run`` decodes a ``--crop`` window of the raster
   end to end; the polygon count is reported (random weights make the
   polygons meaningless: the check is that every stage runs);
4. where the baseline's repository decodes in torch, its own intermediate
   outputs are compared with the exported graph's (listed as extra rows).

Baselines whose package or repository is missing are reported as skipped,
never as passed. Everything is written under ``--out`` (a new temporary
folder by default); nothing is written into this repository or the
baselines' checkouts. Needs torch and the packages of
``tools/export/requirements-verify.txt``.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINES = ("unet_smp", "maskrcnn_torchvision", "hisup", "ffl", "pix2poly", "polyworld", "sam", "sam2")
REPO_OPTION = {"hisup": "hisup_repo", "ffl": "ffl_repo", "pix2poly": "pix2poly_repo", "polyworld": "polyworld_repo",
               "sam2": "sam2_repo"}
ATOL, RTOL = 1e-4, 1e-3
"""An output passes when max |Δ| <= ATOL + RTOL * max |torch output| (Mask R-CNN's masks: see check_maskrcnn)."""


def options():
    args = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    args.add_argument("--out", help="work folder (default: a new temporary folder)")
    args.add_argument("--raster", help="RGB GeoTIFF (8-bit) for the inputs and the engine runs; without it the "
                                       "comparisons use random inputs and the run check is skipped")
    args.add_argument("--crop", default="", help="pixel window col,row,width,height of --raster (default: 600 x 600 "
                                                 "at its centre)")
    args.add_argument("--only", nargs="+", choices=BASELINES, help="check only these baselines")
    for name in REPO_OPTION:
        args.add_argument("--" + REPO_OPTION[name].replace("_", "-"), metavar="PATH",
                          help=f"checkout of the {name} repository (skipped without it)")
    args.add_argument("--sam-repo", metavar="PATH", help="segment-anything checkout: its scripts/export_onnx_model.py "
                                                          "is tried too (SAM itself runs from the PyPI package)")
    args.add_argument("--sam-type", default="vit_b", choices=["vit_b", "vit_l", "vit_h"],
                      help="SAM image encoder to export (vit_h is 2.5 GB)")
    args.add_argument("--sam2-type", default="sam2_hiera_tiny",
                      choices=["sam2_hiera_tiny", "sam2_hiera_small", "sam2_hiera_base_plus", "sam2_hiera_large"],
                      help="SAM 2 model exported with onnxruntime's SAM 2 tool")
    args.add_argument("--worker", help=argparse.SUPPRESS)
    args.add_argument("--repo", help=argparse.SUPPRESS)
    args.add_argument("--image", help=argparse.SUPPRESS)
    return args


# ---------------------------------------------------------------- helpers


def git_commit(path):
    try:
        return subprocess.run(["git", "-C", path, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"


def repo_paths(name, repo):
    """The Python path a baseline's code needs: its root (and FFL's two submodules, installed by its setup)."""
    paths = [repo]
    if name == "ffl":
        paths += [os.path.join(repo, "lydorn_utils"), os.path.join(repo, "pytorch_lydorn")]
    return paths


def environment(paths):
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the checkouts or in this repository
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def call(command, cwd, paths=(), log=None):
    """Run a command; return (ok, last lines of its output)."""
    done = subprocess.run(command, cwd=cwd, env=environment(list(paths)), capture_output=True, text=True)
    text = done.stdout + done.stderr
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"$ {' '.join(command)}\n{text}\n")
    return done.returncode == 0, "\n".join(text.strip().splitlines()[-60:])


def error_line(text):
    """The most telling line of a failure's output: the last one naming an error, else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    named = [line for line in lines if "Error" in line and "Refer to the full stack" not in line]
    return ((named or lines or ["no output"])[-1])[:160]


def load_script(name):
    sys.path.insert(0, HERE)
    spec = importlib.util.spec_from_file_location(f"export_{name}", os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def crop_window(path, window):
    """The pixel window (col, row, width, height) of ``--crop``, or 600 x 600 px at the raster's centre."""
    from osgeo import gdal

    source = gdal.Open(path)
    if window:
        col, row, width, height = (int(v) for v in window.split(","))
    else:
        width, height = min(600, source.RasterXSize), min(600, source.RasterYSize)
        col, row = (source.RasterXSize - width) // 2, (source.RasterYSize - height) // 2
    return col, row, width, height


def write_crop(path, window, out):
    from osgeo import gdal

    col, row, width, height = crop_window(path, window)
    gdal.Translate(out, path, srcWin=[col, row, width, height], bandList=[1, 2, 3])
    return out


def engine_input(card_path, image, size, seed=0):
    """A (1, 3, size, size) input scaled as the engine scales it.

    The top-left window of ``image``, repeated where the image is smaller;
    random values without an image.
    """
    import numpy as np

    from polytopo.models import read_card
    from polytopo.models.raster.normalize import input_scaling

    card = read_card(card_path)
    if image is None:
        raw = np.random.default_rng(seed).uniform(0, 255, (3, size, size)).astype(np.float32)
    else:
        from osgeo import gdal

        data = gdal.Open(image).ReadAsArray().astype(np.float32)[:3]
        reps = (1, -(-size // data.shape[1]), -(-size // data.shape[2]))
        raw = np.ascontiguousarray(np.tile(data, reps)[:, :size, :size])
    return input_scaling(card, ["Byte"] * 3, 3).apply(raw)[None]


def compare(module, onnx_path, inputs, names):
    """The max |Δ| between the torch module and the ONNX graph for each output name, and max |torch|."""
    import numpy as np
    import onnxruntime as ort
    import torch

    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    if len(session.get_inputs()) != len(inputs):
        raise RuntimeError(f"{onnx_path} has the inputs {[i.name for i in session.get_inputs()]}, the torch module "
                           f"{len(inputs)}")
    feeds = {item.name: value for item, value in zip(session.get_inputs(), inputs)}
    got = session.run(list(names), feeds)
    with torch.no_grad():
        want = module(*[torch.from_numpy(np.asarray(value)) for value in inputs])
    want = want if isinstance(want, (tuple, list)) else (want,)
    result = {}
    for name, a, b in zip(names, want, got):
        a = a.detach().numpy()
        if a.shape != b.shape:
            result[name] = {"shape": f"torch {list(a.shape)} != onnx {list(b.shape)}"}
            continue
        delta = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.size else 0.0
        scale = float(np.abs(a.astype(np.float64)).max()) if a.size else 0.0
        result[name] = {"delta": delta, "scale": scale, "shape": list(b.shape)}
    return result, got, want


def midpoint_threshold(probabilities):
    """A threshold between the median and the maximum of a probability map, for a random network whose map stays below the card's."""
    import numpy as np

    values = np.asarray(probabilities, np.float64)
    return round(float((np.median(values) + values.max()) / 2), 4)


def engine_checks(model, crop, work, name, extra=(), retry_threshold=None):
    """``info`` and ``run`` of the engine; the run's polygon count.

    When the card's settings give no polygon and ``retry_threshold`` is
    given, the run is repeated with ``--threshold retry_threshold`` so that
    the polygonization stages run too; both counts are reported.
    """
    log = os.path.join(work, name + ".log")
    info_ok, info_text = call([sys.executable, "-m", "polytopo.models", "info", model], work, log=log)
    result = {"info": info_ok, "info_text": "" if info_ok else info_text}
    if crop is None:
        result["run"] = "skipped (no --raster)"
        return result
    out = os.path.join(work, name + ".gpkg")
    run_ok, run_text = call([sys.executable, "-m", "polytopo.models", "run", "--model", model, "--raster", crop,
                             "--out", out, "--workers", "0", "--overwrite", *extra], work, log=log)
    if not run_ok:
        result["run"] = "failed: " + error_line(run_text)
        return result
    from osgeo import ogr

    source = ogr.Open(out)
    result["run"] = sum(source.GetLayer(i).GetFeatureCount() for i in range(source.GetLayerCount()))
    source = None
    if result["run"] == 0 and retry_threshold is not None:
        again = engine_checks(model, crop, work, name + "_threshold", (*extra, "--threshold", str(retry_threshold)))
        count = again["run"]
        result["run"] = f"0 at the card's threshold; {count} at --threshold {retry_threshold}"
        if not isinstance(count, int):
            result["run"] = "failed at --threshold: " + str(count)
    return result


# ---------------------------------------------------------------- baselines


def randomize_batch_norm(module, seed=0):
    """Give every batch normalization random statistics and affine terms (fresh ones are the identity).

    Freshly initialized networks often end in a batch normalization and a
    ReLU whose outputs are all zero in evaluation mode (HiSup's mask head
    gives 0.5 everywhere), which compares nothing; random statistics make
    every output depend on the image.
    """
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, torch.nn.modules.batchnorm._BatchNorm) and layer.running_mean is not None:
                shape = layer.running_mean.shape
                layer.running_mean.copy_(torch.randn(shape, generator=generator) * 0.1)
                layer.running_var.copy_(torch.rand(shape, generator=generator) * 1.5 + 0.5)
                if layer.affine:
                    layer.weight.copy_(torch.rand(shape, generator=generator) + 0.5)
                    layer.bias.copy_(torch.randn(shape, generator=generator) * 0.5)
    return module


class Check:
    """What a worker reports for one baseline."""

    def __init__(self, name):
        self.name = name
        self.version = ""
        self.rows = []
        self.notes = []
        self.engine = {}

    def add(self, output, sizes):
        self.rows.append({"output": output, "sizes": sizes})

    def report(self):
        return {"name": self.name, "version": self.version, "rows": self.rows, "notes": self.notes,
                "engine": self.engine}


def export_and_compare(check, script_name, argv, repo, paths, work, image, sizes, label=""):
    """Run the script as a user, rebuild its torch modules, compare the graph holding the card at each size."""
    ok, text = call([sys.executable, os.path.join(HERE, script_name + ".py"), *argv], repo, paths,
                    log=os.path.join(work, check.name + ".log"))
    if not ok:
        raise RuntimeError(f"{script_name}.py failed:\n{text}")
    script = load_script(script_name)
    graphs = script.build(script.options().parse_args(argv))
    for graph in graphs:
        graph.module.train(graph.batch_statistics)
    main = next(graph for graph in graphs if graph.card)
    per_output = {}
    outputs_by_size = {}
    for size in sizes:
        inputs = [engine_input(main.out, image, size)]
        result, got, want = compare(main.module, main.out, inputs, main.outputs)
        outputs_by_size[size] = (inputs, got, want)
        for name, value in result.items():
            per_output.setdefault(name, {})[size] = value
    for name, values in per_output.items():
        check.add(name + label, values)
    return graphs, outputs_by_size


def check_unet(check, work, image, crop, args):
    import segmentation_models_pytorch as smp
    import torch

    check.version = f"segmentation-models-pytorch {smp.__version__}"
    torch.manual_seed(0)
    model = randomize_batch_norm(smp.Unet("efficientnet-b3", encoder_weights=None, classes=1, activation=None))
    torch.save(model.state_dict(), os.path.join(work, "unet.pth"))
    onnx_path = os.path.join(work, "unet_smp.onnx")
    export_and_compare(check, "unet_smp", ["--checkpoint", os.path.join(work, "unet.pth"), "--out", onnx_path], work,
                       [], work, image, [512, 384])
    check.engine = engine_checks(onnx_path, crop, work, "unet_smp")


def check_maskrcnn(check, work, image, crop, args):
    import numpy as np
    import torch
    import torchvision

    check.version = f"torchvision {torchvision.__version__}"
    torch.manual_seed(0)
    detector = torchvision.models.detection.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=2)
    randomize_batch_norm(detector)
    torch.save(detector.state_dict(), os.path.join(work, "maskrcnn.pth"))
    onnx_path = os.path.join(work, "maskrcnn_torchvision.onnx")
    _, by_size = export_and_compare(check, "maskrcnn_torchvision",
                                    ["--checkpoint", os.path.join(work, "maskrcnn.pth"), "--out", onnx_path], work, [],
                                    work, image, [512, 384])
    # Detections are sorted by score, and random weights give near-equal scores whose order the two runtimes may
    # swap: detections are paired by their boxes (assignment on the largest coordinate difference) before comparing.
    # Pasted masks go through RoIAlign and a paste into the box's whole pixels: a box edge a hundredth of a pixel
    # off can move a row of the mask, so masks are judged by the share of pixels whose 0.5 decision differs.
    from scipy.optimize import linear_sum_assignment

    rows = {}
    for size, (_, got, want) in by_size.items():
        want = [w.detach().numpy() for w in want]
        if got[0].shape != want[0].shape:
            continue
        cost = np.abs(want[0][:, None, :] - got[0][None, :, :]).max(axis=2)
        a, b = linear_sum_assignment(cost)
        for index, name in enumerate(("boxes", "labels", "scores", "masks")):
            x, y = want[index][a].astype(np.float64), got[index][b].astype(np.float64)
            value = {"delta": float(np.abs(x - y).max()) if x.size else 0.0,
                     "scale": float(np.abs(x).max()) if x.size else 0.0}
            if name == "masks":  # judged by the pixels whose 0.5 decision differs (at most 1e-4 of them)
                value["flips"] = float(((x > 0.5) != (y > 0.5)).mean()) if x.size else 0.0
            rows.setdefault(f"{name} ({len(a)} detections paired by box)", {})[size] = value
        flips = int(((want[3][a] > 0.5) != (got[3][b] > 0.5)).sum())
        check.notes.append(f"masks at {size} px: {flips} of {got[3].size} mask pixels differ at 0.5; detections out of "
                           f"score order: {int((a != b).sum())}")
    if rows:
        check.rows = [row for row in check.rows if row["output"] not in ("boxes", "labels", "scores", "masks")]
        for name, sizes in rows.items():
            check.add(name, sizes)
    check.engine = engine_checks(onnx_path, crop, work, "maskrcnn_torchvision")


def check_hisup(check, work, image, crop, args):
    import numpy as np
    import torch
    from hisup.config import cfg
    from hisup.detector import BuildingDetector

    check.version = "HiSup"
    if not hasattr(np, "int"):
        np.int = int  # as hisup_heads.py: HiSup's HRNet calls np.int (removed in NumPy 1.24)
    config = os.path.join(args.repo, "config-files", "inria_hrnet48.yaml")
    cfg.merge_from_file(config)
    torch.manual_seed(0)
    detector = randomize_batch_norm(BuildingDetector(cfg, test=True))
    checkpoint = os.path.join(work, "hisup.pth")
    torch.save({"model": detector.state_dict(), "iteration": 0}, checkpoint)  # as HiSup's Checkpointer.save
    onnx_path = os.path.join(work, "hisup.onnx")
    graphs, by_size = export_and_compare(check, "hisup_heads", ["--config", config, "--checkpoint", checkpoint, "--out",
                                                          onnx_path], args.repo, repo_paths("hisup", args.repo),
                                         work, image, [512])
    # HiSup's own test-time decoding in torch: its mask (cv2.resize of remask) and its junctions (NMS, top-K, joff).
    inputs, got, _ = by_size[512]
    detector.load_state_dict(torch.load(checkpoint, weights_only=False)["model"])
    detector.eval()
    with torch.no_grad():
        own, _ = detector(torch.from_numpy(inputs[0]))
    mask_delta = float(np.abs(own["mask_pred"][0] - got[0][0, 0]).max())
    check.add("mask vs HiSup's own mask_pred", {512: {"delta": mask_delta, "scale": 1.0, "shape": list(got[0].shape)}})
    vertices = got[1][0, 0]
    juncs = own["juncs_pred"][0]
    inside = [(x, y) for x, y in juncs if 0 <= x < 512 and 0 <= y < 512]
    hits = 0
    for x, y in inside:
        r0, c0 = int(y // 4) * 4, int(x // 4) * 4
        block = vertices[r0:r0 + 4, c0:c0 + 4]
        r, c = np.unravel_index(int(np.argmax(block)), block.shape)
        hits += (r0 + r, c0 + c) == (int(y), int(x))
    check.notes.append(f"HiSup's own junctions (get_pred_junctions): {hits} of {len(inside)} are the peak pixel of the "
                       f"exported vertices map in their 4 x 4 cell")
    check.engine = engine_checks(onnx_path, crop, work, "hisup", retry_threshold=midpoint_threshold(got[0]))


def check_ffl(check, work, image, crop, args):
    import numpy as np
    import torch
    from backbone import get_backbone
    from frame_field_learning import data_transforms
    from frame_field_learning.model import FrameFieldModel
    from lydorn_utils import run_utils

    check.version = "FFL"
    # The run folder FFL's training writes: config.json with the defaults resolved (backbone not pretrained here).
    config = run_utils.load_config(os.path.join("configs", "config.inria_dataset_osm_aligned.unet_resnet101_pretrained.json"))
    config = run_utils.load_defaults_in_config(config, filepath_key="defaults_filepath")
    config["backbone_params"]["pretrained"] = False
    run_dir = os.path.join(work, "run")
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "config.json"), "w", encoding="utf-8") as handle:
        json.dump(config, handle)
    torch.manual_seed(0)
    model = randomize_batch_norm(FrameFieldModel(config, backbone=get_backbone(config["backbone_params"])))
    checkpoint = os.path.join(work, "checkpoint.best_val.epoch_000000.tar")
    torch.save({"epoch": 0, "model_state_dict": model.state_dict(), "train_loss": 0.0, "val_loss": 0.0}, checkpoint)
    onnx_path = os.path.join(work, "ffl.onnx")
    _, by_size = export_and_compare(check, "ffl", ["--run-dir", run_dir, "--checkpoint", checkpoint, "--out", onnx_path],
                                    args.repo, repo_paths("ffl", args.repo), work, image, [512, 384])
    # FFL's own inference path: its eval transform standardizes the 0-255 image with the image's NumPy mean and std.
    # (ffl.py's build, run above in this process, made the backbone's inference-time dropout the identity here too.)
    inputs, got, _ = by_size[512]
    image_float = np.transpose(inputs[0][0], (1, 2, 0)).astype(np.float64)  # the card's input is the 0-1 image
    mean = np.mean(image_float.reshape(-1, 3), axis=0)
    std = np.std(image_float.reshape(-1, 3), axis=0)
    sample = {"image": torch.from_numpy(np.rint(inputs[0] * 255)).to(torch.uint8),
              "image_mean": torch.from_numpy(mean)[None], "image_std": torch.from_numpy(std)[None]}
    model.eval_transform = data_transforms.get_eval_online_cuda_transform(config)
    model.eval()
    with torch.no_grad():
        own, _ = model(sample)
    for index, name in enumerate(("seg", "crossfield")):
        delta = float(np.abs(own[name].numpy() - got[index]).max())
        scale = float(np.abs(own[name].numpy()).max())
        check.add(f"{name} vs FFL's own eval transform + inference", {512: {"delta": delta, "scale": scale}})
    check.engine = engine_checks(onnx_path, crop, work, "ffl", retry_threshold=midpoint_threshold(got[0][:, 0]))


def vertex_graph_rows(check, got, want, size, label=""):
    """PolyWorld's outputs compared vertex by vertex.

    The top-256 peaks can tie (equal heatmap values): ties may come in another
    order or, at the 256th place, as another peak; only vertices found in both
    are compared.
    """
    import numpy as np

    want = [w.detach().numpy() for w in want]
    keys = [{tuple(v): i for i, v in enumerate(np.rint(vertices[0] * 2).astype(int).tolist())}
            for vertices in (want[0], got[0])]
    common = [(keys[0][k], keys[1][k]) for k in keys[0] if k in keys[1]]
    a, b = np.array([c[0] for c in common], int), np.array([c[1] for c in common], int)
    rows = {"vertices": (want[0][0, a], got[0][0, b]), "vertex_scores": (want[1][0, a], got[1][0, b]),
            "scores": (want[2][0][np.ix_(a, a)], got[2][0][np.ix_(b, b)])}
    check.rows = [row for row in check.rows if row["output"] not in {name + label for name in rows}]
    for name, (x, y) in rows.items():
        check.add(f"{name}{label} ({len(common)} of {want[0].shape[1]} vertices in both)",
                  {size: {"delta": float(np.abs(x.astype(float) - y).max()), "scale": float(np.abs(x).max())}})


def check_polyworld(check, work, image, crop, args):
    import numpy as np
    import torch
    from models.backbone import DetectionBranch, NonMaxSuppression, R2U_Net
    from models.matching import OptimalMatching

    check.version = "PolyWorld"
    torch.manual_seed(0)
    weights = os.path.join(work, "weights")
    os.makedirs(weights, exist_ok=True)
    parts = {"polyworld_backbone": R2U_Net(), "polyworld_seg_head": DetectionBranch(),
             "polyworld_matching": OptimalMatching()}
    for name, module in parts.items():
        torch.save(randomize_batch_norm(module, seed=len(name)).state_dict(), os.path.join(weights, name))
    onnx_path = os.path.join(work, "polyworld.onnx")
    graphs, by_size = export_and_compare(check, "polyworld", ["--weights", weights, "--out", onnx_path], args.repo,
                                         repo_paths("polyworld", args.repo), work, image, [512])
    inputs, got, want = by_size[512]
    vertex_graph_rows(check, got, want, 512)
    # PolyWorld's own prediction (prediction.py) in evaluation mode: its polygons' vertices must be exported vertices
    # (its COCO output scales the 320 px network grid to CrowdAI's 300 px images: undone here).
    backbone, head, matching = (parts[name].eval() for name in parts)
    with torch.no_grad():
        rgb = torch.from_numpy(inputs[0])
        features = backbone(rgb)
        _, graph = NonMaxSuppression()(head(features))
        polygons = matching.predict(rgb, features, graph)[0]
    exported = {tuple(v) for v in np.rint(got[0][0] - 0.5).astype(int).tolist()}
    own = [tuple(int(round(c * 320 / 300)) for c in polygon[i:i + 2])
           for polygon in polygons for i in range(0, len(polygon), 2)]
    found = sum(vertex in exported for vertex in own)
    check.notes.append(f"PolyWorld's own matching.predict: {len(polygons)} polygons, {found} of {len(own)} vertices "
                       f"are exported vertices - 0.5")
    check.engine = engine_checks(onnx_path, crop, work, "polyworld")
    # The release predicts in training mode: the --batch-statistics export, compared the same way, run with --batch 1.
    stats_path = os.path.join(work, "polyworld_batch_statistics.onnx")
    _, by_size = export_and_compare(check, "polyworld", ["--weights", weights, "--out", stats_path, "--batch-statistics"],
                                    args.repo, repo_paths("polyworld", args.repo), work, image, [512],
                                    " (--batch-statistics)")
    _, got, want = by_size[512]
    vertex_graph_rows(check, got, want, 512, " (--batch-statistics)")
    stats = engine_checks(stats_path, crop, work, "polyworld_batch_statistics", ("--batch", "1"))
    check.notes.append(f"--batch-statistics: info {'ok' if stats['info'] else 'FAILED'}, run {stats['run']}")


def check_pix2poly(check, work, image, crop, args):
    import numpy as np
    import onnxruntime as ort
    import torch
    from config import CFG
    from models.model import Decoder, Encoder, EncoderDecoder
    from tokenizer import Tokenizer
    from utils import scores_to_permutations, test_generate

    from polytopo.models.decoders.vertex_sequence import greedy_tokens

    check.version = "Pix2Poly"
    tokenizer = Tokenizer(num_classes=1, num_bins=CFG.NUM_BINS, width=CFG.INPUT_WIDTH, height=CFG.INPUT_HEIGHT,
                          max_len=CFG.MAX_LEN)
    CFG.PAD_IDX = tokenizer.PAD_code
    torch.manual_seed(0)
    encoder = Encoder(model_name=CFG.MODEL_NAME, pretrained=False, out_dim=256)
    decoder = Decoder(cfg=CFG, vocab_size=tokenizer.vocab_size, encoder_len=CFG.NUM_PATCHES, dim=256, num_heads=8,
                      num_layers=6)
    model = randomize_batch_norm(EncoderDecoder(cfg=CFG, encoder=encoder, decoder=decoder))
    checkpoint = os.path.join(work, "best_valid_loss.pth")
    torch.save({"state_dict": model.state_dict(), "epochs_run": 0, "loss": 0.0}, checkpoint)  # as Pix2Poly's engine.py
    onnx_path = os.path.join(work, "pix2poly_encoder.onnx")
    graphs, by_size = export_and_compare(check, "pix2poly", ["--checkpoint", checkpoint, "--out", onnx_path], args.repo,
                                         repo_paths("pix2poly", args.repo), work, image, [224])
    step = graphs[0]
    inputs, got, _ = by_size[224]
    model.eval()
    with torch.no_grad():
        own_memory = model.encoder(torch.from_numpy(inputs[0])).numpy()
    check.add("memory vs Pix2Poly's Encoder (AdaptiveAvgPool1d)",
              {224: {"delta": float(np.abs(own_memory - got[0]).max()), "scale": float(np.abs(own_memory).max())}})
    tokens = np.full((1, CFG.MAX_LEN - 1), CFG.PAD_IDX, np.int64)
    tokens[0, :9] = [tokenizer.BOS_code, 10, 20, 30, 40, 50, 60, tokenizer.EOS_code, CFG.PAD_IDX]
    result, _, _ = compare(step.module.eval(), step.out, [got[0], tokens], step.outputs)
    for name, value in result.items():
        check.add(f"{name} (decoder step)", {CFG.MAX_LEN - 1: value})
    # Pix2Poly's own greedy loop (test_generate, as its prediction scripts call it) against the engine's loop
    # (greedy_tokens) on the exported decoder, for the first STEPS steps (every step runs the whole decoder: the
    # 2 N + 1 steps of a tile take minutes on a CPU); then the successor scores and the assignment of the state
    # test_generate ends in, Pix2Poly's own ScoreNets against the exported graph.
    steps = 24
    image_tensor = torch.from_numpy(inputs[0])
    with torch.no_grad():
        own_tokens, _, _ = test_generate(model, image_tensor, tokenizer, max_len=steps, top_k=0, top_p=1)
    session = ort.InferenceSession(step.out, providers=["CPUExecutionProvider"])
    length = CFG.MAX_LEN - 1
    done = np.zeros((1, length, tokenizer.vocab_size), np.float32)
    done[..., CFG.PAD_IDX] = 1.0  # after STEPS steps: PAD everywhere, without running the decoder
    calls = []

    def engine_step(memory, tokens):
        calls.append(1)
        if len(calls) > steps:
            return done, np.zeros((1, CFG.N_VERTICES, CFG.N_VERTICES), np.float32)
        return session.run(["logits", "successors"], {"memory": memory, "tokens": tokens})

    engine_tokens, _, _ = greedy_tokens(engine_step, got[0], length, CFG.NUM_BINS)
    same = int((own_tokens[0].numpy() == engine_tokens[:steps + 1]).sum())
    state = np.full((1, length), CFG.PAD_IDX, np.int64)
    state[0, :steps + 1] = own_tokens[0].numpy()
    with torch.no_grad():
        feats = model.predict(image_tensor, torch.from_numpy(state[:, :steps + 1]))[1]
        own_scores = (model.scorenet1(feats) + torch.transpose(model.scorenet2(feats), 1, 2)).numpy()
    successors = session.run(["successors"], {"memory": got[0], "tokens": state})[0]
    check.add("successors vs Pix2Poly's own ScoreNets",
              {length: {"delta": float(np.abs(own_scores - successors).max()), "scale": float(np.abs(own_scores).max())}})
    equal = bool((scores_to_permutations(torch.from_numpy(successors)) ==
                  scores_to_permutations(torch.from_numpy(own_scores))).all())
    check.notes.append(f"greedy tokens of the first {steps} steps, engine loop on ONNX vs Pix2Poly's test_generate: "
                       f"{same} of {steps + 1} equal; Hungarian assignments of the successors equal: {equal}")
    # One tile (the top-left 480 px of the crop at 30 cm is 210 px at the card's 68.57 cm): 2 N + 1 decoder runs.
    extent = ("--extent=" + crop_extent(crop, 480),) if crop else ()
    check.engine = engine_checks(onnx_path, crop, work, "pix2poly", extent)


def crop_extent(crop, px):
    """The extent xmin,ymin,xmax,ymax of the crop's top-left px x px pixels (``run --extent``)."""
    from osgeo import gdal

    x0, dx, _, y0, _, dy = gdal.Open(crop).GetGeoTransform()
    xs, ys = (x0, x0 + px * dx), (y0, y0 + px * dy)
    return f"{min(xs)},{min(ys)},{max(xs)},{max(ys)}"


def write_box_prompts(crop, out):
    """Three box prompts (polygons) over the crop, in its CRS: a vector file for ``run --prompts``."""
    from osgeo import gdal, ogr, osr

    source = gdal.Open(crop)
    x0, dx, _, y0, _, dy = source.GetGeoTransform()
    driver = ogr.GetDriverByName("GeoJSON")
    target = driver.CreateDataSource(out)
    layer = target.CreateLayer("prompts", osr.SpatialReference(wkt=source.GetProjection()), ogr.wkbPolygon)
    for c0, r0, c1, r1 in ((60, 60, 220, 200), (300, 120, 520, 300), (150, 350, 420, 560)):
        ring = ogr.Geometry(ogr.wkbLinearRing)
        for c, r in ((c0, r0), (c1, r0), (c1, r1), (c0, r1), (c0, r0)):
            ring.AddPoint_2D(x0 + c * dx, y0 + r * dy)
        polygon = ogr.Geometry(ogr.wkbPolygon)
        polygon.AddGeometry(ring)
        feature = ogr.Feature(layer.GetLayerDefn())
        feature.SetGeometry(polygon)
        layer.CreateFeature(feature)
    target = None
    return out


def check_sam(check, work, image, crop, args):
    from importlib.metadata import version

    import numpy as np
    import torch
    from segment_anything import sam_model_registry

    check.version = f"segment-anything {version('segment-anything')} {args.sam_type}"
    torch.manual_seed(0)
    sam = sam_model_registry[args.sam_type](checkpoint=None)
    checkpoint = os.path.join(work, f"sam_{args.sam_type}.pth")
    torch.save(sam.state_dict(), checkpoint)
    encoder_path, decoder_path = os.path.join(work, "sam_encoder.onnx"), os.path.join(work, "sam_decoder.onnx")
    decoder_argv = ["--checkpoint", checkpoint, "--model-type", args.sam_type, "--out", decoder_path]
    ok, text = call([sys.executable, os.path.join(HERE, "sam_decoder.py"), *decoder_argv], work,
                    log=os.path.join(work, "sam.log"))
    if not ok:
        raise RuntimeError(f"sam_decoder.py failed:\n{text}")
    _, by_size = export_and_compare(check, "sam_encoder", ["--checkpoint", checkpoint, "--model-type", args.sam_type,
                                                           "--out", encoder_path], work, [], work, image, [1024])
    # The prompt decoder against segment-anything's own export wrapper (SamOnnxModel) in torch, with a box prompt.
    _, got, _ = by_size[1024]
    script = load_script("sam_decoder")
    decoder = script.build(script.options().parse_args(decoder_argv))[0].module.eval()
    inputs = [got[0], np.array([[[60.0, 60.0], [220.0, 200.0]]], np.float32), np.array([[2.0, 3.0]], np.float32),
              np.zeros((1, 1, 256, 256), np.float32), np.zeros(1, np.float32), np.array([1024.0, 1024.0], np.float32)]
    result, _, _ = compare(decoder, decoder_path, inputs, ["masks", "iou_predictions", "low_res_masks"])
    for name, value in result.items():
        check.add(f"{name} (sam_decoder.py, box prompt)", {1024: value})
    if args.repo:
        ok, text = call([sys.executable, os.path.join("scripts", "export_onnx_model.py"), "--checkpoint", checkpoint,
                         "--model-type", args.sam_type, "--output", os.path.join(work, "sam_decoder_script.onnx"),
                         "--return-single-mask", "--opset", "17"], args.repo, [args.repo],
                        log=os.path.join(work, "sam_script.log"))
        check.notes.append(f"segment-anything {git_commit(args.repo)} scripts/export_onnx_model.py with torch "
                           f"{torch.__version__}: " + ("ok" if ok else "fails: " + error_line(text)))
    prompts = write_box_prompts(crop, os.path.join(work, "prompts.geojson")) if crop else None
    check.engine = engine_checks(encoder_path, crop, work, "sam", ("--prompts", prompts) if prompts else ())


TORCHSCRIPT_LAUNCHER = """
import functools, os, runpy, sys, torch
torch.onnx.export = functools.partial(torch.onnx.export, dynamo=False)
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
"""
"""Runs a script whose ``torch.onnx.export`` calls should use the TorchScript exporter (torch 2.9+ defaults to dynamo)."""


def check_sam2(check, work, image, crop, args):
    """SAM 2 through onnxruntime's own exporter (onnxruntime.transformers.models.sam2.convert_to_onnx)."""
    import numpy as np
    import onnxruntime
    import torch
    from sam2.build_sam import build_sam2

    tool = os.path.join(os.path.dirname(onnxruntime.__file__), "transformers", "models", "sam2")
    sys.path.insert(0, tool)
    from image_decoder import SAM2ImageDecoder
    from image_encoder import SAM2ImageEncoder
    from sam2_utils import _get_model_cfg

    check.version = f"sam2 {args.sam2_type}, onnxruntime {onnxruntime.__version__} convert_to_onnx"
    # The tool wants SAM2_DIR/checkpoints/MODEL.pt and a SAM2_DIR/sam2_configs folder (the repository's layout before
    # SAM 2.1); a folder in the work folder gives it both without writing into the checkout.
    sam2_dir = os.path.join(work, "sam2_dir")
    os.makedirs(os.path.join(sam2_dir, "checkpoints"), exist_ok=True)
    if not os.path.exists(os.path.join(sam2_dir, "sam2_configs")):
        os.symlink(os.path.join(args.repo, "sam2", "configs", "sam2"), os.path.join(sam2_dir, "sam2_configs"))
    torch.manual_seed(0)
    model = build_sam2(_get_model_cfg(args.sam2_type), None, device="cpu")
    torch.save({"model": model.state_dict()}, os.path.join(sam2_dir, "checkpoints", args.sam2_type + ".pt"))
    tool_args = [os.path.join(tool, "convert_to_onnx.py"), "--sam2_dir", sam2_dir, "--model_type", args.sam2_type,
                 "--components", "image_encoder", "image_decoder", "--output_dir", work, "--overwrite"]
    ok, text = call([sys.executable, *tool_args], work, repo_paths("sam2", args.repo), log=os.path.join(work, "sam2.log"))
    check.notes.append(f"convert_to_onnx.py as shipped, torch {torch.__version__}: "
                       + ("ok" if ok else "fails: " + error_line(text)))
    if not ok:  # the tool calls torch.onnx.export without dynamo=False: run it with the TorchScript exporter
        ok, text = call([sys.executable, "-c", TORCHSCRIPT_LAUNCHER, *tool_args], work, repo_paths("sam2", args.repo),
                        log=os.path.join(work, "sam2.log"))
        check.notes.append("convert_to_onnx.py with torch.onnx.export(dynamo=False): " + ("ok" if ok else "fails"))
    if not ok:
        raise RuntimeError(f"onnxruntime's SAM 2 convert_to_onnx.py failed:\n{text}")
    encoder_path = os.path.join(work, f"{args.sam2_type}_image_encoder.onnx")
    decoder_name = f"{args.sam2_type}_image_decoder.onnx"
    ok, text = call([sys.executable, "-m", "polytopo.models", "write-card", encoder_path, "--from",
                     os.path.join(HERE, "cards", "sam2.json"), "--set", f"polytopo.prompt_decoder={json.dumps(decoder_name)}"],
                    work, log=os.path.join(work, "sam2.log"))
    if not ok:
        raise RuntimeError(f"write-card refused the sam2 card:\n{text}")
    model.eval()
    encoder = SAM2ImageEncoder(model).eval()
    inputs = [engine_input(encoder_path, image, 1024)]
    names = ["image_features_0", "image_features_1", "image_embeddings"]
    result, got, _ = compare(encoder, encoder_path, inputs, names)
    for name, value in result.items():
        check.add(name, {1024: value})
    decoder = SAM2ImageDecoder(model, multimask_output=False).eval()
    prompt = [*got, np.array([[[60.0, 60.0], [220.0, 200.0]]], np.float32), np.array([[2, 3]], np.int32),
              np.zeros((1, 1, 256, 256), np.float32), np.zeros(1, np.float32), np.array([1024, 1024], np.int32)]
    result, _, _ = compare(decoder, os.path.join(work, decoder_name), prompt, ["masks", "iou_predictions", "low_res_masks"])
    for name, value in result.items():
        check.add(f"{name} (decoder, box prompt)", {1024: value})
    prompts = write_box_prompts(crop, os.path.join(work, "prompts.geojson")) if crop else None
    check.engine = engine_checks(encoder_path, crop, work, "sam2", ("--prompts", prompts) if prompts else ())


CHECKS = {"sam": check_sam, "sam2": check_sam2, "ffl": check_ffl, "polyworld": check_polyworld, "pix2poly": check_pix2poly, "unet_smp": check_unet, "maskrcnn_torchvision": check_maskrcnn, "hisup": check_hisup}


# ---------------------------------------------------------------- table


def passed(value):
    if "flips" in value:
        return value["flips"] <= 1e-4
    return "delta" in value and value["delta"] <= value.get("atol", ATOL) + RTOL * value["scale"]


def describe(value):
    if "flips" in value:
        return f"{value['delta']:.2e}, pixels differing at 0.5: {value['flips']:.1e}"
    return f"{value['delta']:.2e}" if "delta" in value else str(value.get("shape"))


def table(reports):
    lines = ["| baseline | version / commit | output | max abs diff (size px) | onnx ok | info | run (polygons) |",
             "|---|---|---|---|---|---|---|"]
    for report in reports:
        if "skipped" in report or "error" in report:
            reason = report.get("skipped") or "FAILED: " + error_line(report["error"])
            lines.append(f"| {report['name']} | {report.get('version', '')} | – | {reason} | – | – | – |")
            continue
        engine = report["engine"]
        info = "ok" if engine.get("info") else "FAILED"
        run = engine.get("run")
        run = f"ok, {run}" if isinstance(run, int) or not str(run).startswith(("failed", "skipped")) else run
        for index, row in enumerate(report["rows"]):
            sizes = "; ".join(describe(v) + f" ({s})" for s, v in row["sizes"].items())
            good = "yes" if all(passed(v) for v in row["sizes"].values()) else "NO"
            first = index == 0
            lines.append(f"| {report['name'] if first else ''} | {report['version'] if first else ''} | "
                         f"{row['output']} | {sizes} | {good} | {info if first else ''} | {run if first else ''} |")
        for note in report["notes"]:
            lines.append(f"| | | {note} | | | | |")
    return "\n".join(lines)


def worker(args):
    name = args.worker
    check = Check(name)
    try:
        CHECKS[name](check, args.out, args.image, args.image, args)
        report = check.report()
    except Exception:
        report = check.report()
        report["error"] = traceback.format_exc()
    print("VERIFY-REPORT " + json.dumps(report))


def main(argv=None):
    sys.dont_write_bytecode = True
    args = options().parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    out = os.path.abspath(args.out or tempfile.mkdtemp(prefix="polytopo-verify-"))
    os.makedirs(out, exist_ok=True)
    image = write_crop(args.raster, args.crop, os.path.join(out, "crop.tif")) if args.raster else None
    reports = []
    for name in args.only or BASELINES:
        work = os.path.join(out, name)
        os.makedirs(work, exist_ok=True)
        option = REPO_OPTION.get(name)
        repo = getattr(args, option) if option else None
        sam_repo = os.path.abspath(args.sam_repo) if name == "sam" and args.sam_repo else None
        if option and not repo:
            reports.append({"name": name, "skipped": f"skipped (no --{option.replace('_', '-')})"})
            continue
        if name not in CHECKS:
            reports.append({"name": name, "skipped": "skipped (no check)"})
            continue
        command = [sys.executable, os.path.abspath(__file__), "--worker", name, "--out", work,
                   "--sam-type", args.sam_type]
        if image:
            command += ["--image", image]
        if sam_repo:
            command += ["--repo", sam_repo]
        command += ["--sam2-type", args.sam2_type]
        paths = []
        if repo:
            repo = os.path.abspath(repo)
            command += ["--repo", repo]
            paths = repo_paths(name, repo)
        print(f"checking {name} ...", flush=True)
        done = subprocess.run(command, cwd=repo or work, env=environment(paths), capture_output=True, text=True)
        with open(os.path.join(work, "worker.log"), "w", encoding="utf-8") as handle:
            handle.write(done.stdout + done.stderr)
        found = [line for line in done.stdout.splitlines() if line.startswith("VERIFY-REPORT ")]
        if found:
            report = json.loads(found[-1][len("VERIFY-REPORT "):])
        else:
            report = {"name": name, "error": (done.stderr or "no report").strip()}
        if repo:
            report["version"] = f"{report.get('version') or name} @ {git_commit(repo)}"
        reports.append(report)
        print(table([report]).splitlines()[-1], flush=True)
    print()
    print(table(reports))
    with open(os.path.join(out, "verify.json"), "w", encoding="utf-8") as handle:
        json.dump(reports, handle, indent=1)
    print(f"\nwork folder: {out}")
    skipped = [r["name"] for r in reports if "skipped" in r]
    bad = [r for r in reports if "error" in r or any(not passed(v) for row in r.get("rows", ())
                                                     for v in row["sizes"].values())
           or r.get("engine", {}).get("info") is False or str(r.get("engine", {}).get("run", "")).startswith("failed")]
    no_run = [r for r in reports if str(r.get("engine", {}).get("run", "")).startswith("skipped")]
    skipped += [r["name"] + " (its run check)" for r in no_run]
    passed_names = [r["name"] for r in reports if r not in bad and r not in no_run and "skipped" not in r]
    print(f"passed: {', '.join(passed_names) or 'none'}; skipped: {', '.join(skipped) or 'none'}; "
          f"failed: {', '.join(r['name'] for r in bad) or 'none'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
