"""The main job: ``python -m polytopo.plugin.demo.main_job`` and the data it fetches.

``main_job`` runs both scenes end to end in a headless QGIS; ``demo_data`` fetches the
SpaceNet Atlanta tile and ``hole_scene`` renders the Helsinki courtyard scene.
"""

__all__ = []
