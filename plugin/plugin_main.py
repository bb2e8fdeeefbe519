"""The object QGIS loads: the Processing provider, the dock and the dependency check."""

import functools

from qgis.core import Qgis, QgsApplication, QgsMessageLog
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtGui import QIcon
from qgis.PyQt.QtWidgets import QAction, QPushButton

# qgis.utils unloads exactly the modules its import hook saw returned or named; naming
# every subpackage here hands it the packages themselves (each is only a docstring;
# polytopo.models names its own, as importing it here would need its dependencies).
from . import demo, gui, processing, runs, setup  # noqa: F401
from .. import core  # noqa: F401
from ..evaluator import cli, geometry, inputs, metrics, outputs, profiles, run, tables  # noqa: F401
from .setup import dependencies, geos_isolation
from .errors import ProviderRegistrationError
from .processing.provider import PROVIDER_ID, PolyTopoProvider
from .resource_paths import ICON_PATH

__all__ = ["MENU_NAME", "PolyTopoPlugin"]

#: Name of the plugin's entry in the Plugins menu.
MENU_NAME = "&PolyTopo"

_LOG_TAG = "PolyTopo"


def _remove_stale_temporaries():
    """Remove the temporary folders of runs killed earlier (see ``polytopo.core.output_safety``).

    Only folders of processes that no longer run, and only those holding nothing but
    unfinished temporaries: a finished temporary layer (maybe in a saved project) stays.
    Also the temporary result folders of ended sessions that no saved project uses
    (:func:`polytopo.plugin.gui.result_folders.remove_unused_temporary_results`).
    """
    import tempfile

    from ..core.output_safety import clean_stale_partials

    for path in clean_stale_partials(tempfile.gettempdir(), keep_finished=True):
        QgsMessageLog.logMessage(f"Removed the leftovers of an interrupted run: {path}", _LOG_TAG, Qgis.Info)
    from .gui.result_folders import remove_unused_temporary_results

    for path in remove_unused_temporary_results():
        QgsMessageLog.logMessage(f"Removed the temporary results of an ended session that no saved project uses: "
                                 f"{path}", _LOG_TAG, Qgis.Info)


class PolyTopoPlugin:
    """PolyTopo's QGIS plugin.

    Parameters
    ----------
    iface : qgis.gui.QgisInterface or None
        The QGIS desktop interface, or None when started headless.
    check : callable, optional
        ``check() -> DependencyReport``; defaults to
        :func:`polytopo.plugin.setup.dependencies.check_dependencies`.
    install : callable, optional
        ``install(report) -> InstallOutcome``, run in a background task; defaults
        to :func:`polytopo.plugin.setup.dependencies.install_missing` (pip).

    Notes
    -----
    QGIS desktop calls :meth:`initGui`; ``qgis_process`` calls only
    :meth:`initProcessing`. Both leave exactly one provider with id
    ``polytopo`` in the Processing registry, and :meth:`unload` removes it.
    Both first put the plugin-local package folder on ``sys.path`` and check
    the Python packages PolyTopo needs; when some are missing the plugin
    still loads and says so (message log; in desktop also the message bar,
    with an *Install* button), and the dock opens once they are installed.
    The optional scale-out group (Dask, for the *Workers* and *Scheduler* fields)
    is only logged when missing; the plugin menu's *Install Dask for workers*
    entry installs it the same way.
    """

    def __init__(self, iface, check=dependencies.check_dependencies, install=dependencies.install_missing):
        self.iface = iface
        self.check = check
        self.install = install
        self.provider = None
        self.action = None
        self.scale_out_action = None
        self.dock = None
        self.dependency_report = None
        self.install_task = None

    def initProcessing(self):  # noqa: N802 - QGIS API name.
        """Add the PolyTopo provider to the Processing registry once.

        Raises
        ------
        ProviderRegistrationError
            If another provider with id ``polytopo`` is already registered.
        """
        if self.provider is not None:
            return
        if self.check_dependencies().ok:
            _remove_stale_temporaries()
        provider = PolyTopoProvider()
        if not QgsApplication.processingRegistry().addProvider(provider):
            raise ProviderRegistrationError(
                f"Expected no Processing provider with id {PROVIDER_ID!r} to be "
                "registered yet but one already is; unload the other PolyTopo "
                "plugin instance before starting this one."
            )
        self.provider = provider

    def check_dependencies(self):
        """Activate the plugin-local package folder, check the packages, log what is missing.

        Returns
        -------
        polytopo.plugin.setup.dependencies.DependencyReport
        """
        dependencies.activate_folder(dependencies.deps_folder())
        geos_problem = geos_isolation.import_shapely_with_own_geos()  # before anything imports shapely
        if geos_problem:
            QgsMessageLog.logMessage(geos_problem, _LOG_TAG, Qgis.Warning)
        self.dependency_report = self.check()
        if not self.dependency_report.ok:
            QgsMessageLog.logMessage(self.dependency_report.message(), _LOG_TAG, Qgis.Warning)
        if self.dependency_report.optional_message():
            QgsMessageLog.logMessage(self.dependency_report.optional_message(), _LOG_TAG, Qgis.Info)
        return self.dependency_report

    def _offer_scale_out(self):
        """Desktop: list *Install Dask for workers* in the plugin menu exactly while Dask is missing.

        The entry is enabled when the plugin-local folder can supply the group (nothing of
        it is on QGIS's path yet); its tooltip says what is missing.
        """
        report = self.dependency_report
        missing = dependencies.SCALE_OUT in report.missing_groups
        if missing and self.scale_out_action is None:
            self.scale_out_action = QAction(dependencies.SCALE_OUT.action)
            self.scale_out_action.setObjectName("PolyTopoInstallScaleOutAction")
            self.scale_out_action.triggered.connect(self.install_scale_out)
            self.iface.addPluginToMenu(MENU_NAME, self.scale_out_action)
        elif not missing:
            self._remove_scale_out_action()
        if self.scale_out_action is not None:
            self.scale_out_action.setEnabled(dependencies.SCALE_OUT in report.installable_groups)
            self.scale_out_action.setToolTip(report.optional_message())

    def _remove_scale_out_action(self):
        if self.scale_out_action is not None:
            self.iface.removePluginMenu(MENU_NAME, self.scale_out_action)
            self.scale_out_action.deleteLater()
            self.scale_out_action = None

    def initGui(self):  # noqa: N802 - QGIS API name.
        """Start the plugin in QGIS desktop: provider, toolbar button and menu entry."""
        self.initProcessing()
        if self.action is None:
            self.action = QAction(QIcon(str(ICON_PATH)), "PolyTopo")
            self.action.setObjectName("PolyTopoDockAction")
            self.action.setCheckable(True)
            self.action.setToolTip("Vectorize and evaluate polygons with holes")
            self.action.triggered.connect(self.show_dock)
            self.iface.addToolBarIcon(self.action)
            self.iface.addPluginToMenu(MENU_NAME, self.action)
        self._offer_scale_out()
        if not self.dependency_report.ok:
            self.show_dependency_message()

    def show_dock(self, visible=True):
        """Show (or hide) the dock, creating it on first use.

        Without the required packages the dock is not created; the dependency
        message is shown again instead.

        Returns
        -------
        polytopo.plugin.gui.dock.PolyTopoDock or None
        """
        if not self.dependency_report.ok:
            self.action.setChecked(False)
            self.show_dependency_message()
            return None
        if self.dock is None:
            from .gui import dock
            from . import runs

            self.dock = dock.PolyTopoDock(runs, iface=self.iface)
            self.dock.visibilityChanged.connect(self.action.setChecked)
            self.iface.addDockWidget(Qt.RightDockWidgetArea, self.dock)
        self.dock.setVisible(visible)
        self.action.setChecked(visible)
        return self.dock

    def show_dependency_message(self):
        """Push the missing-package message to the message bar, with an *Install* button."""
        report = self.dependency_report
        bar = self.iface.messageBar()
        item = bar.createMessage("PolyTopo", "missing Python packages: " + ", ".join(report.missing_names())
                                 + " (details in the PolyTopo message log)")
        if report.installable:
            button = QPushButton("Install")
            button.setToolTip(report.message())
            button.clicked.connect(self.install_dependencies)
            item.layout().addWidget(button)
        bar.pushWidget(item, Qgis.Warning)

    def install_dependencies(self, *, groups=()):
        """Install the missing packages in a background task (pip, plugin-local folder).

        Parameters
        ----------
        groups : sequence of polytopo.plugin.setup.dependencies.OptionalGroup
            Optional groups to install too (``install`` is then called with ``groups=``).

        Returns
        -------
        polytopo.plugin.gui.tasks.InstallDependenciesTask or None
            None when an install is already running.
        """
        if self.install_task is not None:
            return None
        from .gui.tasks import InstallDependenciesTask

        names = self.dependency_report.missing_names() + [name for group in groups for name in group.names()]
        install = functools.partial(self.install, groups=tuple(groups)) if groups else self.install
        self.iface.messageBar().clearWidgets()
        self.iface.messageBar().pushMessage("PolyTopo", "Installing " + ", ".join(names) + " …", Qgis.Info, 0)
        self.install_task = InstallDependenciesTask(self.dependency_report, self.installed, install, names=names)
        QgsApplication.taskManager().addTask(self.install_task)
        return self.install_task

    def install_scale_out(self):
        """Install Dask and distributed (the optional scale-out group) for the Workers and Scheduler fields."""
        return self.install_dependencies(groups=(dependencies.SCALE_OUT,))

    def installed(self, outcome):
        """Main thread: report the install outcome and check the packages again."""
        self.install_task = None
        bar = self.iface.messageBar()
        bar.clearWidgets()
        if not outcome.ok:
            QgsMessageLog.logMessage(f"Install failed: {' '.join(outcome.command)}\n{outcome.output_tail}",
                                     _LOG_TAG, Qgis.Critical)
            bar.pushMessage("PolyTopo", "Installing the Python packages failed; pip's output is in the "
                            "PolyTopo message log.", Qgis.Critical, 0)
            return
        self.check_dependencies()
        self._offer_scale_out()
        if self.dependency_report.ok:
            bar.pushMessage("PolyTopo", f"Python packages installed into {outcome.folder}.", Qgis.Success, 10)
        else:
            self.show_dependency_message()

    def unload(self):
        """Remove the dock, the toolbar button, the menu entry and the provider."""
        if self.dock is not None:
            self.dock.abandon_tasks()
            self.iface.removeDockWidget(self.dock)
            self.dock.deleteLater()
            self.dock = None
        self._remove_scale_out_action()
        if self.action is not None:
            self.iface.removePluginMenu(MENU_NAME, self.action)
            self.iface.removeToolBarIcon(self.action)
            self.action.deleteLater()
            self.action = None
        if self.provider is None:
            return
        QgsApplication.processingRegistry().removeProvider(self.provider)
        self.provider = None
