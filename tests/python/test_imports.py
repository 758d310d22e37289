"""The package's modules import one another in one direction: no cycle, even through imports made inside
functions (a call-time cycle makes the order of first use matter, and hides what a module depends on).
Imports under ``if TYPE_CHECKING:`` are left out: they name types for annotations and never run."""

import ast
from pathlib import Path

import rebelboost
from rebelboost import _registry

PACKAGE = Path(rebelboost.__file__).resolve().parent


def _runtime_nodes(tree):
    """Every node of `tree` except those inside ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                stack.extend(child.orelse)
            else:
                stack.append(child)


def _imports(path, modules):
    """The package modules `path` imports when it runs (top level or inside functions)."""
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != "rebelboost":
                continue
            if len(parts) > 1:
                found.add(parts[1])
            else:  # from rebelboost import _core, plot
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("rebelboost."))
    return {m for m in found if m in modules and m != path.stem}


def _cycle(graph):
    """One cycle of `graph` as a list of modules, or None (depth-first search with colours)."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_type_checking_imports_are_left_out(tmp_path):
    module = tmp_path / "a.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rebelboost.b import B\n"
                      "else:\n    from rebelboost import c\ndef f():\n    from rebelboost.d import D\n")
    assert _imports(module, {"a", "b", "c", "d"}) == {"c", "d"}


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle_in_the_package():
    modules = {p.stem: p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    graph = {name: _imports(path, modules) for name, path in modules.items()}
    assert graph["serialization"].isdisjoint({"adaboost", "rebel", "veb", "_base", "dask", "json_model"})
    assert _cycle(graph) is None, f"import cycle: {' -> '.join(_cycle(graph))}"


def test_the_registry_holds_the_estimators_a_file_can_name():
    names = ("AdaBoostClassifier", "REBELClassifier", "VEBBoostClassifier", "BoostingRegressor")
    for name in names:
        assert _registry.estimator_class(name) is getattr(rebelboost, name)
    assert set(_registry._CLASSES) == set(names)  # not the base classes, nor the Dask estimators
    assert _registry.estimator_class("BaseBoostingClassifier") is None


def test_the_extension_holds_no_test_only_stage():
    # The similarity selection's stages are bound for the tests in _rebelboost_testing, never in the wheel.
    from rebelboost import _core

    assert not [name for name in dir(_core) if name.startswith("similarity_")]
