"""The QGIS side of PolyTopo: the only subpackage that imports ``qgis``.

It converts QGIS layers to what :mod:`polytopo.evaluator` and :mod:`polytopo.models`
take, delegates, and converts the results back (layers, styles, files).

Modules
-------
plugin_main
    :class:`~polytopo.plugin.plugin_main.PolyTopoPlugin`, the object QGIS
    loads through :func:`polytopo.classFactory`.
provider
    :class:`~polytopo.plugin.provider.PolyTopoProvider`, the Processing
    provider with id ``polytopo``, and its algorithms ``alg_evaluate``,
    ``alg_vectorize`` and ``alg_vectorize_evaluate`` (parameters in
    ``algorithm_parameters`` and ``vectorize_parameters``, glue in
    ``processing_support``).
runs
    The run API shared by Processing and the dock: ``evaluate_layers``
    (``evaluation``, reading layers with ``layer_reading``), ``export_run``
    (``export``, ``report_html``, ``styles``), ``add_run_to_project``
    (``project_layers``), ``vectorize_layer`` (``vectorize``) and
    ``vectorize_and_evaluate`` (``chain``); progress and cancel through
    ``run_feedback``.
dock, tasks, dependencies
    The dock panel, its background tasks, and the check and installer of the
    Python packages QGIS's interpreter needs.
geos_isolation
    Keeps shapely on its own GEOS inside the QGIS executables.
demo_data, main_job
    The README's main job: fetch the SpaceNet Atlanta sample tile through PyPI,
    vectorize and evaluate it in headless QGIS, render the styled map.
errors
    The plugin's exception hierarchy.
resource_paths
    Locations of the files under ``resources/``.
"""

__all__ = []
