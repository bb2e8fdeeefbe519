"""Training tools of the bundled model zoo (development only; the engine never imports them).

``python -m polytopo.training all`` retrains every model of
:data:`~polytopo.training.recipes.RECIPES` from scratch on the CPU,
exports it to ``models/zoo`` with its card, scores it on held-out ground with
the real engine and evaluator, and regenerates the tables of
``models/README.md``. Training needs PyTorch, which is imported lazily (only
by :mod:`.nets`, :mod:`.train` and :mod:`.export`), and the shared data
folder; importing this package needs neither.
"""

from .errors import SharedDataError, TorchMissingError, TrainingError
from .recipes import RECIPES, Recipe

__all__ = ["RECIPES", "Recipe", "SharedDataError", "TorchMissingError", "TrainingError"]
