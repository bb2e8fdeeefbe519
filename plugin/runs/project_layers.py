"""Add the layers of an evaluation GeoPackage to a QGIS project, styled, in a new group."""

from pathlib import Path

from qgis.core import QgsVectorLayer

from ...evaluator.tables.error_classes import ERROR_LAYERS as LAYER_TABLE
from ..errors import LayerInputError
from .styles import ERROR_LAYERS, SUMMARY_LAYER, apply_style, legend_of_what_is_drawn

__all__ = ["add_run_to_project", "LAYER_TITLES", "run_group_name"]

#: GeoPackage layer → name shown in the layer tree.
LAYER_TITLES = {**{layer.name: layer.title for layer in LAYER_TABLE}, SUMMARY_LAYER: "Summary"}


def add_run_to_project(gpkg_path, project, group_name):
    """Load an evaluation GeoPackage's layers into ``project`` under a new top group.

    The layers get the styles saved in the GeoPackage by :func:`polytopo.plugin.runs.export.export_run`; a
    GeoPackage without saved styles (the evaluator's command line writes such files) gets
    the generated QML styles and aliases. Their legends list only the classes (and the
    hole rings) their features have (:func:`~polytopo.plugin.runs.styles.legend_of_what_is_drawn`).
    Call from the main thread only.

    Parameters
    ----------
    gpkg_path : str or Path
        A GeoPackage with the layers of :data:`~polytopo.plugin.runs.styles.ERROR_LAYERS` (and optionally the
        ``summary`` table).
    project : QgsProject
        The project to add to.
    group_name : str
        Name of the new layer-tree group, inserted at the top.

    Returns
    -------
    list of QgsVectorLayer
        The layers added, top to bottom (the summary table, when present, last).

    Raises
    ------
    LayerInputError
        The file lacks one of the evaluation layers; nothing is added then.
    """
    gpkg_path = Path(gpkg_path)
    layers = []
    for name in (*ERROR_LAYERS, SUMMARY_LAYER):
        layer = QgsVectorLayer(f"{gpkg_path}|layername={name}", LAYER_TITLES[name], "ogr")
        if not layer.isValid():
            if name == SUMMARY_LAYER:
                continue
            raise LayerInputError(
                f"Expected an evaluation GeoPackage with a layer {name!r} but {gpkg_path} has none; "
                "choose a GeoPackage written by a PolyTopo evaluation"
            )
        if layer.listStylesInDatabase()[0] == 0:
            apply_style(layer, name)
        legend_of_what_is_drawn(layer)
        layers.append(layer)
    group = project.layerTreeRoot().insertGroup(0, group_name)
    for layer in layers:
        project.addMapLayer(layer, False)
        group.addLayer(layer)
    return layers


def run_group_name(prediction_name, reference_name):
    """``PolyTopo — <prediction> vs <reference>``: the group of one run's layers, in the dock and in Processing.

    Examples
    --------
    >>> run_group_name("atlanta", "buildings")
    'PolyTopo — atlanta vs buildings'
    """
    return f"PolyTopo — {prediction_name} vs {reference_name}"
