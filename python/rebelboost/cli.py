"""The ``rebelboost`` command line: demo, train, predict, evaluate, export, cmake-dir.

Data files are read as named columns (rebelboost._tables); prediction matches columns to the model by name.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import contextmanager, suppress

import numpy as np
from sklearn.utils._param_validation import InvalidParameterError

from rebelboost._paths import check_path, open_regular
from rebelboost._tables import check_text, feature_frame, labels_like, one_line, read_table, split_target

__all__ = ["main", "EXIT_CODES_HELP"]

# Exit codes scripts can rely on (docs/guide/cli.md).
EXIT_OK = 0            # success
EXIT_INTERNAL = 1      # a bug in rebelboost (Python's traceback is printed)
EXIT_USAGE = 2         # bad command-line options or parameter values
EXIT_INPUT = 3         # the data, cost matrix or model file is wrong (the message names the problem)
EXIT_FILE = 4          # a file cannot be read or written (missing, permissions, full disk)
EXIT_MEMORY = 5        # not enough memory for the data or model given (MemoryError)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_PIPE = 141        # standard output was closed early, e.g. by `| head` (128 + SIGPIPE); nothing printed
EXIT_CODES_HELP = """exit codes: 0 success, 1 internal error (a bug), 2 bad options or parameter values,
3 bad data, cost matrix or model file, 4 a file cannot be read or written, 5 not enough memory, 130 interrupted (Ctrl-C),
141 standard output closed early (e.g. | head)"""


def _demo(args):
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.model_selection import train_test_split

    from rebelboost import AdaBoostClassifier, REBELClassifier
    from rebelboost._params import value_of

    given = {k: v for k, v in (("n_estimators", args.n_estimators), ("max_depth", args.max_depth)) if v is not None}
    if args.dataset == "breast_cancer":  # binary: AdaBoost
        X, y = load_breast_cancer(return_X_y=True)
        clf, name = AdaBoostClassifier(**given), "AdaBoost"
    else:  # digits, 10 classes: REBEL
        X, y = load_digits(return_X_y=True)
        clf, name = REBELClassifier(**given), "REBEL"
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    start = time.perf_counter()
    clf.fit(X_train, y_train)
    elapsed = time.perf_counter() - start
    print(f"dataset: {args.dataset} ({X_train.shape[0]} train / {X_test.shape[0]} test rows, {X.shape[1]} features, "
          f"{len(clf.classes_)} classes)")
    depth = value_of(clf._loss, clf, "max_depth")
    print(f"rebelboost {name}, {clf.n_estimators_} trees of depth {depth}: fit {elapsed * 1e3:.1f} ms, "
          f"test accuracy {clf.score(X_test, y_test):.4f}")
    if args.compare:
        from sklearn.ensemble import AdaBoostClassifier as SkAdaBoost
        from sklearn.tree import DecisionTreeClassifier

        sk = SkAdaBoost(DecisionTreeClassifier(max_depth=depth), n_estimators=value_of(clf._loss, clf, "n_estimators"))
        start = time.perf_counter()
        sk.fit(X_train, y_train)
        sk_elapsed = time.perf_counter() - start
        print(f"scikit-learn AdaBoost, same setting: fit {sk_elapsed * 1e3:.1f} ms, "
              f"test accuracy {sk.score(X_test, y_test):.4f} (rebelboost {sk_elapsed / elapsed:.0f}x faster)")
    return EXIT_OK


def _read_cost_matrix(path):
    """A K x K cost matrix from a CSV of numbers without header (rows: true class, columns: predicted)."""
    import pandas as pd

    try:
        with open_regular(path, "cost matrix file") as handle:
            check_text(handle, path, "cost matrix")
            frame = pd.read_csv(handle, header=None)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable cost matrix CSV ({one_line(exc)})") from None
    if not all(pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns) or frame.isna().any().any():
        raise ValueError(f"{path}: the cost matrix must hold numbers only, one row per true class")
    return frame.to_numpy(dtype=np.float64)


def _table(args, expected=None):
    """(features DataFrame, labels or None) from args.data, features matched to `expected` names."""
    frame = read_table(args.data, header=not args.no_header)
    features, labels = split_target(frame, args.target, args.data)
    return feature_frame(features, args.data, expected), labels


# The estimator `rebelboost train --loss` picks, keyed as in rebelboost._params.ESTIMATORS.
_TRAIN_ESTIMATORS = {"adaboost": "AdaBoostClassifier", "veb": "VEBBoostClassifier", "rebel": "REBELClassifier",
                     "squared_error": "BoostingRegressor"}


def _train_estimator(args, y):
    """The estimator for ``args``: its key in ESTIMATORS and the parameters given on the command line (an
    option the estimator does not have is an error; options not given keep the estimator's defaults)."""
    from rebelboost._params import ESTIMATORS

    loss = args.loss
    if loss == "auto":  # an option only REBEL has (--weak-learner, --similarity-*) asks for REBEL like --cost-matrix
        only_rebel = set(ESTIMATORS["rebel"].params) - set(ESTIMATORS["adaboost"].params)
        asked = any(getattr(args, name) is not None for name in _train_options() if name in only_rebel)
        loss = "rebel" if len(np.unique(y)) > 2 or args.cost_matrix or asked else "adaboost"
    params = {"loss": loss} if loss in ("logistic", "squared") else {}  # REBEL's surrogate g
    key = "rebel" if loss in ("logistic", "squared") else loss
    if args.cost_matrix and key != "rebel":
        raise ValueError("--cost-matrix needs --loss rebel (or auto)")
    for name in _train_options():
        value = getattr(args, name)
        if value is None:
            continue
        if name not in ESTIMATORS[key].params:
            flag = "--" + name.replace("_", "-")
            raise InvalidParameterError(f"{flag} does not apply to {ESTIMATORS[key].class_name} (--loss {loss})")
        params[name] = value
    if key == "rebel" and args.cost_matrix:
        params["cost_matrix"] = _read_cost_matrix(args.cost_matrix)
    return key, params


def _train(args):
    import rebelboost

    check_path(args.model, "model file", reading=False)  # fail before training, not after
    folder = os.path.dirname(os.path.abspath(args.model))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write {args.model!r}: folder {folder!r} does not exist")
    X, y = _table(args)
    key, params = _train_estimator(args, y)
    clf = getattr(rebelboost, _TRAIN_ESTIMATORS[key])(**params)
    if key == "squared_error":
        y = _numeric_target(y, args.data)
    start = time.perf_counter()
    clf.fit(X, y)
    learners = {"tree": "trees", "similarity": "similarities", "hybrid": "hybrid learners"}[getattr(clf, "weak_learner", "tree")]
    score = "R^2" if _is_regressor(clf) else "accuracy"
    print(f"trained {type(clf).__name__} with {clf.n_estimators_} {learners} in {time.perf_counter() - start:.3f} s; "
          f"training {score} {clf.score(X, y):.4f}")
    clf.save(args.model)
    print(f"model written to {args.model}")
    return EXIT_OK


def _numeric_target(y, path):
    """The regressor's target column as float64, or a ValueError naming the file and the first bad row."""
    import pandas as pd

    values = pd.to_numeric(pd.Series(np.asarray(y, dtype=object)), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{path}: the target column holds {np.asarray(y, dtype=object)[row]!r} at data row {row}, "
                         "not a finite number (--loss squared_error needs numeric targets)")
    return values


def _loaded(args):
    import rebelboost

    clf = rebelboost.load(args.model)
    names = getattr(clf, "feature_names_in_", None)
    X, y = _table(args, None if names is None else list(names))
    if names is None and X.shape[1] != clf.n_features_in_:
        raise ValueError(f"{args.data}: {X.shape[1]} feature columns, but the model (fitted without column names) "
                         f"expects {clf.n_features_in_}")
    return clf, (X if names is not None else X.to_numpy()), y


def _predict(args):
    import pandas as pd

    if args.output:
        check_path(args.output, "output file", reading=False)  # before the model and data are read
    clf, X, _ = _loaded(args)
    regressor = _is_regressor(clf)
    if regressor and args.proba:
        raise ValueError("--proba is for classifiers; this model is a regressor")
    out = pd.DataFrame({"prediction" if regressor else "label": clf.predict(X)})
    if args.proba:
        proba = clf.predict_proba(X)
        for k, c in enumerate(clf.classes_):
            out[f"p_{c}"] = proba[:, k]
    if args.contrib:
        out = pd.concat([out, _contributions(clf, X)], axis=1)
    if args.output:
        with atomic_output(args.output) as handle:
            out.to_csv(handle, index=False, float_format="%.17g")
    else:
        out.to_csv(sys.stdout, index=False, float_format="%.17g")
    return EXIT_OK


def _contributions(clf, X):
    """decision_function(X, pred_contrib=True) as named columns: contrib_<feature> and contrib_expected (binary),
    contrib_<class>_<feature> and contrib_<class>_expected (per class with more than 2 classes)."""
    import numpy as np
    import pandas as pd

    values = clf.predict(X, pred_contrib=True) if _is_regressor(clf) else clf.decision_function(X, pred_contrib=True)
    names = list(getattr(clf, "feature_names_in_", [f"x{j}" for j in range(clf.n_features_in_)])) + ["expected"]
    if values.ndim == 2:
        return pd.DataFrame(values, columns=[f"contrib_{n}" for n in names])
    columns = [f"contrib_{c}_{n}" for c in clf.classes_ for n in names]
    return pd.DataFrame(np.reshape(values, (len(values), -1)), columns=columns)


def _is_regressor(clf):
    from sklearn.base import is_regressor

    return is_regressor(clf)


def _evaluate(args):
    clf, X, y = _loaded(args)
    if _is_regressor(clf):
        y = _numeric_target(y, args.data)
        rmse = float(np.sqrt(np.mean((clf.predict(X) - y) ** 2)))
        print(f"rmse {rmse:.6g}, R^2 {clf.score(X, y):.6f} on {len(y)} rows")
        return EXIT_OK
    y = labels_like(y, clf.classes_, args.data)
    print(f"accuracy {clf.score(X, y):.6f} on {len(y)} rows")
    return EXIT_OK


def _export(args):
    import rebelboost

    if args.output:
        check_path(args.output, "output file", reading=False)
    clf = rebelboost.load(args.model)
    if args.output:
        with atomic_output(args.output) as handle:
            rebelboost.to_json(clf, handle)
            handle.write("\n")
    else:  # streamed: a chunk of learners at a time, whatever the model's size
        rebelboost.to_json(clf, sys.stdout)
        sys.stdout.write("\n")
    return EXIT_OK


def _cmake_dir(args):
    import rebelboost

    print(rebelboost.get_cmake_dir())
    return EXIT_OK


@contextmanager
def atomic_output(path):
    """A text handle whose file appears at ``path`` only once fully written (temp file + rename); on any
    failure the temp file is removed and ``path`` is left as it was."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".rebelboost-", suffix=".tmp")
    except OSError as exc:  # named the temporary file, which the user never gave
        raise _user_path_error(exc, path) from None
    try:
        with os.fdopen(fd, "w", newline="") as handle:
            yield handle
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise _user_path_error(exc, path) from None
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def _user_path_error(exc, path):
    """The OSError ``exc`` raised on the temporary file of ``path``, told about ``path`` itself."""
    return type(exc)(exc.errno, f"cannot write {path!r}: {exc.strerror}") if exc.errno else exc


def _data_arguments(sub, target_help, target_required):
    sub.add_argument("data", help="a .csv (header row required unless --no-header), .parquet or .npz file")
    sub.add_argument("--target", required=target_required, default=None, help=target_help)
    sub.add_argument("--no-header", action="store_true",
                     help="the CSV has no header row: columns are named 0, 1, ... (by position)")


def build_parser():
    parser = argparse.ArgumentParser(prog="rebelboost", description="Fast boosted shallow trees.",
                                     epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"rebelboost {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="train on a bundled scikit-learn dataset and print accuracy and time "
                                       "(breast_cancer: AdaBoost; digits, 10 classes: REBEL)")
    demo.add_argument("--dataset", choices=["breast_cancer", "digits"], default="breast_cancer")
    demo.add_argument("--n-estimators", type=int, default=None, help="default: the estimator's")
    demo.add_argument("--max-depth", type=int, default=None, help="default: the estimator's")
    demo.add_argument("--compare", action="store_true", help="also fit scikit-learn's AdaBoostClassifier")
    demo.set_defaults(run=_demo)

    train = sub.add_parser("train", help="fit a boosted model on a data file and save it")
    _data_arguments(train, "label column: its name, or its index (negative counts from the end)", True)
    train.add_argument("--model", required=True, help="output model file")
    train.add_argument("--loss", choices=["auto", "adaboost", "veb", "rebel", "logistic", "squared", "squared_error"],
                       default="auto",
                       help="auto: AdaBoost for 2 classes, REBEL for more or with --cost-matrix or an option only "
                            "REBEL has (--weak-learner, --similarity-...); rebel: REBEL with the exponential loss; "
                            "logistic, squared: REBEL with that loss (any number of classes); squared_error: "
                            "BoostingRegressor (real targets)")
    train.add_argument("--cost-matrix", default=None,
                       help="REBEL: CSV of K x K costs (row = true class, column = predicted, labels sorted)")
    _add_parameter_options(train)
    train.set_defaults(run=_train)

    predict = sub.add_parser("predict", help="predict labels for the rows of a data file (columns matched by name)")
    _data_arguments(predict, "label column to drop before predicting (name or index)", False)
    predict.add_argument("--model", required=True)
    predict.add_argument("--output", default=None, help="CSV to write (atomically); default: standard output")
    predict.add_argument("--proba", action="store_true")
    predict.add_argument("--contrib", action="store_true",
                         help="also write each feature's contribution to the scores (TreeSHAP; tree models with "
                              "covers, format version 5 on), the expected value last")
    predict.set_defaults(run=_predict)

    evaluate = sub.add_parser("evaluate", help="accuracy of a saved model on a labelled data file")
    _data_arguments(evaluate, "label column: its name, or its index (negative counts from the end)", True)
    evaluate.add_argument("--model", required=True)
    evaluate.set_defaults(run=_evaluate)

    export = sub.add_parser("export", help="print a saved model as JSON")
    export.add_argument("--model", required=True)
    export.add_argument("--output", default=None, help="JSON file to write (atomically); default: standard output")
    export.set_defaults(run=_export)

    cmake = sub.add_parser("cmake-dir", help="print the folder to pass as -Drebelboost_DIR")
    cmake.set_defaults(run=_cmake_dir)
    return parser


def _train_options():
    """The estimator parameters `rebelboost train` has an option for (rebelboost._params, ``cli``)."""
    from rebelboost._params import PARAMS

    return [name for name, param in PARAMS.items() if param.cli]


def _add_parameter_options(parser):
    """One option per parameter of the table with a ``cli`` help: its type and choices from the table, its
    default left to the estimator (None here), and the estimators' defaults written in the help."""
    from rebelboost._params import CORE_BOUNDS, ESTIMATORS, PARAMS, default_of

    for name in _train_options():
        param = PARAMS[name]
        defaults = {}
        for key, entry in ESTIMATORS.items():
            if key in _TRAIN_ESTIMATORS and name in entry.params:
                defaults.setdefault(repr(default_of(key, name)), []).append(entry.class_name)
        shown = "; ".join(f"{value} ({', '.join(names)})" for value, names in defaults.items())
        takes_auto = any(name in entry.auto for entry in ESTIMATORS.values())
        choices = (*param.choices, "auto") if param.choices and takes_auto else param.choices or None
        parser.add_argument("--" + name.replace("_", "-"), type=_option_type(param, CORE_BOUNDS), default=None,
                            choices=choices, help=f"{param.cli}; default: {shown}")


def _boolean_option(text):
    """An option's value for a boolean parameter: true or false (any case), else the word itself."""
    return {"true": True, "false": False}.get(text.lower(), text)


def _option_type(param, bounds):
    """str for named choices, true/false for a boolean (other words as given: the estimator's constraints
    check them), else int or float as the parameter's bound or constraints say."""
    from numbers import Integral

    from sklearn.utils._param_validation import Interval

    if param.choices:
        return str
    if "boolean" in param.constraints:
        return _boolean_option
    if param.core in bounds:
        return int if bounds[param.core][4] else float
    integral = any(c == "random_state" or (isinstance(c, Interval) and c.type is Integral) for c in param.constraints)
    return int if integral else float


def _version():
    from rebelboost import __version__

    return __version__


def main(argv=None):
    """Run the command line; returns the exit code (see EXIT_CODES_HELP)."""
    args = build_parser().parse_args(argv)  # usage errors exit with EXIT_USAGE (argparse's 2)
    try:
        return args.run(args)
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly, like a program killed by SIGPIPE
        with suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE
    except KeyboardInterrupt:
        print("rebelboost: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except InvalidParameterError as exc:
        print(f"rebelboost: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError as exc:
        detail = f" ({exc})" if str(exc) else ""
        print(f"rebelboost: error: not enough memory for this {args.command}{detail}; use a machine with more "
              "memory, or less data", file=sys.stderr)
        return EXIT_MEMORY
    except ValueError as exc:
        print(f"rebelboost: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as exc:
        print(f"rebelboost: error: {exc}", file=sys.stderr)
        return EXIT_FILE


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
