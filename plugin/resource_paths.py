"""Locations of the plugin's bundled resources (icons, report template).

The paths are absolute and derived from this file's location, so they hold
wherever the plugin folder or the installed package lives.
"""

from pathlib import Path

__all__ = ["RESOURCES_DIR", "ICON_PATH", "REPORT_TEMPLATE_PATH"]

#: Folder ``resources/`` at the plugin root.
RESOURCES_DIR = Path(__file__).resolve().parent.parent / "resources"

#: The plugin and provider icon (SVG).
ICON_PATH = RESOURCES_DIR / "icon.svg"

#: HTML template of the evaluation report (``string.Template`` placeholders).
REPORT_TEMPLATE_PATH = RESOURCES_DIR / "report" / "report.html"
