"""Benchmark runs over image sets: a model over every image, predictions in the COCO format the evaluator reads.

The images come from a folder, a glob pattern or a text file of paths
(:func:`list_images`); each gets an image id (:func:`image_ids`): the id of
its ``file_name`` in a COCO ground-truth file when one is given, else its file
name. One task per image goes through
:func:`polytopo.core.cluster.map_partitions` (in this process when there
is no cluster); a worker loads the model once
(:func:`~polytopo.models.worker_model.worker_model`) and returns the image's
polygons in *pixel coordinates of that image* (x right, y down, from its
top-left corner), whether it is georeferenced or not. An image that fails
(unreadable, wrong band count, ...) is reported with its error while the
others finish.

Output (:func:`write_predictions`): a ``.json`` list of
``{image_id, category_id, segmentation, score}`` records, ``segmentation``
being flat rings ``[x0, y0, x1, y1, ...]``, exterior first, then the holes
(the PolyTopoBench / HiSup format of
:func:`polytopo.evaluator.inputs.io_coco.load_coco_predictions`); or a ``.gpkg`` /
``.geojson`` layer in pixel coordinates with the fields ``image`` and
``image_id`` besides those of every output. Either is written atomically and
only when every image succeeded; otherwise the finished images go to
``NAME.partial.EXT`` and the failures to ``NAME.failures.json``, so a file
with some images missing never carries the name the evaluator is given.
"""

import glob
import json
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely
from osgeo import ogr

from ..core.cluster import map_partitions
from ..core.output_safety import check_file_output, probe_folder
from ..core.atomic_output import atomic_output
from .errors import ModelsError, OutputError, RasterError
from .pipeline import PreparedRun, RunParams
from .raster.reading import GeoreferenceWarning
from .session import SessionParams
from .worker_model import worker_model
from .writer import VectorWriter, driver_for, safety_errors

__all__ = ["COORDINATE_DECIMALS", "IMAGE_EXTENSIONS", "ImageResult", "ImageTask", "check_categories", "check_outputs",
           "failed_outputs", "image_ids", "list_images", "run_image", "run_image_set", "write_predictions"]

IMAGE_EXTENSIONS = (".tif", ".tiff", ".png", ".jpg", ".jpeg")
"""File name endings (any case) taken from an ``--images`` folder."""

COORDINATE_DECIMALS = 6
"""Decimals of the pixel coordinates written (1e-6 px absorbs the rounding of the map-to-pixel transform)."""

_GLOB_CHARACTERS = "*?["
_IMAGE_FIELDS = (("image", ogr.OFTString), ("image_id", ogr.OFTString))


def list_images(spec):
    """The image files named by ``spec``, in a fixed order.

    Parameters
    ----------
    spec : str or os.PathLike
        A folder (its files ending in :data:`IMAGE_EXTENSIONS`, sorted by
        name, not recursive), one image file, a glob pattern (its matching
        files, sorted) or a ``.txt`` file with one path per line (relative paths are relative to
        the list's folder; empty lines and lines starting with ``#`` are
        skipped; the order is kept).

    Returns
    -------
    list of str

    Raises
    ------
    RasterError
        Nothing matches, or a listed file does not exist.
    """
    spec = os.fspath(spec)
    if os.path.isdir(spec):
        names = sorted(n for n in os.listdir(spec) if n.lower().endswith(IMAGE_EXTENSIONS))
        paths = [os.path.join(spec, n) for n in names if os.path.isfile(os.path.join(spec, n))]
        where = f"the folder {spec}"
    elif spec.lower().endswith(".txt") and os.path.isfile(spec):
        paths = _listed(spec)
        where = f"the list {spec}"
    elif spec.lower().endswith(IMAGE_EXTENSIONS) and os.path.isfile(spec):
        paths, where = [spec], spec
    elif any(c in spec for c in _GLOB_CHARACTERS):
        paths = sorted(p for p in glob.glob(spec) if os.path.isfile(p))
        where = f"the pattern {spec!r}"
    else:
        raise RasterError(
            f"Expected --images to be a folder, a glob pattern or a .txt list of image paths but got {spec!r}, "
            "which is none of them (no such folder or file).")
    if not paths:
        raise RasterError(
            f"Expected images ({', '.join(IMAGE_EXTENSIONS)}) in {where} but found none; "
            "check the path, or name the files in a .txt list.")
    return paths


def _listed(list_path):
    folder = os.path.dirname(os.path.abspath(list_path))
    with open(list_path, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle]
    paths = [os.path.join(folder, line) for line in lines if line and not line.startswith("#")]
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise RasterError(
            f"Expected every image of {list_path} to exist but {len(missing)} do not, e.g. {missing[0]}; "
            "paths in the list are relative to its folder.")
    return paths




def image_ids(paths, gt_images=None):
    """The image id of each path.

    Parameters
    ----------
    paths : list of str
    gt_images : str or None
        A COCO ground-truth file: an image's id is the ``id`` of the entry of
        ``images`` whose ``file_name`` has the image's file name (folders in
        ``file_name`` are ignored). Without it, the id is the file name
        without its extension: integers when every such name is all digits
        (``000123.png`` → 123), else strings for all (``000123.png`` →
        ``"000123"``, ``tile_7.tif`` → ``"tile_7"``), so one set never mixes
        the two.

    Returns
    -------
    list of int or str

    Raises
    ------
    RasterError
        An image is not in ``gt_images``, or two images get the same id.
    """
    if gt_images is None:
        ids = [Path(p).stem for p in paths]
        if all(i.isdigit() for i in ids):
            ids = [int(i) for i in ids]
    else:
        by_name = _gt_ids_by_name(gt_images)
        unknown = [p for p in paths if os.path.basename(p) not in by_name]
        if unknown:
            raise RasterError(
                f"Expected every image to appear in {gt_images} images[].file_name but {len(unknown)} do not, "
                f"e.g. {os.path.basename(unknown[0])}; pass the images of that ground truth, or run without --gt-images.")
        ids = [by_name[os.path.basename(p)] for p in paths]
    seen = {}
    for path, image_id in zip(paths, ids):
        if image_id in seen:
            raise RasterError(
                f"Expected one image per image id but {seen[image_id]} and {path} both get id {image_id!r}; "
                "rename one, or give --gt-images.")
        seen[image_id] = path
    return ids


def _gt_ids_by_name(gt_images):
    from ..core.errors import InputFormatError
    from ..core.json_files import read_json

    try:
        data = read_json(gt_images)
    except InputFormatError as exc:
        raise RasterError(f"Expected a readable COCO ground-truth file for --gt-images but got: {exc}") from None
    images = data.get("images") if isinstance(data, dict) else None
    if not isinstance(images, list) or not all(isinstance(i, dict) and "id" in i and "file_name" in i for i in images):
        raise RasterError(
            f"Expected {gt_images} to be a COCO object whose 'images' entries have 'id' and 'file_name' "
            "but it is not; give the ground truth the evaluator reads.")
    by_name = {}
    for image in images:
        name = os.path.basename(str(image["file_name"]))
        if name in by_name and by_name[name] != image["id"]:
            raise RasterError(f"Expected distinct file names in {gt_images} images[] but {name} appears with ids "
                              f"{by_name[name]!r} and {image['id']!r}.")
        by_name[name] = image["id"]
    return by_name


@dataclass(frozen=True)
class ImageTask:
    """What a worker needs to run the model on one image (paths readable on every worker)."""

    image_path: str
    image_id: object
    model_path: str
    session: object
    params: object


@dataclass(frozen=True)
class ImageResult:
    """One image's polygons, or its error.

    Attributes
    ----------
    image_path : str
    image_id : int or str
    polygons : list of (class_id, class_name, score, rings)
        ``rings``: list of (n, 2) float arrays, image pixel coordinates,
        exterior first, each closed (first point repeated last).
    error : str or None
        Why the image failed (then ``polygons`` is empty).
    seconds : float
        Time the worker spent on the image.
    """

    image_path: str
    image_id: object
    polygons: list
    error: object
    seconds: float


def _to_image_pixels(geometry, geotransform):
    """Rings of a polygon in map coordinates as arrays of pixel coordinates of the image (north-up geotransform)."""
    gt = geotransform
    rings = []
    for ring in (geometry.exterior, *geometry.interiors):
        xy = np.asarray(ring.coords)
        rings.append(np.round(np.column_stack([(xy[:, 0] - gt[0]) / gt[1], (xy[:, 1] - gt[3]) / gt[5]]), COORDINATE_DECIMALS))
    return rings


def run_image(task):
    """Run the model on one image (on a worker); returns an :class:`ImageResult`, with the error if it failed."""
    started = time.perf_counter()
    try:
        model = worker_model(task.model_path, task.session)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GeoreferenceWarning)  # crops without georeference are the usual case
            prepared = PreparedRun(model, task.image_path, task.params)
            gt = prepared.info.geotransform
            polygons = [(p.class_id, p.class_name, p.score, _to_image_pixels(p.geometry, gt)) for p in prepared]
    except Exception as exc:  # one image's failure, whatever it is, must not stop the others
        message = str(exc) if isinstance(exc, ModelsError) else f"{type(exc).__name__}: {exc}"
        return ImageResult(task.image_path, task.image_id, [], message, time.perf_counter() - started)
    return ImageResult(task.image_path, task.image_id, polygons, None, time.perf_counter() - started)


def run_image_set(model_path, image_paths, ids, client, params=RunParams(), session=SessionParams(), progress=None):
    """Run a model over every image, one task per image.

    Parameters
    ----------
    model_path : str
        Readable at this path on every worker.
    image_paths : list of str
    ids : list of int or str
        From :func:`image_ids`.
    client : distributed.Client or None
        None runs the images one after the other in this process.
    params : RunParams
        The same for every image (its extent, AOI and prompts must be None).
    session : SessionParams
    progress : callable(done_images, total_images) or None

    Returns
    -------
    list of ImageResult
        In the order of ``image_paths``; failed images carry their error.
    """
    tasks = [ImageTask(str(p), i, str(model_path), session, params) for p, i in zip(image_paths, ids)]
    return map_partitions(client, run_image, tasks, names=[os.path.basename(p) for p in image_paths], progress=progress)


def failed_outputs(out_path):
    """Where the finished images and the failures go when some images fail: ``NAME.partial.EXT``, ``NAME.failures.json``."""
    out = Path(out_path)
    return out.with_name(f"{out.stem}.partial{out.suffix}"), out.with_name(f"{out.stem}.failures.json")


def _gt_categories(gt_images):
    from ..core.json_files import read_json

    categories = read_json(gt_images).get("categories") or []
    return {str(c.get("name")): c.get("id") for c in categories if isinstance(c, dict)}


def check_categories(gt_images, class_names):
    """Refuse, before any work, a ground truth whose categories cannot give the model's classes an id.

    Parameters
    ----------
    gt_images : str
    class_names : sequence of str
        The model card's class names.

    Raises
    ------
    OutputError
        The file has several categories and none is named like a class of the model.
    """
    by_name = _gt_categories(gt_images)
    if len(by_name) > 1 and not set(by_name) & set(class_names):
        raise OutputError(
            f"Expected a category of {gt_images} named like a class of the model {list(class_names)} but got "
            f"{sorted(by_name)}; rename the classes in the model card (class_names) to match.")


def _categories(results, gt_images):
    """COCO ``category_id`` of each class name: the ground truth's category of that name (or its only one), else class id + 1."""
    names = sorted({(class_id, name) for r in results for class_id, name, _s, _r in r.polygons})
    if gt_images is None:
        return {name: class_id + 1 for class_id, name in names}
    by_name = _gt_categories(gt_images)
    out = {}
    for _class_id, name in names:
        if name in by_name:
            out[name] = by_name[name]
        elif len(by_name) == 1:
            out[name] = next(iter(by_name.values()))
        else:
            raise OutputError(
                f"Expected a category named {name!r} (the model's class) in {gt_images} categories but got "
                f"{sorted(by_name)}; rename the class in the model card (class_names) to match.")
    return out


def write_predictions(results, out_path, gt_images=None, overwrite=False, protect=()):
    """Write the polygons of every image to ``out_path`` (all succeeded) or to the partial and failure files.

    Parameters
    ----------
    results : list of ImageResult
    out_path : str or os.PathLike
        ``.json`` (COCO predictions) or ``.gpkg`` / ``.geojson`` (one layer, pixel coordinates).
    gt_images : str or None
        Ground truth whose categories give ``category_id`` (see :func:`image_ids`).
    overwrite : bool
        Replace existing outputs (``out_path`` and the partial and failure files).
    protect : iterable of str
        Input paths never written to.

    Returns
    -------
    path : str
        The file written (``out_path``, or the partial file when an image failed).
    failures : list of ImageResult

    Raises
    ------
    OutputError
        As :func:`check_outputs`, before anything is written.
    """
    check_outputs(out_path, overwrite, protect)
    failures = [r for r in results if r.error is not None]
    target = failed_outputs(out_path)[0] if failures else Path(out_path)
    categories = _categories(results, gt_images)
    if _is_coco(target):
        with atomic_output(target, overwrite=True, protect=protect) as temporary:
            _write_json(results, temporary, categories)
    else:
        with VectorWriter(target, "", overwrite=True, extra_fields=_IMAGE_FIELDS) as writer:
            for result in results:
                extra = (os.path.basename(result.image_path), str(result.image_id))
                for class_id, name, score, rings in result.polygons:
                    writer.write(shapely.Polygon(rings[0], rings[1:]), class_id, name, score, extra=extra)
    if failures:
        report = [{"image": r.image_path, "image_id": r.image_id, "error": r.error} for r in failures]
        with atomic_output(failed_outputs(out_path)[1], overwrite=True, protect=protect) as temporary:
            temporary.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return str(target), failures


def check_outputs(out_path, overwrite, inputs):
    """Refuse, before any work, outputs that cannot or must not be written.

    Parameters
    ----------
    out_path : str or os.PathLike
        ``.json``, ``.gpkg`` or ``.geojson``.
    overwrite : bool
        Whether existing outputs (``out_path`` and its :func:`failed_outputs`) may be replaced.
    inputs : iterable of str
        Paths that must never be written (images, model, ground truth).

    Raises
    ------
    OutputError
        Another extension, a missing folder, an output that is an input, or an
        existing output without ``overwrite``.
    """
    out = os.path.abspath(os.fspath(out_path))
    if not _is_coco(out):
        driver_for(out)
    if not os.path.isdir(os.path.dirname(out)):
        raise OutputError(f"Expected an existing folder for {out} but {os.path.dirname(out)} does not exist.")
    inputs = [os.fspath(p) for p in inputs]
    with safety_errors(out):
        for path in (out, *map(str, failed_outputs(out))):
            check_file_output(path, inputs=inputs, overwrite=overwrite)
        probe_folder(os.path.dirname(out))


def _is_coco(path):
    """Whether an output path is a COCO prediction list (``.json``; ``.geojson`` is a vector layer)."""
    return Path(path).suffix.lower() == ".json"


def _write_json(results, path, categories):
    """Stream the records to ``path`` image by image (the list is never built as one string)."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        first = True
        for result in results:
            for _class_id, name, score, rings in result.polygons:
                record = {"image_id": result.image_id, "category_id": categories[name],
                          "segmentation": [ring[:-1].ravel().tolist() for ring in rings], "score": float(score)}
                handle.write(("\n" if first else ",\n") + json.dumps(record))
                first = False
        handle.write("\n]\n")
