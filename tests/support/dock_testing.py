"""The dock tests' layers and helpers: two tiny polygon layers, a dock with stand-in probes, its inputs set.

The ``project`` fixture of ``tests/plugin/conftest.py`` puts :data:`PREDICTION` and
:data:`REFERENCE` into the project; :func:`make_dock` builds the dock around a core and
:func:`set_up_evaluation` fills its evaluation inputs with them.
"""

from polytopo_testing import RecordingNotifier

__all__ = ["PREDICTION", "REFERENCE", "make_dock", "no_providers", "run_evaluation", "set_up_evaluation"]

#: Reference: a square with two holes, and a small square elsewhere.
REFERENCE = [
    "POLYGON((0 0,20 0,20 20,0 20,0 0),(3 3,8 3,8 8,3 8,3 3),(12 12,17 12,17 17,12 17,12 12))",
    "POLYGON((30 0,40 0,40 10,30 10,30 0))",
]
#: Prediction: the first square with one hole right and one misplaced, and a false positive.
PREDICTION = [
    "POLYGON((0 0,20 0,20 20,0 20,0 0),(3 3,8 3,8 8,3 8,3 3),(12 2,16 2,16 6,12 6,12 2))",
    "POLYGON((60 0,70 0,70 10,60 10,60 0))",
]


def no_providers():
    """A provider probe that finds the CPU provider only, without onnxruntime-gpu."""
    return ["CPUExecutionProvider"], False


def make_dock(core, canvas=None, read_card=None):
    """Return a dock with ``core``, a recording notifier and a fixed provider probe."""
    from polytopo.models import read_card as real_read_card
    from polytopo.plugin.gui.dock import PolyTopoDock

    notifier = RecordingNotifier()
    dock = PolyTopoDock(core, canvas=canvas, notifier=notifier, read_card=read_card or real_read_card,
                        providers=no_providers, open_url=lambda url: None)
    return dock, notifier


def set_up_evaluation(dock, project, gpkg_path):
    """Choose the ``project`` fixture's layers, the score field, pixel size 0.5 and ``gpkg_path`` as output."""
    dock.prediction_combo.setLayer(project.prediction)
    dock.reference_combo.setLayer(project.reference)
    dock.score_field.setField("score")
    dock.pixel_size.setValue(0.5)
    dock.gpkg_output.setFilePath(str(gpkg_path))


def run_evaluation(dock):
    """Start the dock's evaluation, wait until it ends, return its task."""
    from polytopo_testing import wait_until

    task = dock.start_evaluation()
    assert task is not None
    wait_until(lambda: dock.evaluation_task is None)
    return task
