"""ONNX inference engine: raster + exported polygon model → valid polygons with holes.

Never imports QGIS (GDAL/OGR from ``osgeo`` only), so the plugin, the
command line (``python -m polytopo.models``) and batch jobs share it.

Typical use::

    from polytopo.models import RunParams, SessionParams, load_model, run_to_file

    model = load_model("unet.onnx", SessionParams(provider="auto"))
    print(model.session.report.describe())
    report = run_to_file(model, "image.tif", "buildings.gpkg", RunParams(batch_size=4))

or iterate :class:`Prediction` to get :class:`MapPolygon` objects without a file.
See docs/models.md for the model card, the decoder families and the memory bound.
"""

from .card import ModelCard, card_to_props, example_card, parse_card
from .card_io import describe_model, format_description, read_card, write_card
from .card_validation import GraphSignature, ModelIO, TensorSpec, check_card
from .decoders.families import FAMILIES, SEG_THRESHOLD_FAMILIES
from .errors import (
    InferenceCancelled,
    InferenceError,
    MemoryBudgetError,
    ModelCardError,
    ModelFileError,
    ModelsError,
    OutputError,
    ProviderError,
    RasterError,
)
from .model import LoadedModel, load_model, model_from_session
from .pipeline import MapPolygon, Prediction, RunParams, RunReport, decoding_summary, decoding_values, run_to_file
from .polygonize import PixelPolygons, polygonize_mask
from .prompts import Prompt, prompts_from_geometries, prompts_from_vector
from .raster import GeoreferenceWarning
from .session import PROVIDER_CHOICES, ProviderReport, SessionParams, open_session
from .strip_polygonizer import StripPolygonizer
from .tiling import TilingParams, blend_weights

__all__ = [
    "FAMILIES",
    "PROVIDER_CHOICES",
    "GeoreferenceWarning",
    "GraphSignature",
    "InferenceCancelled",
    "InferenceError",
    "LoadedModel",
    "MapPolygon",
    "MemoryBudgetError",
    "ModelCard",
    "ModelCardError",
    "ModelFileError",
    "ModelIO",
    "ModelsError",
    "OutputError",
    "PixelPolygons",
    "Prediction",
    "Prompt",
    "ProviderError",
    "ProviderReport",
    "RasterError",
    "RunParams",
    "RunReport",
    "SEG_THRESHOLD_FAMILIES",
    "SessionParams",
    "StripPolygonizer",
    "TensorSpec",
    "TilingParams",
    "blend_weights",
    "card_to_props",
    "check_card",
    "decoding_summary",
    "decoding_values",
    "describe_model",
    "example_card",
    "format_description",
    "load_model",
    "model_from_session",
    "open_session",
    "parse_card",
    "polygonize_mask",
    "prompts_from_geometries",
    "prompts_from_vector",
    "read_card",
    "run_to_file",
    "write_card",
]
