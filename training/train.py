"""Train one recipe on the CPU with a fixed seed and step count, and save a checkpoint.

Importing this module imports PyTorch (see :mod:`.torch_support`).

Losses (``valid`` pixels only, all means over pixels):

* ``binary``: binary cross-entropy + soft Dice on the building logit, the
  paper's "combined Dice and cross-entropy" for U-Net + Poly.;
* ``boundary3``: cross-entropy over (background, building, boundary) with the
  boundary class weighted by ``boundary_weight``, + soft Dice on the merged
  foreground P(building) + P(boundary) that the exported graph outputs;
* ``courtyard4``: the same with a fourth class, courtyard (a building's hole
  that no building covers), weighted by ``courtyard_weight``; for both, a recipe
  with loss weights (``small_building_m2``, ``gap_weight``, ``wall_weight``) also
  weights each pixel's cross-entropy by :func:`.targets.instance_weights` (small
  buildings, the ground between two buildings and both sides of a shared wall raised);
* ``vertex``: the ``binary`` loss on the mask logit + the penalty-reduced
  focal loss of CornerNet/CenterNet (alpha 2, beta 4) on the vertex heatmap,
  normalized by the number of vertices.

The learning rate follows :mod:`.schedule` (AdamW, weight decay 1e-4).
"""

import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely

from ..models.decoders.vertex_mask import heatmap_peaks
from .errors import TrainingError
from .nets import build_net
from .samples import CropSampler, channel_statistics, training_samples
from .schedule import learning_rate_at, learning_rate_at_step, parameter_groups
from .torch_support import configure_torch

__all__ = ["TrainResult", "calibrate_vertex_threshold", "checkpoint_path", "predict_logits", "train"]

WEIGHT_DECAY = 1e-4
VERTEX_MATCH_PX = 2.0
"""A heatmap peak within this distance of a label vertex counts as found (calibration)."""
VERTEX_PRIOR_LOGIT = -4.6
"""Initial bias of the vertex logit (probability 0.01), as CenterNet does for its heatmaps."""
VERTEX_THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(1, 15))


@dataclass(frozen=True)
class TrainResult:
    """What a training run produced.

    Attributes
    ----------
    checkpoint : pathlib.Path
    seconds : float
        Wall time of the run (data reading included).
    final_loss : float
        Mean loss over the last 10 % of the steps.
    """

    checkpoint: Path
    seconds: float
    final_loss: float


def checkpoint_path(work_dir, name):
    """Where the checkpoint of model ``name`` is saved."""
    return Path(work_dir) / "checkpoints" / f"{name}.pt"


def _normalize(images, recipe, mean, std):
    low, high = recipe.input_range
    x = (images - low) / (high - low)
    return (x - np.asarray(mean, np.float32)[:, None, None]) / np.asarray(std, np.float32)[:, None, None]


def _dice(probability, target, valid, torch):
    p, t = probability * valid, target * valid
    return 1.0 - (2.0 * (p * t).sum() + 1.0) / (p.sum() + t.sum() + 1.0)


def _masked_mean(values, valid):
    return (values * valid).sum() / valid.sum().clamp(min=1.0)


def _loss(logits, batch, recipe, torch):
    functional = torch.nn.functional
    valid = batch["valid"]
    classes = batch["classes"]
    if recipe.head in ("boundary3", "courtyard4"):
        weights = torch.tensor([1.0, 1.0, recipe.boundary_weight, recipe.courtyard_weight][:recipe.out_channels])
        ce = functional.cross_entropy(logits, classes.long(), weight=weights, reduction="none")
        pixel_weight = weights[classes.long()]
        if "weights" in batch:
            ce, pixel_weight = ce * batch["weights"], pixel_weight * batch["weights"]
        ce = (ce * valid).sum() / (pixel_weight * valid).sum().clamp(min=1.0)
        p = torch.softmax(logits, dim=1)
        foreground = p[:, 1] + p[:, 2]
        return ce + _dice(foreground, ((classes == 1) | (classes == 2)).float(), valid, torch)
    target = (classes > 0).float()
    mask_logit = logits[:, 0]
    bce = _masked_mean(functional.binary_cross_entropy_with_logits(mask_logit, target, reduction="none"), valid)
    loss = bce + _dice(torch.sigmoid(mask_logit), target, valid, torch)
    if recipe.head == "vertex":
        heat = batch["heatmap"]
        p = torch.sigmoid(logits[:, 1]).clamp(1e-4, 1.0 - 1e-4)
        positive = (heat >= 1.0).float()
        pos = -((1.0 - p) ** 2) * torch.log(p) * positive
        neg = -((1.0 - heat) ** 4) * (p**2) * torch.log(1.0 - p) * (1.0 - positive)
        count = (positive * valid).sum().clamp(min=1.0)
        loss = loss + ((pos + neg) * valid).sum() / count
    return loss


def _batch(crops, recipe, mean, std, torch):
    images = np.stack([_normalize(c.image, recipe, mean, std) for c in crops]).astype(np.float32)
    batch = {
        "image": torch.from_numpy(images),
        "valid": torch.from_numpy(np.stack([c.valid for c in crops]).astype(np.float32)),
        "classes": torch.from_numpy(np.stack([c.classes for c in crops]).astype(np.int64)),
    }
    if recipe.head == "vertex":
        batch["heatmap"] = torch.from_numpy(np.stack([c.heatmap for c in crops]))
    if crops[0].weights is not None:
        batch["weights"] = torch.from_numpy(np.stack([c.weights for c in crops]))
    return batch


def predict_logits(net, image, recipe, mean, std, torch):
    """Raw network logits of a whole (bands, rows, cols) raster sample, (channels, rows, cols)."""
    x = _normalize(image, recipe, mean, std)[None].astype(np.float32)
    rows, cols = image.shape[1:]
    pad_r, pad_c = (-rows) % recipe.reduction, (-cols) % recipe.reduction
    x = np.pad(x, ((0, 0), (0, 0), (0, pad_r), (0, pad_c)), mode="edge")
    net.eval()
    with torch.no_grad():
        logits = net(torch.from_numpy(x))[0, :, :rows, :cols].numpy()
    return logits


def calibrate_vertex_threshold(heatmap, valid, polygons):
    """Heatmap threshold with the best vertex F1 on training ground (never the held-out ground).

    Parameters
    ----------
    heatmap : numpy.ndarray, shape (rows, cols)
        Vertex probabilities.
    valid : numpy.ndarray of bool
    polygons : sequence of shapely.Polygon
        Labels in grid pixels.

    Returns
    -------
    threshold : float
        One of :data:`VERTEX_THRESHOLDS`.
    f1 : float
    """
    rings = shapely.get_rings(np.asarray(polygons, object))
    coords, index = shapely.get_coordinates(rings, return_index=True)
    vertices = coords[np.r_[index[1:] == index[:-1], False]]
    rows, cols = valid.shape
    inside = (vertices[:, 0] >= 0) & (vertices[:, 0] < cols) & (vertices[:, 1] >= 0) & (vertices[:, 1] < rows)
    vertices = vertices[inside]
    vertices = vertices[valid[vertices[:, 1].astype(int), vertices[:, 0].astype(int)]]
    tree = shapely.STRtree(shapely.points(vertices))
    best = (VERTEX_THRESHOLDS[0], 0.0)
    for threshold in VERTEX_THRESHOLDS:
        peaks = heatmap_peaks(np.where(valid, heatmap, 0.0), threshold)
        if not len(peaks):
            continue
        near_pred, near_gt = tree.query(shapely.points(peaks), predicate="dwithin", distance=VERTEX_MATCH_PX)
        precision = len(np.unique(near_pred)) / len(peaks)
        recall = len(np.unique(near_gt)) / max(len(vertices), 1)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if f1 > best[1]:
            best = (threshold, f1)
    return best[0], round(float(best[1]), 4)


def train(recipe, shared, work_dir, threads=2, log=print, checkpoint_every=0, resume=None, time_budget=None):
    """Train ``recipe`` from scratch and save its checkpoint.

    Parameters
    ----------
    recipe : Recipe
    shared : SharedData
    work_dir : pathlib.Path
        Mosaics, georeferenced tiles and checkpoints go here.
    threads : int
        PyTorch CPU threads.
    log : callable(str)
    checkpoint_every : int
        Also save the checkpoint every that many steps (0: only at the end), so a run
        cut short still leaves weights (``<name>-step<N>.pt``).
    resume : pathlib.Path or None
        Start from the weights of this checkpoint of the same recipe (a run cut short)
        instead of the pretrained encoder: the recipe's ``steps`` and ``learning_rate``
        are then a second schedule (warm-up and cosine decay again, fresh AdamW moments);
        the checkpoint records both phases and the summed wall time.
    time_budget : float or None
        Seconds of optimizer steps (data reading excluded): the warm-up and cosine decay
        follow the elapsed share of this budget (or of ``recipe.steps``, whichever is
        further) and training stops when it is spent, so a run on a loaded machine still
        ends annealed at a known time. The steps done are recorded.

    Returns
    -------
    TrainResult
    """
    started = time.perf_counter()
    torch = configure_torch(recipe.seed, threads)
    work_dir = Path(work_dir)
    samples = training_samples(recipe, shared, work_dir)
    mean, std = channel_statistics(samples, *recipe.input_range, fixed=recipe.standardization)
    log(f"{recipe.name}: {len(samples)} training samples, mean {mean}, std {std} "
        f"({time.perf_counter() - started:.0f} s)")
    for item in samples:
        log(f"  {item.sample.name}: {item.sample.valid.shape[1]} x {item.sample.valid.shape[0]} px, "
            f"{len(item.sample.polygons)} labels, weight {item.weight:.4f}, label reach {item.label_reach_px:g} px")
    sampler = CropSampler(samples, recipe, np.random.default_rng(recipe.seed))
    net = build_net(recipe, pretrained=resume is None and recipe.fine_tune_from is None)
    if resume is None and recipe.fine_tune_from is not None:
        _load_start_weights(net, recipe, work_dir, torch, log)
    previous = None
    if resume is not None:
        info = torch.load(resume, map_location="cpu", weights_only=True)
        if info.get("recipe") != recipe.name:
            raise TrainingError(f"Expected a checkpoint of {recipe.name!r} in {resume} but got one of {info.get('recipe')!r}.")
        net.load_state_dict(info["state_dict"])
        named = re.search(r"-step(\d+)\.pt$", str(resume))
        steps_done = info.get("completed_steps") or (int(named.group(1)) if named else 0)
        previous = {"checkpoint": Path(resume).name, "steps": int(steps_done),
                    "seconds": float(info["train_seconds"]), "phases": list(info.get("phases") or [])}
        log(f"{recipe.name}: resumed from {resume} ({previous['steps']} steps, {previous['seconds']:.0f} s)")
    if recipe.head == "vertex":
        with torch.no_grad():
            net.head.bias[1] = VERTEX_PRIOR_LOGIT
    optimizer = torch.optim.AdamW(parameter_groups(net, recipe), lr=recipe.learning_rate, weight_decay=WEIGHT_DECAY)
    losses = []
    loop_started = time.perf_counter()
    completed = recipe.steps
    for step in range(recipe.steps):
        if time_budget is not None:
            progress = max(step / recipe.steps, (time.perf_counter() - loop_started) / time_budget)
            if progress >= 1.0:
                completed = step
                log(f"{recipe.name}: time budget of {time_budget:g} s spent after {step} steps")
                break
            rate = learning_rate_at(progress, recipe)
        else:
            rate = learning_rate_at_step(step, recipe)
        for group in optimizer.param_groups:
            group["lr"] = rate * group["scale"]
        batch = _batch([sampler.draw() for _ in range(recipe.batch_size)], recipe, mean, std, torch)
        net.train()
        loss = _loss(net(batch["image"]), batch, recipe, torch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().item())
        if (step + 1) % 25 == 0 or step + 1 == recipe.steps:
            log(f"{recipe.name}: step {step + 1}/{recipe.steps} loss {np.mean(losses[-25:]):.4f} "
                f"lr {rate:.2e} ({time.perf_counter() - started:.0f} s)")
        if checkpoint_every and (step + 1) % checkpoint_every == 0 and step + 1 < recipe.steps:
            _save(checkpoint_path(work_dir, f"{recipe.name}-step{step + 1}"), recipe, net, mean, std, None, None,
                  time.perf_counter() - started, float(np.mean(losses[-max(1, recipe.steps // 10):])), len(samples),
                  torch, step + 1, previous)
    vertex_threshold, vertex_f1 = None, None
    if recipe.head == "vertex":
        reference = next(s.sample for s in samples if s.sample.name.endswith("z20"))
        logits = predict_logits(net, reference.image, recipe, mean, std, torch)
        heatmap = 1.0 / (1.0 + np.exp(-logits[1]))
        vertex_threshold, vertex_f1 = calibrate_vertex_threshold(heatmap, reference.valid, reference.polygons)
        log(f"{recipe.name}: vertex threshold {vertex_threshold} (vertex F1 {vertex_f1} on training ground)")
    seconds = time.perf_counter() - started
    path = checkpoint_path(work_dir, recipe.name)
    final_loss = float(np.mean(losses[-max(1, completed // 10):]))
    _save(path, recipe, net, mean, std, vertex_threshold, vertex_f1, seconds, final_loss, len(samples), torch,
          completed, previous, time_budget)
    total = seconds + (previous["seconds"] if previous else 0.0)
    return TrainResult(path, total, final_loss)


def _load_start_weights(net, recipe, work_dir, torch, log):
    """Load the final checkpoint of ``recipe.fine_tune_from`` (same work folder) into ``net``."""
    start = checkpoint_path(work_dir, recipe.fine_tune_from)
    if not start.is_file():
        raise TrainingError(
            f"{recipe.name} is fine-tuned from {recipe.fine_tune_from}, whose checkpoint {start} does not exist. "
            f"Train {recipe.fine_tune_from} first with the same --work-dir."
        )
    info = torch.load(start, map_location="cpu", weights_only=True)
    if info.get("recipe") != recipe.fine_tune_from:
        raise TrainingError(f"Expected a checkpoint of {recipe.fine_tune_from!r} in {start} but got one of "
                            f"{info.get('recipe')!r}.")
    state, own = info["state_dict"], net.state_dict()
    grown = _grow_head(state, own, torch)
    fresh = sorted(key for key, value in grown.items() if key in own and own[key].shape != value.shape)
    if any(not key.startswith("head.") for key in fresh):
        raise TrainingError(f"{recipe.name} cannot start from {start}: its layers {fresh} differ in shape beyond the "
                            "output head; fine-tune from a recipe with the same encoder and decoder.")
    net.load_state_dict({key: value for key, value in grown.items() if key not in fresh}, strict=not fresh)
    note = f"; the output head ({', '.join(fresh)}) has other channels and starts fresh" if fresh else ""
    if grown is not state:
        note = "; the output head's added classes start as the background's"
    log(f"{recipe.name}: starting from the weights of {start} ({info.get('completed_steps')} steps){note}")


_NEW_CLASS_BIAS = -2.0
"""Logit offset of a head's added classes against the background's at the start (P about e^-2 of it)."""


def _grow_head(state, own, torch):
    """``state`` with a head of more classes than the checkpoint's: its rows kept, each added row the background's.

    A class the start never had (the courtyard of a ``courtyard4`` head fine-tuned from a
    ``boundary3`` checkpoint) then starts as a less likely background, and every other
    class keeps what was learned. Heads of other shapes are left alone (they start fresh).
    """
    weight, bias = state.get("head.weight"), state.get("head.bias")
    if weight is None or bias is None or "head.weight" not in own:
        return state
    rows = own["head.weight"].shape[0]
    if rows <= weight.shape[0] or own["head.weight"].shape[1:] != weight.shape[1:]:
        return state
    added = rows - weight.shape[0]
    grown = dict(state)
    grown["head.weight"] = torch.cat([weight, weight[:1].repeat(added, 1, 1, 1)])
    grown["head.bias"] = torch.cat([bias, bias[:1].repeat(added) + _NEW_CLASS_BIAS])
    return grown


def _save(path, recipe, net, mean, std, vertex_threshold, vertex_f1, seconds, final_loss, samples, torch,
          completed_steps, previous=None, time_budget=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    phases = (previous["phases"] if previous else []) + [
        {"steps": int(completed_steps), "of_schedule": recipe.steps, "learning_rate": recipe.learning_rate,
         "seconds": round(seconds, 1), "time_budget_s": time_budget}]
    if previous and not previous["phases"]:
        phases.insert(0, {"steps": previous["steps"], "seconds": round(previous["seconds"], 1),
                          "checkpoint": previous["checkpoint"]})
    torch.save(
        {
            "recipe": recipe.name,
            "state_dict": net.state_dict(),
            "mean": mean,
            "std": std,
            "vertex_threshold": vertex_threshold,
            "vertex_f1_train": vertex_f1,
            "train_seconds": round(seconds + (previous["seconds"] if previous else 0.0), 1),
            "completed_steps": int(completed_steps) + (previous["steps"] if previous else 0),
            "phases": phases,
            "final_loss": round(final_loss, 4),
            "samples": samples,
            "torch_version": str(torch.__version__),  # a plain str, loadable with weights_only
        },
        path,
    )
