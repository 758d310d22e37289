"""The hand-written C++ API page names every public type of cpp/include/rebelboost, and the generated
Parameters page lists every estimator parameter (the docs site's pages cannot fall behind the code)."""

import os
import re
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HEADERS = os.path.join(REPO, "cpp", "include", "rebelboost")


def test_the_cpp_api_page_names_every_public_header_and_type():
    with open(os.path.join(REPO, "docs", "cpp_api.md"), encoding="utf-8") as handle:
        page = handle.read()
    for name in sorted(os.listdir(HEADERS)):
        if not name.endswith(".hpp"):
            continue
        assert f"`rebelboost/{name}`" in page, f"docs/cpp_api.md does not list the header {name}"
        with open(os.path.join(HEADERS, name), encoding="utf-8") as handle:
            text = handle.read()
        for kind, type_name in re.findall(r"^(class|struct|enum class) ([A-Za-z_]\w*)\b(?!;)", text, re.M):
            assert f"`{type_name}`" in page, f"docs/cpp_api.md does not name {kind} {type_name} of {name}"


def test_the_parameters_page_lists_every_parameter():
    pytest.importorskip("numpydoc")
    sys.path.insert(0, os.path.join(REPO, "docs", "_ext"))
    try:
        import rebelboost_docs
    finally:
        sys.path.pop(0)
    from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier

    page = rebelboost_docs.parameters_page()
    for cls in (AdaBoostClassifier, VEBBoostClassifier, REBELClassifier):
        for name, default in cls().get_params().items():
            assert f"| `{name}` |" in page and f"`{default!r}`" in page, (cls.__name__, name)
