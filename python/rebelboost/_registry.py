"""The estimator classes a model file may name, by class name.

Each estimator class that sets its own ``_loss`` registers here as it is defined
(``BaseBoostingClassifier.__init_subclass__``), so ``serialization`` finds the class a file names without
importing any estimator module: the imports run one way, estimators -> ``_base`` -> ``serialization`` ->
this module (docs/how_it_works.md).
"""

from __future__ import annotations

from typing import Any

__all__ = ["register", "estimator_class"]

_CLASSES: dict[str, type[Any]] = {}


def register(cls: type[Any]) -> None:
    """Record ``cls`` under its name; a second class of the same name is a programming error."""
    known = _CLASSES.setdefault(cls.__name__, cls)
    if known is not cls:
        raise RuntimeError(f"two estimator classes are named {cls.__name__}: {known!r} and {cls!r}")


def estimator_class(name: str) -> type[Any] | None:
    """The registered class named ``name``, or None."""
    return _CLASSES.get(name)
