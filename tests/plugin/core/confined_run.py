"""Run one plugin-core call in a fresh headless QGIS and print its outcome on one line.

``python confined_run.py vectorize RASTER MODEL OUT`` or
``python confined_run.py export PREDICTION REFERENCE PIXEL_SIZE GPKG REPORT_DIR``.
Prints ``ok`` or ``<PluginError class>: <message>`` and exits with status 0; any other
exception escapes (a traceback and a non-zero status, which the calling test rejects).
Used by tests that need a read-only folder or a small disk (tests/support/confined.py),
which only a new process can get.
"""

import gc
import sys


def main(argv):
    from qgis.core import QgsApplication

    app = QgsApplication([], False)
    app.initQgis()
    print(_outcome(argv))
    # A failed run's traceback keeps frames (and their layers) in reference cycles; collect them
    # now, so no layer is destroyed after exitQgis unloads the providers (a crash at exit).
    gc.collect()
    app.exitQgis()


def _outcome(argv):
    from qgis.core import QgsRasterLayer, QgsVectorLayer

    from polytopo.plugin.errors import PluginError
    from polytopo.plugin.runs.evaluation import evaluate_layers
    from polytopo.plugin.runs.export import export_run
    from polytopo.plugin.runs.vectorize import vectorize_layer

    try:
        if argv[0] == "vectorize":
            raster = QgsRasterLayer(argv[1], "image")
            vectorize_layer(raster, argv[2], provider="cpu", output_path=argv[3])
        else:
            prediction, reference = QgsVectorLayer(argv[1], "p", "ogr"), QgsVectorLayer(argv[2], "r", "ogr")
            run = evaluate_layers(prediction, reference, pixel_size=float(argv[3]), score_field="score")
            export_run(run, argv[4], argv[5])
        return "ok"
    except PluginError as exc:
        return f"{type(exc).__name__}: {exc}"


if __name__ == "__main__":
    main(sys.argv[1:])
