"""The desktop side of the plugin: the dock, its background tasks and its choices.

Nothing here does evaluation or inference work itself: the dock gathers the user's
choices (``model_choice``; the layer defaults and output checks are :mod:`polytopo.plugin.runs.layer_choice` and :mod:`~polytopo.plugin.runs.output_check`) and runs
:mod:`polytopo.plugin.runs` in ``tasks``; ``restored_run`` shows a saved run again;
``dock_forms`` builds the widgets of its two parts (from the small pieces of
``dock_widgets``); ``wrap_layout`` lets its rows of widgets wrap when the dock is narrow.
"""

__all__ = []
