"""The QGIS side of PolyTopo: the only subpackage that imports ``qgis``.

It converts QGIS layers to what :mod:`polytopo.evaluator` and :mod:`polytopo.models`
take, delegates, and converts the results back (layers, styles, files).

Subpackages and modules
-----------------------
plugin_main
    :class:`~polytopo.plugin.plugin_main.PolyTopoPlugin`, the object QGIS
    loads through :func:`polytopo.classFactory`.
processing
    The Processing provider (id ``polytopo``) and its algorithms
    ``evaluate_algorithm``, ``vectorize_algorithm`` and
    ``vectorize_evaluate_algorithm`` (parameters in ``evaluation_parameters`` and
    ``vectorize_parameters``, glue in ``support``).
runs
    The run API shared by Processing and the dock: ``evaluate_layers``
    (``evaluation``, reading layers with ``layer_reading``), ``export_run``
    (``export``, ``report_html``, ``styles``), ``add_run_to_project``
    (``project_layers``), ``vectorize_layer`` (``vectorize``) and
    ``vectorize_and_evaluate`` (``vectorize_evaluate``); progress and cancel
    through ``feedback``.
gui
    The dock panel, its background tasks and the choices it offers.
setup
    The check and installer of the Python packages QGIS's interpreter needs, and
    the GEOS isolation of shapely inside the QGIS executables.
demo
    The README's main job: fetch the SpaceNet Atlanta sample tile through PyPI,
    render the Helsinki hole scene, vectorize and evaluate both in headless QGIS,
    render the styled maps.
errors
    The plugin's exception hierarchy.
resource_paths
    Locations of the files under ``resources/``.

Importing this package first imports shapely with its own GEOS
(:func:`~polytopo.plugin.setup.geos_isolation.import_shapely_with_own_geos`): every
QGIS-side module comes through here, so none can bind shapely to the GEOS of the QGIS
executable, whether QGIS starts the plugin or a script (Python console, ``qgis --code``)
imports the run API or the dock directly. When shapely is not importable yet (it is
installed into the plugin-local package folder), the plugin start repeats the import
after adding that folder, and logs a mismatch.
"""

from .setup.geos_isolation import import_shapely_with_own_geos

__all__ = []

import_shapely_with_own_geos()
