"""Package namespaces whose names are imported on first use (PEP 562)."""

import importlib
import sys

__all__ = ["lazy_namespace"]


def lazy_namespace(package, defined_in):
    """The module-level ``__getattr__`` and ``__dir__`` of a package whose names load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    defined_in : dict
        Name → module that defines it, relative to ``package`` (e.g. ``".api"``).

    Returns
    -------
    tuple of callable
        ``(__getattr__, __dir__)``: assign both at module level. A name is imported from its
        module when first asked for and then kept in the package's namespace.
    """

    def __getattr__(name):
        if name not in defined_in:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(defined_in[name], package), name)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(defined_in))

    return __getattr__, __dir__
