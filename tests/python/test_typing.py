"""Every public name of rebelboost carries annotations: each parameter and the return of the public
functions, and of the public methods and properties the estimators define (those inherited from
scikit-learn are scikit-learn's). mypy --strict then checks a user script against them in CI
(tests/typing/user_script.py, .ci/run)."""

import inspect

import pytest

import rebelboost
from rebelboost import plot


def _missing(function, where):
    """The parameters (and 'return') of `function` without an annotation."""
    signature = inspect.signature(function)
    missing = [f"{where}({name})" for name, p in signature.parameters.items()
               if name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append(f"{where} -> ?")
    return missing


def _public_names(module):
    return [(f"{module.__name__}.{name}", getattr(module, name)) for name in module.__all__]


def _unannotated(name, obj):
    if inspect.isfunction(obj):
        return _missing(obj, name)
    if not inspect.isclass(obj) or issubclass(obj, BaseException):
        return []
    found = []
    for klass in obj.__mro__:
        if not klass.__module__.startswith("rebelboost"):
            continue
        for attr, value in vars(klass).items():
            if attr.startswith("_") and attr != "__init__":
                continue
            function = value.fget if isinstance(value, property) else value
            if inspect.isfunction(function):
                found += _missing(function, f"{name}.{attr}")
    return found


def test_the_check_sees_a_missing_annotation():
    def f(x: int, y) -> int:
        return x

    def g(x: int):
        return x

    assert _missing(f, "f") == ["f(y)"]
    assert _missing(g, "g") == ["g -> ?"]


def test_every_public_name_is_annotated():
    names = _public_names(rebelboost) + _public_names(plot)
    missing = [m for name, obj in names for m in _unannotated(name, obj)]
    assert not missing, f"{len(missing)} without annotations: {missing[:20]}"


def test_the_dask_estimators_are_annotated():
    dask = pytest.importorskip("rebelboost.dask")
    missing = [m for name, obj in _public_names(dask) for m in _unannotated(name, obj)]
    assert not missing, f"{len(missing)} without annotations: {missing[:20]}"
