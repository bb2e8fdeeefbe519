"""Training samples of a recipe, read once, and random training crops with their targets.

:func:`training_samples` reads every training raster of a recipe on the
model grid (never the held-out ground, see :mod:`.data`), with a sampling
weight per sample. :class:`CropSampler` draws square crops, applies the
augmentations of the recipe (:mod:`.augment`: scale, rotation, dihedral flips,
colour, blur, JPEG and noise as its strength says, and synthetic courtyards for
recipes that ask for them) and builds the targets
from the label polygons of the crop (:mod:`.targets`), so the labels and the
image always agree.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely
from scipy import ndimage

from ..models.raster.reading import open_raster
from . import data
from .augment import CropWindow, photometric, warp, window_polygons
from .rendered import rendered_samples
from .targets import CourtyardParams, carve_courtyards, class_map, instance_weights, vertex_heatmap

__all__ = ["Crop", "CropSampler", "WeightedSample", "channel_statistics", "label_reach_px", "training_samples"]


@dataclass(frozen=True)
class WeightedSample:
    """A :class:`~polytopo.training.data.GridSample` and its share of the crops.

    ``label_reach_px`` > 0 marks noisy labels that miss buildings: only pixels within
    that distance of a labelled building count in the loss, so an unlabelled house is
    not taught as background.
    """

    sample: data.GridSample
    weight: float
    label_reach_px: float = 0.0


JOPLIN_TILES = ("tile_1361-10160.tif", "tile_1361-9136.tif", "tile_337-10160.tif", "tile_337-9136.tif")
"""The four xView2 Joplin tiles (0.6 m RGB) in ``imagery/xview2_joplin``."""


def _place_samples(recipe, place, fair_dir, work_dir):
    """Every zoom level and patch of one fAIr place on the model grid."""
    folder = data.place_folder(fair_dir, place)
    labels = None
    out = []
    for zoom in data.KAMPALA_ZOOMS:
        for index, patch in enumerate(data.xyz_patches(data.place_tiles(fair_dir, place, zoom))):
            tiles_dir = Path(work_dir) / "train_places" / place / f"z{zoom}"
            georeferenced = [data.georeference_xyz_tile(path, tile, tiles_dir / f"{path.stem}.vrt") for tile, path in patch]
            mosaic = data.build_kampala_mosaic(georeferenced, tiles_dir / f"{place}_z{zoom}_patch{index}.vrt")
            if labels is None:
                labels = data.read_polygons(folder / "labels.geojson", open_raster(mosaic)[1].crs_wkt)
            out.append(data.read_sample(f"{place}-train-z{zoom}-patch{index}", mosaic, labels, recipe.resolution_cm,
                                        recipe.bands))
    return out


def _joplin_samples(recipe, root):
    folder = Path(root) / "imagery" / "xview2_joplin"
    out = []
    for name in JOPLIN_TILES:
        raster = folder / name
        labels = data.read_polygons(folder / "joplin.geojson", open_raster(raster)[1].crs_wkt)
        out.append(data.read_sample(f"joplin-{Path(name).stem}", raster, labels, recipe.resolution_cm, recipe.bands))
    return out


def _by_area(samples, share, reach_px=0.0):
    areas = np.asarray([float(s.valid.sum()) for s in samples])
    return [WeightedSample(s, share * a / areas.sum(), reach_px) for s, a in zip(samples, areas)]


def label_reach_px(recipe, source):
    """How far from a label a pixel of one training source still counts in the loss, model-grid px.

    ``source`` is ``"joplin"``, ``"kampala"`` or a place of ``recipe.train_places``. The
    recipe's ``noisy_sources`` have labels that miss buildings: ``label_reach_m`` converted
    to pixels. Every other source: 0 (every pixel counts).
    """
    if source in recipe.noisy_sources:
        return 100.0 * recipe.label_reach_m / recipe.resolution_cm
    return 0.0


def training_samples(recipe, shared, work_dir):
    """Read the training rasters of ``recipe``.

    Parameters
    ----------
    recipe : Recipe
    shared : SharedData
    work_dir : pathlib.Path
        Where the mosaics are written.

    Returns
    -------
    list of WeightedSample
        Weights sum to 1; rendered samples (``recipe.rendered_share > 0``) share that
        part of the weight, the real imagery the rest.
    """
    if recipe.source == "atlanta_pan":
        _dataset, info = open_raster(shared.atlanta_raster)
        labels = data.read_polygons(shared.atlanta_labels, info.crs_wkt)
        extent = data.atlanta_extent(shared.atlanta_raster, "train")
        sample = data.read_sample("atlanta-train", shared.atlanta_raster, labels, recipe.resolution_cm, recipe.bands, extent)
        return [WeightedSample(sample, 1.0)]
    groups = data.kampala_tiles(shared.kampala_chips)
    kampala = []
    labels = None
    for zoom in data.KAMPALA_ZOOMS:
        mosaic = data.build_kampala_mosaic(groups[("train", zoom)], work_dir / "mosaics" / f"kampala_train_z{zoom}.vrt")
        if labels is None:
            labels = data.read_polygons(shared.kampala_labels, open_raster(mosaic)[1].crs_wkt)
        kampala.append(data.read_sample(f"kampala-train-z{zoom}", mosaic, labels, recipe.resolution_cm, recipe.bands))
    real_share = 1.0 - recipe.rendered_share
    if recipe.place_shares:
        shares = dict(recipe.place_shares)
        total = sum(shares.values())
        weighted = [WeightedSample(s, real_share * shares["kampala"] / total / len(kampala)) for s in kampala]
        for place in recipe.train_places:
            weighted += _by_area(_place_samples(recipe, place, shared.kampala_chips.parent, work_dir),
                                 real_share * shares[place] / total, label_reach_px(recipe, place))
        if recipe.joplin:
            weighted += _by_area(_joplin_samples(recipe, shared.root), real_share * shares["joplin"] / total,
                                 label_reach_px(recipe, "joplin"))
    else:
        weighted = [WeightedSample(s, real_share / len(kampala)) for s in kampala]
    if recipe.rendered_share > 0:
        rendered = rendered_samples(shared.root, shared.atlanta_raster, recipe.rendered_cities, recipe.resolution_cm,
                                    seed=recipe.seed, frames=recipe.rendered_frames,
                                    split_share=recipe.rendered_split_share, keep_out=recipe.rendered_keep_out)
        weighted += [WeightedSample(s, recipe.rendered_share / len(rendered)) for s in rendered]
    return weighted


def channel_statistics(samples, low, high, fixed=None):
    """Per-channel mean and standard deviation of the valid pixels after scaling [low, high] to [0, 1].

    Every sample counts by its weight, so the statistics describe the crops
    the network is trained on.

    Returns
    -------
    mean, std : tuple of float
        ``fixed`` (mean, std) itself when given (a pretrained encoder's standardization).
    """
    if fixed is not None:
        return tuple(float(v) for v in fixed[0]), tuple(float(v) for v in fixed[1])
    means, squares, weights = [], [], []
    for item in samples:
        pixels = (item.sample.image[:, item.sample.valid] - low) / (high - low)
        means.append(pixels.mean(axis=1))
        squares.append((pixels.astype(np.float64) ** 2).mean(axis=1))
        weights.append(item.weight)
    w = np.asarray(weights)[:, None] / np.sum(weights)
    mean = (np.asarray(means) * w).sum(axis=0)
    std = np.sqrt((np.asarray(squares) * w).sum(axis=0) - mean**2)
    return tuple(round(float(v), 4) for v in mean), tuple(round(float(v), 4) for v in std)


@dataclass(frozen=True)
class Crop:
    """One training crop.

    Attributes
    ----------
    image : numpy.ndarray of float32, shape (bands, crop, crop)
        Raw values after augmentation.
    valid : numpy.ndarray of bool, shape (crop, crop)
        Pixels that count in the loss: valid image pixels, and on noisily labelled
        ground only those near a labelled building.
    classes : numpy.ndarray of uint8, shape (crop, crop)
        0 background, 1 building, 2 boundary (``boundary3`` and ``courtyard4`` heads), 3 courtyard
        (``courtyard4`` head).
    heatmap : numpy.ndarray of float32 or None
        Vertex targets (``vertex`` head only).
    weights : numpy.ndarray of float32 or None
        Per-pixel loss weights (:func:`.targets.instance_weights`) where the recipe asks for
        them (``Recipe.loss_weighted``), else None.
    """

    image: np.ndarray
    valid: np.ndarray
    classes: np.ndarray
    heatmap: object
    weights: object = None


class CropSampler:
    """Draws augmented crops and their targets from weighted samples.

    Parameters
    ----------
    samples : list of WeightedSample
    recipe : Recipe
    rng : numpy.random.Generator
    """

    def __init__(self, samples, recipe, rng):
        self.samples = samples
        self.recipe = recipe
        self.rng = rng
        self._weights = np.asarray([s.weight for s in samples], float)
        self._weights /= self._weights.sum()
        self._trees = [shapely.STRtree(s.sample.polygons) for s in samples]
        self._pixel_m2 = (recipe.resolution_cm / 100.0) ** 2
        # Courtyards are cut into buildings of at least 30 m^2 (300,000 cm^2).
        self._courtyards = CourtyardParams(min_building_area_px2=300000.0 / recipe.resolution_cm**2)

    def draw(self):
        """Return one :class:`Crop`."""
        size = self.recipe.crop_px
        augmentation = self.recipe.augmentation
        while True:
            index = int(self.rng.choice(len(self.samples), p=self._weights))
            sample = self.samples[index].sample
            window = CropWindow.draw(self.rng, augmentation, sample.valid.shape, size)
            image, valid = warp(window, sample.image, sample.valid)
            if valid.mean() >= 0.6:
                break
        found = self._trees[index].query(shapely.box(*window.reach()), predicate="intersects")
        polygons = window_polygons(window, sample.polygons[np.sort(found)])
        if self.recipe.courtyards and len(polygons):
            image, polygons, _count = carve_courtyards(image, valid, polygons, self.rng, self._courtyards)
        classes = class_map(polygons, (size, size),
                            self.recipe.boundary_width_px if self.recipe.head in ("boundary3", "courtyard4") else None,
                            courtyards=self.recipe.head == "courtyard4")
        heatmap = vertex_heatmap(polygons, (size, size), self.recipe.vertex_sigma_px) if self.recipe.head == "vertex" else None
        weights = None
        if self.recipe.loss_weighted:
            weights = instance_weights(polygons, (size, size), self.recipe.small_building_m2 / self._pixel_m2,
                                       self.recipe.small_building_max_weight, self.recipe.gap_weight,
                                       self.recipe.gap_reach_px, self.recipe.wall_weight)
        loss_valid = valid
        reach = self.samples[index].label_reach_px
        if reach > 0:
            # noisy labels: only ground near a labelled building counts in the loss (see WeightedSample);
            # the image itself keeps all its valid pixels
            loss_valid = valid & (ndimage.distance_transform_edt(classes == 0) <= reach)
        return self._augment(image, valid, classes, heatmap, loss_valid, weights)

    def _augment(self, image, valid, classes, heatmap, loss_valid=None, weights=None):
        loss_valid = valid if loss_valid is None else loss_valid
        k = int(self.rng.integers(0, 4))
        flip = bool(self.rng.integers(0, 2))
        optional = [heatmap, weights]
        arrays = [image, valid[None], classes[None], loss_valid[None]] + [a[None] for a in optional if a is not None]
        arrays = [np.rot90(a, k, axes=(1, 2)) for a in arrays]
        if flip:
            arrays = [a[:, :, ::-1] for a in arrays]
        arrays = [np.ascontiguousarray(a) for a in arrays]
        image = photometric(self.rng, self.recipe.augmentation, arrays[0], self.recipe.input_range) * arrays[1]
        rest = iter(arrays[4:])
        heatmap, weights = (next(rest)[0] if a is not None else None for a in optional)
        return Crop(image.astype(np.float32), arrays[3][0], arrays[2][0], heatmap, weights)
