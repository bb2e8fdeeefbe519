"""The learning-rate schedule of a training run (no PyTorch needed).

The rate warms up linearly over the first 5 % of the schedule and then follows a
cosine decay to zero, either over ``recipe.steps`` or over the elapsed share of a
time budget; a pretrained encoder follows the same curve scaled by the recipe's
``encoder_learning_rate_scale`` (its own optimizer parameter group).
"""

import math

__all__ = ["learning_rate_at", "learning_rate_at_step", "parameter_groups"]


def learning_rate_at(progress, recipe):
    """Learning rate at a fraction ``progress`` of a time-bounded schedule (warm-up over the first 5 %, cosine)."""
    if progress < 0.05:
        return recipe.learning_rate * max(progress / 0.05, 0.01)
    return recipe.learning_rate * 0.5 * (1.0 + math.cos(math.pi * min((progress - 0.05) / 0.95, 1.0)))


def learning_rate_at_step(step, recipe):
    """Learning rate of step ``step`` (0-based) of ``recipe.steps`` (warm-up over the first 5 %, cosine)."""
    warmup = max(1, recipe.steps // 20)
    if step < warmup:
        return recipe.learning_rate * (step + 1) / warmup
    progress = (step - warmup) / max(1, recipe.steps - warmup)
    return recipe.learning_rate * 0.5 * (1.0 + math.cos(math.pi * progress))


def parameter_groups(net, recipe):
    """The optimizer's parameter groups of ``net``, each with its ``scale`` of the learning rate.

    The pretrained encoder's parameters (``net.encoder``) get the recipe's
    ``encoder_learning_rate_scale``, every other parameter the whole rate; a net without
    an encoder is one group at scale 1.
    """
    encoder = getattr(net, "encoder", None)
    if encoder is None:
        return [{"params": list(net.parameters()), "scale": 1.0}]
    inside = {id(parameter) for parameter in encoder.parameters()}
    return [
        {"params": [p for p in net.parameters() if id(p) in inside], "scale": recipe.encoder_learning_rate_scale},
        {"params": [p for p in net.parameters() if id(p) not in inside], "scale": 1.0},
    ]
