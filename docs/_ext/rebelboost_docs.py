"""The generated pages of the docs, written into docs/generated/ when a build starts (as LightGBM writes its
Parameters page from config.h):

- parameters.md: every estimator parameter, its default per estimator and its allowed values, read from the
  one parameter table (rebelboost._params, docs/design/parameters.md), with the description from the
  estimator's docstring;
- cli.md: ``rebelboost --help`` and the help of every subcommand, from the parser the CLI runs;
- benchmarks.md: tables from the JSON results in bench/results/ (each script's own records).

Run as a script (``python docs/_ext/rebelboost_docs.py``) it writes the same pages without Sphinx.
"""

from __future__ import annotations

import contextlib
import io
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.dirname(HERE)
REPO = os.path.dirname(DOCS)
OUT = os.path.join(DOCS, "generated")


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _descriptions(cls) -> dict[str, str]:
    from numpydoc.docscrape import ClassDoc

    out = {}
    for param in ClassDoc(cls, config={"show_class_members": False})["Parameters"]:
        for name in param.name.split(","):
            out[name.strip()] = " ".join(param.desc) if param.desc else param.type
    return out


def _constraint_text(constraints) -> str:
    from sklearn.utils._param_validation import make_constraint

    texts = []
    for c in constraints:
        text = str(make_constraint(c))
        if c == "boolean":
            text = "a bool"
        elif c is None:
            text = "None"
        texts.append(text)
    return " or ".join(dict.fromkeys(texts))


def parameters_page() -> str:
    import rebelboost
    from rebelboost._params import ESTIMATORS, PARAMS, constraints_for, default_of

    keys = list(ESTIMATORS)
    classes = [getattr(rebelboost, ESTIMATORS[key].class_name) for key in keys]
    names = [name for name in PARAMS if any(name in ESTIMATORS[key].params for key in keys)]
    lines = [
        "# Parameters",
        "",
        "Generated at build time (`docs/_ext/rebelboost_docs.py`) from the one parameter table,",
        "`rebelboost._params` ([why and how](../design/parameters.md)): the defaults and allowed values are the",
        "table's (for the parameters the core reads, the core's own `TrainParams` defaults and `kParamBounds`),",
        "the constraints `fit` checks (`rebelboost.load` checks a file's parameters the same way); the",
        "descriptions come from the estimators' docstrings. \"-\" means the estimator has no such parameter.",
        "The command line's options are on the [CLI page](cli.md).",
        "",
        "| parameter | " + " | ".join(f"`{cls.__name__}`" for cls in classes) + " | allowed values |",
        "|---|" + "---|" * len(classes) + "---|",
    ]
    descriptions: dict[str, str] = {}
    for cls in reversed(classes):
        descriptions.update({k: v for k, v in _descriptions(cls).items() if v})
    for name in names:
        having = [key for key in keys if name in ESTIMATORS[key].params]
        defaults = [f"`{default_of(key, name)!r}`" if key in having else "-" for key in keys]
        allowed = _constraint_text(constraints_for(having[0])[name])
        lines.append(f"| `{name}` | " + " | ".join(defaults) + f" | {_cell(allowed)} |")
    lines += ["", "## What each parameter does", ""]
    for name in names:
        lines += [f"### `{name}`", "", descriptions.get(name, "(no description in the docstrings)"), ""]
    return "\n".join(lines)


def cli_page() -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: the same page on every machine
    from rebelboost.cli import build_parser

    parser = build_parser()
    lines = [
        "# Command line",
        "",
        "Generated at build time from the parser `rebelboost` runs (`rebelboost.cli.build_parser`), so it is",
        "the output of `rebelboost --help` and `rebelboost COMMAND --help`. Exit codes, data files and",
        "column matching: [Command line guide](../guide/cli.md).",
        "",
        "## rebelboost",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
        "",
    ]
    commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sub in commands.choices.items():
        lines += [f"## rebelboost {name}", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


def _scalar(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _format(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return _cell(value)


def _table(rows: list[dict], first: str | None = None, limit: int = 40) -> list[str]:
    columns: list[str] = []
    for row in rows:
        columns += [k for k, v in row.items() if _scalar(v) and k not in columns]
    if first:
        columns.insert(0, first)
    if not columns:
        return []
    out = ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows[:limit]:
        out.append("| " + " | ".join(_format(row.get(c, "")) for c in columns) + " |")
    if len(rows) > limit:
        out.append(f"| ({len(rows) - limit} more rows in the JSON) |" + " |" * (len(columns) - 1))
    return out + [""]


def _tables(value, title: str, depth: int = 0) -> list[str]:
    """Markdown tables for the record lists in a result: a list of dicts, or a dict of dicts (keyed rows);
    a dict of scalars (e.g. the run's environment) as a two-column table."""
    if depth > 2:
        return []
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        body = _table(value)
        return ([f"*{title}*", ""] + body) if body else []
    if isinstance(value, dict) and value:
        if all(isinstance(v, dict) for v in value.values()) and all(
                any(_scalar(x) for x in v.values()) for v in value.values()):
            rows = [{"key": k, **v} for k, v in value.items()]
            return [f"*{title}*", ""] + _table(rows)
        if all(_scalar(v) for v in value.values()):
            return [f"*{title}*", ""] + _table([{"field": k, "value": v} for k, v in value.items()])
        out = []
        for key, sub in value.items():
            out += _tables(sub, f"{title} / {key}" if title else key, depth + 1)
        return out
    return []


def benchmarks_page() -> str:
    folder = os.path.join(REPO, "bench", "results")
    lines = [
        "# Benchmark results",
        "",
        "Generated at build time from the JSON records in `bench/results/` (each written by the script in",
        "`bench/` named in its section; the `.md` beside each JSON is that script's own report, with the",
        "machine, load and commands). The machine is a shared 2-core VM: ratios measured side by side are what",
        "to quote. The summary of what they show is in the [benchmarks guide](../benchmarks.md).",
        "",
    ]
    names = sorted(f for f in os.listdir(folder) if f.endswith(".json")) if os.path.isdir(folder) else []
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            try:
                data = json.load(handle)
            except ValueError:
                continue
        body = _tables(data, "")
        lines += [f"## {name[:-5]}", "", f"`bench/results/{name}`", ""]
        lines += body if body else ["(no table-shaped records in this file)", ""]
    if not names:
        lines.append("No results in this checkout.")
    return "\n".join(lines)


PAGES = {"parameters.md": parameters_page, "cli.md": cli_page, "benchmarks.md": benchmarks_page}


def write_pages() -> None:
    os.makedirs(OUT, exist_ok=True)
    for name, make in PAGES.items():
        text = make() + "\n"
        path = os.path.join(OUT, name)
        with contextlib.suppress(OSError), open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                continue  # unchanged: Sphinx keeps its cached page
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


def setup(app):
    app.connect("builder-inited", lambda app: write_pages())
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    with contextlib.redirect_stdout(io.StringIO()):
        write_pages()
    print("wrote", ", ".join(os.path.join(OUT, name) for name in PAGES))
