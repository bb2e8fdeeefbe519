"""ONNX inference engine: raster + exported polygon model → valid polygons with holes.

Never imports QGIS (GDAL/OGR from ``osgeo`` only), so the plugin, the
command line (``python -m polytopo.models``) and batch jobs share it.

Typical use::

    from polytopo.models import RunParams, SessionParams, load_model, run_to_file

    model = load_model("unet.onnx", SessionParams(provider="auto"))
    print(model.session.report.describe())
    report = run_to_file(model, "image.tif", "buildings.gpkg", RunParams(batch_size=4))

or iterate :class:`PreparedRun` to get :class:`MapPolygon` objects without a file.
See docs/models.md for the model card, the decoder families and the memory bound.

This namespace holds what users call: loading and running a model, its card, the
prompts, the results and the errors. The engine's parts (tiling, polygonization, card
checks against the graph, sessions, decoders) are imported from their own modules.
"""

from .card.model_card import ModelCard, example_card
from .card.card_files import describe_model, read_card, write_card
from .errors import (
    InferenceCanceled,
    InferenceError,
    MemoryBudgetError,
    ModelCardError,
    ModelFileError,
    ModelsError,
    OutputError,
    ProviderError,
    RasterError,
)
from .model import LoadedModel, load_model
from .pipeline import MapPolygon, PreparedRun, RunParams, RunReport, run_to_file
from .prompts import Prompt, prompts_from_geometries, prompts_from_vector
from .raster.reading import GeoreferenceWarning
from .session import SessionParams

# Hosts that unload a package by the modules its imports returned or named (QGIS's plugin
# loader) see the sub-packages themselves here; each is only a docstring.
from . import card, polygons, raster  # noqa: E402, F401  isort: skip

__all__ = [
    "GeoreferenceWarning",
    "InferenceCanceled",
    "InferenceError",
    "LoadedModel",
    "MapPolygon",
    "MemoryBudgetError",
    "ModelCard",
    "ModelCardError",
    "ModelFileError",
    "ModelsError",
    "OutputError",
    "PreparedRun",
    "Prompt",
    "ProviderError",
    "RasterError",
    "RunParams",
    "RunReport",
    "SessionParams",
    "describe_model",
    "example_card",
    "load_model",
    "prompts_from_geometries",
    "prompts_from_vector",
    "read_card",
    "run_to_file",
    "write_card",
]
