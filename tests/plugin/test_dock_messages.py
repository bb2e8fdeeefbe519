"""PolyTopo's messages leave the QGIS message bar with the project they were about."""


def test_a_new_project_takes_polytopos_warnings_off_the_message_bar(qgis_app):
    from qgis.core import QgsProject
    from qgis.gui import QgsMessageBar
    from stand_ins import StandInCore

    from polytopo.plugin.gui.dock import PolyTopoDock
    from polytopo.plugin.gui.tasks import MessageBarNotifier

    bar = QgsMessageBar()
    notifier = MessageBarNotifier(bar)
    dock = PolyTopoDock(StandInCore(), notifier=notifier, providers=lambda: ([], False), open_url=lambda url: None)
    bar.pushMessage("Other plugin", "not ours", 0, 0)
    notifier.warning("PolyTopo", "Expected a raster layer to vectorize but none is chosen")
    notifier.error("PolyTopo", "PolyTopo evaluation failed")
    assert len(bar.items()) == 3
    QgsProject.instance().clear()
    assert [item.text() for item in bar.items()] == ["not ours"]
    dock.deleteLater()
