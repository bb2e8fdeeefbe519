"""Where the plugin keeps downloaded models of the model pack: a folder in the QGIS profile."""

import os
from pathlib import Path

__all__ = ["profile_model_dir"]


def profile_model_dir():
    """The folder that receives model-pack downloads in QGIS.

    Returns
    -------
    pathlib.Path
        ``$POLYTOPO_MODELS_DIR`` when set (as on the command line), else
        ``<QGIS profile folder>/polytopo/models``, where the profile folder is
        ``QgsApplication.qgisSettingsDirPath()`` (e.g.
        ``~/.local/share/QGIS/QGIS3/profiles/default/``). It need not exist yet; it
        survives plugin updates, which replace the plugin folder.
    """
    from qgis.core import QgsApplication

    override = os.environ.get("POLYTOPO_MODELS_DIR", "").strip()
    if override:
        return Path(override).expanduser()
    return Path(QgsApplication.qgisSettingsDirPath()) / "polytopo" / "models"
