"""The dock's *Install* row for models of the model pack, and the background task that installs one.

The dock lists every model of the zoo index. When the chosen one is not installed
(the plugin ZIP carries only the default model), :class:`ModelInstaller` shows
its download size with *Install* and *Cancel* buttons and a progress bar.
*Install* runs :class:`ModelInstallTask`, a :class:`qgis.core.QgsTask` that calls
:func:`polytopo.models.zoo.pack.install_model`: the release file is downloaded,
its size and SHA-256 are checked against the index, and it is renamed into the
QGIS profile's model folder only when both match, so the folder never holds a
half-written model. The dock calls one hook (``on_installed``) when the model is
in place.
"""

import traceback

from qgis.core import Qgis, QgsMessageLog, QgsTask
from qgis.PyQt.QtCore import Qt, pyqtSlot
from qgis.PyQt.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from ...models.errors import ModelsError, PackInstallCanceled
from ..runs.model_folder import profile_model_dir

__all__ = ["ModelInstallTask", "ModelInstaller"]

_LOG_TAG = "PolyTopo"


def _ignore(task):
    """Callback of an abandoned task: nobody is told."""


def _install(*args, **kwargs):
    from ...models.zoo.pack import install_model

    return install_model(*args, **kwargs)


class ModelInstallTask(QgsTask):
    """Download, verify and store one model of the pack, in a worker thread.

    Parameters
    ----------
    model : polytopo.models.zoo.ZooModel
    folder : pathlib.Path
        The model folder (the QGIS profile's).
    on_done : callable
        ``on_done(task)`` in the main thread, whatever the outcome; then :attr:`path`,
        :attr:`canceled` or :attr:`error` says which.
    install : callable, optional
        :func:`polytopo.models.zoo.pack.install_model` or a stand-in with its signature.
    source : str, optional
        A URL or file to install from instead of the index's URL.

    Attributes
    ----------
    path : pathlib.Path or None
        The installed file, after a success.
    canceled : bool
    error : str or None
        Why the install failed ("Expected X but got Y; fix").
    """

    def __init__(self, model, folder, on_done, install=_install, source=None):
        super().__init__(f"PolyTopo: installing model {model.name}", QgsTask.CanCancel)
        self.model = model
        self.folder = folder
        self.on_done = on_done
        self.install = install
        self.source = source
        self.path = None
        self.canceled = False
        self.error = None

    def _progress(self, done, total):
        self.setProgress(100.0 * done / total if total else 100.0)

    def run(self):
        """Worker thread: install; keep the path, the cancel or the reason of the failure."""
        try:
            self.path = self.install(self.model, self.folder, self.source, progress=self._progress,
                                     canceled=self.isCanceled)
        except PackInstallCanceled:
            self.canceled = True
        except ModelsError as exc:
            self.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a worker exception must reach the user, not the log only.
            self.error = f"{type(exc).__name__}: {exc}"
            QgsMessageLog.logMessage(traceback.format_exc(), _LOG_TAG, Qgis.Critical)
        if self.path is None and not self.canceled and self.error is None and self.isCanceled():
            self.canceled = True
        return self.path is not None or self.canceled

    def finished(self, result):
        """Main thread: hand the task over."""
        self.on_done(self)

    def abandon(self):
        """Cancel and drop the callback, for when the dock goes away (nothing is stored then)."""
        self.on_done = _ignore
        self.cancel()


class ModelInstaller(QWidget):
    """The row under the dock's model list: status of the chosen zoo model, *Install*, *Cancel*, progress.

    Hidden while the chosen model is installed, or is not a zoo model (*Other file…*).

    Parameters
    ----------
    combo : QComboBox
        The dock's model list: item text is the zoo model's name, item data its file path.
    task_manager : qgis.core.QgsTaskManager
    notifier : object
        ``info/warning/error(title, text)``.
    on_installed : callable
        ``on_installed()`` after a model was installed and the list updated (the dock re-reads the card).
    folder : path-like, optional
        The model folder; defaults to :func:`~polytopo.plugin.runs.model_folder.profile_model_dir`.
    install : callable, optional
        :func:`polytopo.models.zoo.pack.install_model` or a stand-in.
    models : callable, optional
        ``models(folder) -> tuple of ZooModel``; defaults to :func:`polytopo.models.zoo.zoo_models`.
    parent : QWidget, optional
    """

    title = "PolyTopo"

    def __init__(self, combo, task_manager, notifier, on_installed, folder=None, install=_install, models=None,
                 parent=None):
        super().__init__(parent)
        self.setObjectName("PolyTopoModelInstaller")
        self.combo = combo
        self.task_manager = task_manager
        self.notifier = notifier
        self.on_installed = on_installed
        self.folder = profile_model_dir() if folder is None else folder
        self.install = install
        self.models = models
        self.task = None
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.install_button = QPushButton("Install")
        self.install_button.clicked.connect(self.start_install)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_install)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        buttons = QHBoxLayout()
        buttons.addWidget(self.install_button)
        buttons.addWidget(self.cancel_button)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        combo.currentIndexChanged.connect(self.refresh)
        self.refresh()

    def _zoo(self):
        try:
            if self.models is not None:
                return self.models(self.folder)
            from ...models.zoo import zoo_models

            return zoo_models(self.folder)
        except (ImportError, LookupError, ModelsError):
            return ()

    def chosen_model(self):
        """The zoo model chosen in the list, or None (*Other file…*, or not in the index).

        Returns
        -------
        polytopo.models.zoo.ZooModel or None
        """
        name = self.combo.currentText()
        return next((model for model in self._zoo() if model.name == name), None)

    def refresh(self, *_):
        """Show the row when the chosen zoo model is not installed; hide it otherwise."""
        if self.task is not None:
            return
        model = self.chosen_model()
        if model is None or model.installed:
            self.setVisible(False)
            return
        where = model.url or "no download URL in the zoo index"
        state = "is outdated (a file of another size is there)" if model.status == "outdated" else "is not installed"
        self.label.setText(f"{model.name} {state}: {model.size_bytes / 1e6:.1f} MB from {where}, checked "
                           f"against its SHA-256 and stored in {self.folder}.")
        self.install_button.setEnabled(bool(model.url))
        self.install_button.setToolTip(f"Download {model.name} ({model.size_bytes} bytes) into {self.folder}")
        self.cancel_button.setEnabled(False)
        self.progress.setVisible(False)
        self.setVisible(True)

    def start_install(self, source=None):
        """Start installing the chosen model in the background.

        Parameters
        ----------
        source : str, optional
            A URL or file to install from instead of the index's URL.

        Returns
        -------
        ModelInstallTask or None
            None when an install runs already or the chosen model needs none.
        """
        model = self.chosen_model()
        if self.task is not None or model is None or model.installed:
            return None
        self.task = ModelInstallTask(model, self.folder, self._finished, self.install,
                                     source=source if isinstance(source, str) else None)
        self.task.progressChanged.connect(self._show_progress)  # a slot of this widget: queued to the GUI thread
        self.install_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.label.setText(f"Installing {model.name} ({model.size_bytes / 1e6:.1f} MB) …")
        self.task_manager.addTask(self.task)
        return self.task

    @pyqtSlot(float)
    def _show_progress(self, percent):
        self.progress.setValue(int(percent))

    def cancel_install(self):
        """Stop the running install; nothing is stored."""
        if self.task is not None:
            self.task.cancel()

    def _finished(self, task):
        self.task = None
        name = task.model.name
        if task.path is not None:
            index = self.combo.findText(name, Qt.MatchExactly)
            if index >= 0:
                self.combo.setItemData(index, str(task.path))
                summary = self.combo.itemData(index, Qt.ToolTipRole) or ""
                if summary.startswith("Not installed"):
                    self.combo.setItemData(index, summary.split(" · ", 1)[-1], Qt.ToolTipRole)
            self.notifier.info(self.title, f"Model {name} installed (size and SHA-256 verified): {task.path}")
            self.refresh()
            self.on_installed()
            return
        if task.canceled or task.error is None:  # None: canceled before it started
            self.notifier.info(self.title, f"Installing model {name} was canceled; nothing was stored.")
        else:
            self.notifier.error(self.title, f"Installing model {name} failed: {task.error}")
        self.refresh()

    def abandon(self):
        """Cancel a running install and detach it, before the dock is deleted."""
        if self.task is not None:
            self.task.abandon()
            self.task = None
