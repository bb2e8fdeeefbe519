"""The Processing side of the plugin: the ``polytopo`` provider and its algorithms.

Each algorithm module (``evaluate_algorithm``, ``vectorize_algorithm``,
``vectorize_evaluate_algorithm``) declares its parameters through
``evaluation_parameters`` and ``vectorize_parameters`` and hands the work to
:mod:`polytopo.plugin.runs`; ``support`` converts errors and loads styled outputs.
"""

__all__ = []
