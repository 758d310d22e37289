"""The JSON document (to_json / from_json, docs/guide/json_schema.md): exact round trips, an independent
numpy-only predictor that reads the document alone, and hostile documents (hand-made and fuzzed)."""

import copy
import json
import math

import numpy as np
import pandas as pd
import pytest

import rebelboost
from rebelboost import AdaBoostClassifier, ModelFileError, REBELClassifier, VEBBoostClassifier, from_json, to_json


def _data(n=300, d=5, n_classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n), [-0.5, 0.5, 1.5][: n_classes - 1])
    X[rng.rand(n, d) < 0.1] = np.nan
    return X, y


def _models():
    X, y = _data()
    X3, y3 = _data(n_classes=3, seed=1)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])
    cascade = AdaBoostClassifier(n_estimators=20, max_depth=2).fit(X, y)
    cascade.calibrate_cascade(X, y, max_disagreement=0.1)
    return [(AdaBoostClassifier(n_estimators=10, max_depth=3).fit(frame, np.where(y, "yes", "no")), frame),
            (VEBBoostClassifier(n_estimators=8, max_depth=2).fit(X, y), X),
            (REBELClassifier(n_estimators=8, max_depth=4).fit(X, y), X),
            (REBELClassifier(n_estimators=8, max_depth=3, cost_matrix=[[0, 1, 4], [1, 0, 1], [2, 1, 0]]).fit(X3, y3), X3),
            (cascade, X)]


@pytest.fixture(scope="module")
def models():
    return _models()


def test_round_trip_gives_identical_models_and_predictions(models, tmp_path):
    for clf, X in models:
        back = from_json(to_json(clf))
        assert type(back) is type(clf) and back.get_params() == clf.get_params()
        np.testing.assert_array_equal(back.classes_, clf.classes_)
        assert back.decision_function(X).tobytes() == clf.decision_function(X).tobytes()
        assert back.decision_function(X, pred_contrib=True).tobytes() == clf.decision_function(X, pred_contrib=True).tobytes()
        clf.save(tmp_path / "a.rbm")
        back.save(tmp_path / "b.rbm")
        assert (tmp_path / "a.rbm").read_bytes() == (tmp_path / "b.rbm").read_bytes()  # the same model file
        if clf.cascade_ is not None:
            assert (back.predict(X, cascade=True) == clf.predict(X, cascade=True)).all()
    frame_model = models[0][0]
    doc = json.loads(to_json(frame_model))
    assert doc["feature_names"] == ["a", "b", "c", "d", "e"] and doc["schema_version"] == 1
    assert all(len(tree["cover"]) == len(tree["feature"]) for tree in doc["trees"])
    import io

    stream = io.StringIO(to_json(frame_model))
    assert list(from_json(stream).feature_names_in_) == list("abcde")


def _reference_scores(doc, X):
    """decision_function from the JSON document alone, in numpy: H = bias + sum_t f_t(x) step_t, summed in
    tree order as the core sums; NaN goes where nan_left says, other values left when x <= threshold."""
    X = np.asarray(X, dtype=np.float64)
    scores = np.tile(np.asarray(doc["bias"], dtype=np.float64), (len(X), 1))
    rows = np.arange(len(X))
    for tree in doc["trees"]:
        feature, threshold = np.asarray(tree["feature"]), np.asarray(tree["threshold"], dtype=np.float64)
        left, right, nan_left = np.asarray(tree["left"]), np.asarray(tree["right"]), np.asarray(tree["nan_left"])
        node = np.zeros(len(X), dtype=np.int64)
        while True:
            split = feature[node] >= 0
            if not split.any():
                break
            x = X[rows, np.where(split, feature[node], 0)]
            go_left = np.where(np.isnan(x), nan_left[node], x <= threshold[node])
            node = np.where(split, np.where(go_left, left[node], right[node]), node)
        f = np.asarray(tree["value"], dtype=np.float64)[node]
        scores += f[:, None] * np.asarray(tree["step"], dtype=np.float64)
    if scores.shape[1] == 1:
        return scores[:, 0]
    return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores


def test_a_numpy_predictor_reading_the_json_alone_reproduces_decision_function(models):
    for clf, X in models:
        doc = json.loads(to_json(clf))
        assert _reference_scores(doc, X).tobytes() == clf.decision_function(X).tobytes()


def _good_doc(models):
    return json.loads(to_json(models[3][0]))


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(schema="other"), "'schema' is 'other'"),
    (lambda d: d.update(schema_version=99), "schema_version 99"),
    (lambda d: d.update(schema_version="1"), "'schema_version' has the wrong type"),
    (lambda d: d.update(n_features=2**40), "n_features 1099511627776"),
    (lambda d: d.update(n_features=True), "'n_features' has the wrong type"),
    (lambda d: d.pop("trees"), "'trees' is missing"),
    (lambda d: d.update(trees={"a": 1}), "'trees' has the wrong type"),
    (lambda d: d.update(bias=[0.0] * 5000), "bias has 5000 entries"),
    (lambda d: d.update(bias=["x", 1, 2]), "bias must hold numbers"),
    (lambda d: d["trees"][0].update(feature=[0] * 100000), "100000 nodes"),
    (lambda d: d["trees"][0].update(left=[1.5] * len(d["trees"][0]["left"])), "left must hold integers"),
    (lambda d: d["trees"][0].update(nan_left=[1] * len(d["trees"][0]["nan_left"])), "nan_left must hold true or false"),
    (lambda d: d["trees"][0]["left"].__setitem__(0, 2**40), r"left holds an integer outside \[0, 4294967295\]"),
    (lambda d: d["trees"][0]["feature"].__setitem__(0, 99), "uses feature 99 of 5"),
    (lambda d: d["trees"][0]["left"].__setitem__(0, 0), "out-of-range children"),  # a cycle: the root its own child
    (lambda d: d["trees"][0]["right"].__setitem__(0, d["trees"][0]["left"][0]), "out-of-range children"),
    (lambda d: d["trees"][0]["step"].__setitem__(0, math.inf), "non-finite step"),
    (lambda d: d["trees"][0]["threshold"].__setitem__(0, math.nan), "NaN threshold"),
    (lambda d: d["trees"][0]["cover"].__setitem__(0, math.nan), "cover of node 0 is not finite"),
    (lambda d: d["trees"][0]["cover"].__setitem__(1, 1e9), "larger cover than the node"),
    (lambda d: d["trees"][0]["step"].append(0.0), "step has 4 entries, expected 3"),
    (lambda d: d["bias"].__setitem__(0, -math.inf), "non-finite bias"),
    (lambda d: d.update(learner="similarity"), "from_json reads tree models"),
    (lambda d: d.update(classes=[0, 1, 7]), "'classes' differs from metadata"),
    (lambda d: d["metadata"].update(n_features_in=4), "says 4 features"),
    (lambda d: d["metadata"].update(estimator="AdaBoostClassifier"), "holds a REBEL model"),
    (lambda d: d.update(cascade={"every": 0, "thresholds": []}), "cascade every 0"),
    (lambda d: d.update(cascade={"every": 1, "thresholds": [[1.0, 1.0, 1.0]] * 50}), "50 checkpoints for 8 trees"),
])
def test_hostile_documents_are_clear_errors(models, mutate, message):
    doc = _good_doc(models)
    mutate(doc)
    with pytest.raises(ModelFileError, match=message):
        from_json(json.dumps(doc))


def test_not_json_and_deep_nesting_are_clear_errors():
    for text in ["", "{", "[1, 2]", "null", "\xff", "[" * 100000]:
        with pytest.raises(ModelFileError, match="invalid rebelboost JSON"):
            from_json(text)


# ---- fuzzing: random mutations of valid documents --------------------------------------------------------

_ODD = [None, True, False, 0, -1, 1, 2, 255, 2**31, 2**32, 2**63, -(2**63), 10**30, 0.5, -0.0, 1e308, math.inf,
        -math.inf, math.nan, "", "x", [], [0], [1.5], {}, {"a": 1}]


def _slots(node, out):
    """Every (container, key) in the document, so any value can be replaced."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        out.append((node, key))
        _slots(value, out)
    return out


def _mutate(doc, rng):
    slots = _slots(doc, [])
    container, key = slots[rng.randint(len(slots))]
    op = rng.randint(6)
    if op == 0:
        container[key] = copy.deepcopy(_ODD[rng.randint(len(_ODD))])
    elif op == 1 and isinstance(container, dict):
        del container[key]
    elif op == 2 and isinstance(container[key], list) and container[key]:
        del container[key][rng.randint(len(container[key]))]  # one entry fewer
    elif op == 3 and isinstance(container[key], list) and container[key]:
        container[key].append(copy.deepcopy(container[key][-1]))  # one entry more
    elif op == 4 and isinstance(container[key], int) and not isinstance(container[key], bool):
        container[key] += int(rng.choice([-1, 1, -(2**31), 2**32]))  # off by one, or far out of range
    else:
        trees = doc.get("trees") if isinstance(doc, dict) else None
        if isinstance(trees, list) and trees and isinstance(trees[0], dict) and isinstance(trees[0].get("left"), list):
            left = trees[0]["left"]  # children pointing back up or sideways: cycles and shared nodes
            if left:
                left[rng.randint(len(left))] = int(rng.randint(len(left)))


@pytest.mark.slow
def test_fuzzed_documents_load_or_fail_clearly(models):
    """Mutated documents either load into a working estimator (finite predictions and contributions) or
    raise ModelFileError; anything else (another exception, a crash, a non-finite score) fails the test."""
    rng = np.random.RandomState(2026)
    sources = [(json.loads(to_json(clf)), X[:20]) for clf, X in models]
    counts = {"inputs": 0, "loaded": 0, "refused": 0}
    for i in range(1500):
        source, X = sources[i % len(sources)]
        doc = copy.deepcopy(source)
        for _ in range(1 + rng.randint(3)):
            _mutate(doc, rng)
        text = json.dumps(doc)
        if i % 10 == 9:  # byte-level damage too: a cut or a changed character
            at = rng.randint(len(text))
            text = text[:at] if rng.rand() < 0.5 else text[:at] + chr(rng.randint(32, 127)) + text[at + 1:]
        counts["inputs"] += 1
        try:
            clf = from_json(text)
        except ModelFileError:
            counts["refused"] += 1
            continue
        counts["loaded"] += 1
        Xc = X if getattr(clf, "feature_names_in_", None) is None else pd.DataFrame(np.asarray(X), columns=clf.feature_names_in_)
        assert np.isfinite(clf.decision_function(Xc)).all()
        assert np.isfinite(clf.decision_function(Xc, pred_contrib=True)).all()
    print(f"fuzzed JSON documents: {counts}")
    assert counts["inputs"] == 1500 and counts["loaded"] > 0 and counts["refused"] > 0
