"""The ``rebelboost`` command line: demo, train, predict, evaluate, export, cmake-dir."""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np

__all__ = ["main"]


def _read_csv(path, target):
    """Read a numeric CSV (optional header row). Returns (X float64 with NaN for empty/"nan", y or None, names)."""
    with open(path, newline="") as handle:
        rows = [row for row in csv.reader(handle) if row]
    if not rows:
        raise ValueError(f"{path}: no rows")

    def numeric(cell):
        try:
            float(cell)
            return True
        except ValueError:
            return cell.strip().lower() in ("", "nan", "na")

    header = None
    if not all(numeric(c) for c in rows[0]):
        header, rows = rows[0], rows[1:]
    if not rows:
        raise ValueError(f"{path}: a header but no data rows")
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"{path}: row {i + 1} has {len(row)} fields, expected {width}")
    target_index = None
    if target is not None:
        if header is not None and target in header:
            target_index = header.index(target)
        else:
            try:
                target_index = int(target) % width
            except ValueError:
                raise ValueError(f"{path}: no column named {target!r}") from None
    labels = None
    if target_index is not None:
        raw = [row[target_index] for row in rows]
        rows = [row[:target_index] + row[target_index + 1 :] for row in rows]
        try:
            labels = np.array([int(v) for v in raw])
        except ValueError:
            try:
                labels = np.array([float(v) for v in raw])
            except ValueError:
                labels = np.array(raw, dtype=object)
        if header is not None:
            header = header[:target_index] + header[target_index + 1 :]

    def cell(v, i, j):
        v = v.strip()
        if v.lower() in ("", "nan", "na"):
            return np.nan
        try:
            return float(v)
        except ValueError:
            raise ValueError(f"{path}: row {i + 1}, column {j + 1}: {v!r} is not a number") from None

    X = np.array([[cell(v, i, j) for j, v in enumerate(row)] for i, row in enumerate(rows)], dtype=np.float64)
    return X.reshape(len(rows), -1), labels, header


def _demo(args):
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.model_selection import train_test_split

    from rebelboost import AdaBoostClassifier, REBELClassifier

    if args.dataset == "breast_cancer":  # binary: AdaBoost
        X, y = load_breast_cancer(return_X_y=True)
        clf, name = AdaBoostClassifier(n_estimators=args.n_estimators, max_depth=args.max_depth), "AdaBoost"
    else:  # digits, 10 classes: REBEL
        X, y = load_digits(return_X_y=True)
        clf, name = REBELClassifier(n_estimators=args.n_estimators, max_depth=args.max_depth), "REBEL"
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    start = time.perf_counter()
    clf.fit(X_train, y_train)
    elapsed = time.perf_counter() - start
    print(f"dataset: {args.dataset} ({X_train.shape[0]} train / {X_test.shape[0]} test rows, {X.shape[1]} features, "
          f"{len(clf.classes_)} classes)")
    print(f"rebelboost {name}, {clf.n_estimators_} trees of depth {args.max_depth}: fit {elapsed * 1e3:.1f} ms, "
          f"test accuracy {clf.score(X_test, y_test):.4f}")
    if args.compare:
        from sklearn.ensemble import AdaBoostClassifier as SkAdaBoost
        from sklearn.tree import DecisionTreeClassifier

        sk = SkAdaBoost(DecisionTreeClassifier(max_depth=args.max_depth), n_estimators=args.n_estimators)
        start = time.perf_counter()
        sk.fit(X_train, y_train)
        sk_elapsed = time.perf_counter() - start
        print(f"scikit-learn AdaBoost, same setting: fit {sk_elapsed * 1e3:.1f} ms, "
              f"test accuracy {sk.score(X_test, y_test):.4f} (rebelboost {sk_elapsed / elapsed:.0f}x faster)")
    return 0


def _read_cost_matrix(path):
    """A K x K cost matrix from a CSV of numbers (rows: true class, columns: predicted, sorted labels)."""
    with open(path, newline="") as handle:
        rows = [row for row in csv.reader(handle) if row]
    try:
        return np.array([[float(v) for v in row] for row in rows])
    except ValueError as exc:
        raise ValueError(f"{path}: the cost matrix must hold numbers only ({exc})") from None


def _train(args):
    from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier

    folder = os.path.dirname(os.path.abspath(args.model))
    if not os.path.isdir(folder):  # fail before training, not after
        raise OSError(f"cannot write {args.model!r}: folder {folder!r} does not exist")
    X, y, _ = _read_csv(args.data, args.target)
    n_classes = len(np.unique(y))
    loss = args.loss
    if loss == "auto":
        loss = "rebel" if n_classes > 2 or args.cost_matrix else "adaboost"
    common = dict(n_estimators=args.n_estimators, max_depth=args.max_depth, learning_rate=args.learning_rate,
                  n_jobs=args.n_jobs)
    if args.cost_matrix and loss != "rebel":
        raise ValueError("--cost-matrix needs --loss rebel (or auto)")
    if loss == "rebel":
        cost = _read_cost_matrix(args.cost_matrix) if args.cost_matrix else None
        clf = REBELClassifier(cost_matrix=cost, **common)
    elif loss == "veb":
        clf = VEBBoostClassifier(lam=args.lam, **common)
    else:
        clf = AdaBoostClassifier(**common)
    start = time.perf_counter()
    clf.fit(X, y)
    print(f"trained {type(clf).__name__} with {clf.n_estimators_} trees in {time.perf_counter() - start:.3f} s; "
          f"training accuracy {clf.score(X, y):.4f}")
    clf.save(args.model)
    print(f"model written to {args.model}")
    return 0


def _predict(args):
    import rebelboost

    clf = rebelboost.load(args.model)
    X, _, _ = _read_csv(args.data, args.target)
    out = open(args.output, "w", newline="") if args.output else sys.stdout
    try:
        writer = csv.writer(out)
        if args.proba:
            writer.writerow(["label"] + [f"p_{c}" for c in clf.classes_])
            for label, p in zip(clf.predict(X), clf.predict_proba(X)):
                writer.writerow([label] + [repr(float(v)) for v in p])
        else:
            writer.writerow(["label"])
            for label in clf.predict(X):
                writer.writerow([label])
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _evaluate(args):
    import rebelboost

    clf = rebelboost.load(args.model)
    X, y, _ = _read_csv(args.data, args.target)
    if y is None:
        raise ValueError("evaluate needs --target")
    y = y.astype(clf.classes_.dtype) if clf.classes_.dtype.kind != "O" else y.astype(str).astype(object)
    print(f"accuracy {clf.score(X, y):.6f} on {len(y)} rows")
    return 0


def _export(args):
    import rebelboost

    print(rebelboost.to_json(rebelboost.load(args.model)))
    return 0


def _cmake_dir(args):
    import rebelboost

    print(rebelboost.get_cmake_dir())
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="rebelboost", description="Fast boosted shallow trees.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="train on a bundled scikit-learn dataset and print accuracy and time "
                                       "(breast_cancer: AdaBoost; digits, 10 classes: REBEL)")
    demo.add_argument("--dataset", choices=["breast_cancer", "digits"], default="breast_cancer")
    demo.add_argument("--n-estimators", type=int, default=200)
    demo.add_argument("--max-depth", type=int, default=1)
    demo.add_argument("--compare", action="store_true", help="also fit scikit-learn's AdaBoostClassifier")
    demo.set_defaults(run=_demo)

    train = sub.add_parser("train", help="fit a boosted model on a CSV and save it")
    train.add_argument("data")
    train.add_argument("--target", default="-1", help="label column: name or index (default: last)")
    train.add_argument("--model", required=True, help="output model file")
    train.add_argument("--n-estimators", type=int, default=200)
    train.add_argument("--max-depth", type=int, default=1)
    train.add_argument("--learning-rate", type=float, default=1.0)
    train.add_argument("--n-jobs", type=int, default=None)
    train.add_argument("--loss", choices=["auto", "adaboost", "veb", "rebel"], default="auto",
                       help="auto: AdaBoost for 2 classes, REBEL for more or with --cost-matrix")
    train.add_argument("--cost-matrix", default=None,
                       help="REBEL: CSV of K x K costs (row = true class, column = predicted, labels sorted)")
    train.add_argument("--lam", type=float, default=0.5, help="VEB-Boost's variance weight")
    train.set_defaults(run=_train)

    predict = sub.add_parser("predict", help="predict labels for the rows of a CSV")
    predict.add_argument("data")
    predict.add_argument("--model", required=True)
    predict.add_argument("--target", default=None, help="label column to drop before predicting")
    predict.add_argument("--output", default=None)
    predict.add_argument("--proba", action="store_true")
    predict.set_defaults(run=_predict)

    evaluate = sub.add_parser("evaluate", help="accuracy of a saved model on a labelled CSV")
    evaluate.add_argument("data")
    evaluate.add_argument("--model", required=True)
    evaluate.add_argument("--target", default="-1")
    evaluate.set_defaults(run=_evaluate)

    export = sub.add_parser("export", help="print a saved model as JSON")
    export.add_argument("--model", required=True)
    export.set_defaults(run=_export)

    cmake = sub.add_parser("cmake-dir", help="print the folder to pass as -Drebelboost_DIR")
    cmake.set_defaults(run=_cmake_dir)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError) as exc:
        print(f"rebelboost: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
