"""The dock's *Advanced* group of the evaluation: where the work runs (this process, local workers, a scheduler).

*Workers* starts a local Dask cluster of that many worker processes for the run (0: in the
QGIS process); *Scheduler* names a running one (``tcp://HOST:PORT``) instead. Both are
checked as they are typed, with the rule of the run itself
(:func:`polytopo.core.cluster.check_cluster_choice`), and remembered in
``QgsSettings`` for the next session.
"""

import html

from qgis.core import QgsSettings
from qgis.gui import QgsCollapsibleGroupBox
from qgis.PyQt.QtWidgets import QFormLayout, QLabel, QLineEdit, QSpinBox

from ...core.cluster import check_cluster_choice, max_local_workers, require_distributed
from ...core.errors import EvaluatorError
from ..errors import RunParameterError
from .wrap_layout import gap_in_labels

__all__ = ["SCHEDULER_KEY", "WORKERS_KEY", "ClusterFields"]

#: QgsSettings keys of the two fields.
WORKERS_KEY, SCHEDULER_KEY = "PolyTopo/dock/workers", "PolyTopo/dock/scheduler"

class ClusterFields(QgsCollapsibleGroupBox):
    """Collapsed group with the *Workers* spin box and the *Scheduler* address field.

    Parameters
    ----------
    settings : qgis.core.QgsSettings, optional
        Where the fields are read from and saved to; defaults to a new ``QgsSettings()``.
    parent : QWidget, optional
    """

    def __init__(self, settings=None, parent=None):
        super().__init__("Advanced", parent)
        self.setObjectName("PolyTopoClusterFields")
        self.setCollapsed(True)
        self.settings = settings if settings is not None else QgsSettings()
        form = QFormLayout(self)
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)
        self.workers = QSpinBox()
        self.workers.setRange(0, max_local_workers())
        self.workers.setSpecialValueText("0 (in this process)")
        self.workers.setToolTip("Worker processes of a local Dask cluster started for the run and closed after "
                                "it; they run the system Python. 0 evaluates in the QGIS process.")
        form.addRow("Workers", self.workers)
        self.scheduler = QLineEdit()
        self.scheduler.setPlaceholderText("tcp://HOST:PORT (optional)")
        self.scheduler.setToolTip("Address of a running Dask scheduler to evaluate on (started with 'dask "
                                  "scheduler' and 'dask worker'); leave empty for none. Excludes Workers > 0.")
        form.addRow("Scheduler", self.scheduler)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        form.addRow(self.problem)
        gap_in_labels(form)
        self.workers.setValue(self.settings.value(WORKERS_KEY, 0, type=int))
        self.scheduler.setText(self.settings.value(SCHEDULER_KEY, "", type=str))
        self.workers.valueChanged.connect(self._changed)
        self.scheduler.textChanged.connect(self._changed)
        self._show_problem()
        self.collapsedStateChanged.connect(lambda *_: self._show_problem())  # expanding shows every child, even an empty one

    def choice(self):
        """Return ``(workers, scheduler)`` for the run: a whole number >= 0 and an address or None.

        Raises
        ------
        RunParameterError
            Both a worker count above 0 and an address, an address that is not
            ``tcp://HOST:PORT``, or a cluster asked for while ``dask`` and ``distributed``
            are not installed; the message says how to fix it.
        """
        scheduler = self.scheduler.text().strip() or None
        try:
            workers, scheduler = check_cluster_choice(self.workers.value(), scheduler)
            if workers or scheduler:
                from ..runs.evaluation import QGIS_ASKER  # the run's words; imports the evaluator

                require_distributed(QGIS_ASKER)
        except EvaluatorError as exc:
            raise RunParameterError(str(exc)) from exc
        return workers, scheduler

    def _changed(self, *_):
        self.settings.setValue(WORKERS_KEY, self.workers.value())
        self.settings.setValue(SCHEDULER_KEY, self.scheduler.text().strip())
        self._show_problem()

    def _show_problem(self):
        try:
            self.choice()
        except RunParameterError as exc:
            self.problem.setText(f"<span style='color:#b00020'>{html.escape(str(exc))}</span>")
            self.problem.setVisible(True)
            return
        self.problem.clear()
        self.problem.setVisible(False)
