"""Sphinx configuration of the rebelboost docs: `sphinx-build -W -b html docs docs/_build/html` (CI), with the
`docs` extra installed (`pip install "rebelboost[docs]"` or the wheel with `[docs]`)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

import rebelboost  # noqa: E402  (the installed package: the docs describe what users get)

project = "rebelboost"
author = "rebelboost contributors"
copyright = "rebelboost contributors"  # noqa: A001
release = version = rebelboost.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "rebelboost_docs",  # _ext/: the generated pages (parameters, CLI, benchmarks)
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "distributed.md", "cascades.md", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5"]
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
templates_path = ["_templates"]
autosummary_generate = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
html_theme = "furo"
html_title = f"rebelboost {release}"
suppress_warnings = ["myst.header"]  # the included docs/distributed.md starts below the page's title level

sphinx_gallery_conf = {
    "examples_dirs": os.path.join("..", "examples", "python"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
}
