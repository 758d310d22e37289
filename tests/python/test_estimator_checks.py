"""scikit-learn's own estimator checks for every rebelboost estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier


@parametrize_with_checks(
    [
        AdaBoostClassifier(n_estimators=20),
        AdaBoostClassifier(n_estimators=10, max_depth=3),
        REBELClassifier(n_estimators=20),
        REBELClassifier(n_estimators=10, max_depth=1, cost_matrix=None),
        VEBBoostClassifier(n_estimators=20),
        VEBBoostClassifier(n_estimators=10, max_depth=2, lam=0.0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
