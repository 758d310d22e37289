"""
rebelboost C++ engine (internal: use the rebelboost package)
"""
from __future__ import annotations
import numpy
import numpy.typing
import typing
__all__: list[str] = ['MAX_ABS_SCORE', 'MAX_ABS_TARGET', 'MAX_CLASSES', 'MAX_FEATURES', 'MAX_METADATA_BYTES', 'MAX_TREES', 'MAX_TREE_NODES', 'Model', 'ModelFileError', 'PARAM_BOUNDS', 'bin_edges', 'bin_sample_rows', 'check_cost_matrix', 'train', 'train_param_defaults', 'train_regressor']
class ModelFileError(ValueError):
    pass
class Model:
    metadata: bytes
    @staticmethod
    def from_bytes(arg0: bytes) -> Model:
        ...
    @staticmethod
    def from_trees(loss: str, n_features: typing.SupportsInt | typing.SupportsIndex, bias: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], trees: list, metadata: bytes) -> Model:
        """
        A tree model from its arrays (rebelboost.from_json), validated as the file loader validates; add a soft cascade with with_cascade.
        """
    @staticmethod
    def load(arg0: str) -> Model:
        ...
    def calibrate_cascade(self, X: numpy.ndarray, y: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], kind: str, value: typing.SupportsFloat | typing.SupportsIndex, every: typing.Any = None, confidence: typing.SupportsFloat | typing.SupportsIndex = 0.95, n_threads: typing.SupportsInt | typing.SupportsIndex = 0) -> tuple:
        """
        (a copy with a soft cascade calibrated on (X, y class indices), its report as a dict) for a target: kind 'accuracy_loss', 'disagreement' or 'recall' with its value in [0, 1], certified on new rows with `confidence`; checkpoints every `every` learners (None: chosen among 4, 8 and 16; an int is checked by check_cascade_every).
        """
    def contributions(self, X: numpy.ndarray, n_threads: typing.SupportsInt | typing.SupportsIndex = 0, n_trees: typing.SupportsInt | typing.SupportsIndex = -1, check_inf: bool = False) -> numpy.typing.NDArray[numpy.float64]:
        """
        Per-feature contributions (n, K, n_features + 1) by path-dependent TreeSHAP, the expected value last; each row's K sums are decision_function's scores. Tree models with covers only.
        """
    def decision_function(self, X: numpy.ndarray, n_threads: typing.SupportsInt | typing.SupportsIndex = 0, n_trees: typing.SupportsInt | typing.SupportsIndex = -1, check_inf: bool = False) -> numpy.typing.NDArray[numpy.float64]:
        """
        Scores H(x) (n,) for binary models, (n, K) otherwise; X float32/float64, any strides.
        """
    def feature_importances(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def learner_kinds(self) -> numpy.typing.NDArray[numpy.int8]:
        """
        Each learner's kind in order, (n_learners,) int8: 0 tree, 1 similarity (hybrid models mix them).
        """
    def learner_outputs(self, X: numpy.ndarray, n_threads: typing.SupportsInt | typing.SupportsIndex = 0, first: typing.SupportsInt | typing.SupportsIndex = 0, n: typing.SupportsInt | typing.SupportsIndex = -1) -> numpy.ndarray:
        """
        f_t(x) for learners first, ... (n of them; -1: to the end) as an (n_rows, n_used) array: int8 +-1 for trees, float64 in [-1, 1] for similarities, float64 leaf values for regression trees.
        """
    def predict(self, X: numpy.ndarray, n_threads: typing.SupportsInt | typing.SupportsIndex = 0, n_trees: typing.SupportsInt | typing.SupportsIndex = -1, return_n_learners: bool = False, check_inf: bool = False, early_exit: bool = False, check_every: typing.SupportsInt | typing.SupportsIndex = 0, cascade: bool = False) -> typing.Any:
        """
        Class indices (n,) int32; with return_n_learners also the learners evaluated per row (uint32). early_exit: exact early exit (same classes), rows checked every check_every learners (0: default); cascade: the calibrated soft cascade.
        """
    def save(self, arg0: str) -> None:
        ...
    def similarities(self) -> dict:
        """
        A similarity model's learners, anchors and standardisation.
        """
    def steps(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Step vectors a_t of every learner, (n_learners, K).
        """
    def to_bytes(self) -> bytes:
        ...
    def tree_outputs(self, X: numpy.ndarray, n_threads: typing.SupportsInt | typing.SupportsIndex = 0, first_tree: typing.SupportsInt | typing.SupportsIndex = 0, n_trees: typing.SupportsInt | typing.SupportsIndex = -1) -> numpy.typing.NDArray[numpy.int8]:
        """
        f_t(x) in {+1,-1} for trees first_tree, ... (n_trees of them; -1: to the end) as an (n, n_used) int8 array.
        """
    def trees(self, first: typing.SupportsInt | typing.SupportsIndex = 0, count: typing.SupportsInt | typing.SupportsIndex = -1) -> list:
        """
        Trees first, ... (count of them; -1: to the end) as dicts of arrays.
        """
    def truncated(self, n_trees: typing.SupportsInt | typing.SupportsIndex) -> Model:
        """
        A copy keeping the first n_trees learners (trees or similarities).
        """
    def with_cascade(self, every: typing.SupportsInt | typing.SupportsIndex, thresholds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> Model:
        """
        A copy with these cascade thresholds (validated; an empty array removes the cascade).
        """
    @property
    def bias(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def cascade(self) -> typing.Any:
        """
        None, or (every, thresholds) with thresholds (n_checkpoints, n_classes): the soft cascade.
        """
    @property
    def has_covers(self) -> bool:
        """
        Whether the trees hold their node covers (files from format version 5 on).
        """
    @property
    def learner(self) -> str:
        """
        The weak-learner family: 'tree', 'similarity' or 'hybrid'.
        """
    @property
    def loss(self) -> str:
        ...
    @property
    def loss_key(self) -> str:
        """
        The loss as train() names it: 'adaboost', 'veb' or 'rebel'.
        """
    @property
    def n_features(self) -> int:
        ...
    @property
    def n_learners(self) -> int:
        ...
    @property
    def n_outputs(self) -> int:
        ...
    @property
    def n_trees(self) -> int:
        ...
    @property
    def rebel_loss(self) -> str:
        """
        REBEL's surrogate g: 'exponential', 'logistic' or 'squared' ('exponential' for the binary losses).
        """
def bin_edges(X: numpy.ndarray, n_bins: typing.SupportsInt | typing.SupportsIndex, sample_weight: typing.Any = None, n_threads: typing.SupportsInt | typing.SupportsIndex = 0) -> list:
    """
    Per feature, the bin edges a fit finds from exactly the rows of X (its bin sample).
    """
def bin_sample_rows(n_rows: typing.SupportsInt | typing.SupportsIndex, bin_subsample: typing.SupportsInt | typing.SupportsIndex = 200000, bin_seed: typing.SupportsInt | typing.SupportsIndex = -1) -> numpy.typing.NDArray[numpy.uint64]:
    """
    The rows (ascending) whose values a fit of n_rows rows uses to find bin edges (rows with zero weight are then dropped).
    """
def check_cost_matrix(cost_matrix: typing.Any, n_classes: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    Raise ValueError unless cost_matrix is a valid (n_classes, n_classes) REBEL cost matrix (train's own check).
    """
def train(X: numpy.ndarray, y: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], sample_weight: typing.Any, n_classes: typing.SupportsInt | typing.SupportsIndex, loss: str, n_estimators: typing.SupportsInt | typing.SupportsIndex = 200, max_depth: typing.SupportsInt | typing.SupportsIndex = 1, n_bins: typing.SupportsInt | typing.SupportsIndex = 256, learning_rate: typing.SupportsFloat | typing.SupportsIndex = 1.0, n_threads: typing.SupportsInt | typing.SupportsIndex = 0, smoothing: typing.SupportsFloat | typing.SupportsIndex = -1.0, bin_subsample: typing.SupportsInt | typing.SupportsIndex = 200000, bin_seed: typing.SupportsInt | typing.SupportsIndex = -1, callback: typing.Any = None, veb_lambda: typing.SupportsFloat | typing.SupportsIndex = 0.5, cost_matrix: typing.Any = None, quick: typing.SupportsInt | typing.SupportsIndex = 2, criterion: typing.SupportsInt | typing.SupportsIndex = 0, weight_trim: typing.SupportsFloat | typing.SupportsIndex = 1.0, subsample: typing.SupportsFloat | typing.SupportsIndex = 1.0, feature_fraction: typing.SupportsFloat | typing.SupportsIndex = 1.0, seed: typing.SupportsInt | typing.SupportsIndex = 0, init_model: typing.Any = None, eval_sets: list = [], learner: str = 'tree', step_rule: str = 'exact', tau_ratio: typing.SupportsFloat | typing.SupportsIndex = 0.5, max_candidates: typing.SupportsInt | typing.SupportsIndex = 256, scaling: str = 'feature', distance_cache_mb: typing.SupportsFloat | typing.SupportsIndex = 1024.0, reducer: typing.Any = None, bin_edges: typing.Any = [], global_rows: typing.Any = None, rebel_loss: str = 'exponential', tree_penalty: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> tuple:
    """
    Fit a boosted ensemble; returns (Model, history, stop_reason, stop_message, error, stage_seconds). X float32/float64, y int32 class indices; eval_sets: [(X, y, sample_weight or None)]; init_model: a Model to continue (warm start); learner: 'tree', 'similarity' or 'hybrid' (step_rule, tau_ratio, max_candidates, scaling ('feature' or 'global'), distance_cache_mb: TrainParams::similarity); rebel_loss: REBEL's surrogate g ('exponential', 'logistic' or 'squared'; TrainParams::rebel_g); tree_penalty: hybrids' handicap on the tree candidate (TrainParams::tree_penalty). error: the Python exception (KeyboardInterrupt, or raised by the callback) that stopped training, for the caller to raise after keeping the finished iterations, else None. stage_seconds: {'wall' | 'thread_cpu' | 'process_cpu': {stage: seconds}} of the whole fit (TrainResult::stage_seconds). reducer, bin_edges, global_rows: one participant of a distributed fit (rebelboost.dask): reducer(values, op) returns the element-wise 'sum' or 'max' of an int64 array over all participants, bin_edges the global edges per feature, global_rows the global index of each row of X.
    """
def train_param_defaults() -> dict:
    """
    TrainParams' defaults, keyed by train()'s keywords (docs/design/parameters.md).
    """
def train_regressor(X: numpy.ndarray, y: typing.Any, sample_weight: typing.Any, n_estimators: typing.SupportsInt | typing.SupportsIndex = 200, max_depth: typing.SupportsInt | typing.SupportsIndex = 1, n_bins: typing.SupportsInt | typing.SupportsIndex = 256, learning_rate: typing.SupportsFloat | typing.SupportsIndex = 1.0, n_threads: typing.SupportsInt | typing.SupportsIndex = 0, min_samples_leaf: typing.SupportsInt | typing.SupportsIndex = 20, subsample: typing.SupportsFloat | typing.SupportsIndex = 1.0, feature_fraction: typing.SupportsFloat | typing.SupportsIndex = 1.0, seed: typing.SupportsInt | typing.SupportsIndex = 0, bin_subsample: typing.SupportsInt | typing.SupportsIndex = 200000, bin_seed: typing.SupportsInt | typing.SupportsIndex = -1, callback: typing.Any = None, init_model: typing.Any = None, eval_sets: list = [], quick: typing.SupportsInt | typing.SupportsIndex = 2) -> tuple:
    """
    Fit a gradient-boosted regressor (squared error, regression trees); returns what train() returns. y: float64 targets; eval_sets: [(X, y, sample_weight or None)] with float64 targets.
    """
MAX_ABS_SCORE: float = 1e+300
MAX_ABS_TARGET: float = 1e+150
MAX_CLASSES: int = 4096
MAX_FEATURES: int = 16777216
MAX_METADATA_BYTES: int = 33554432
MAX_TREES: int = 1000000
MAX_TREE_NODES: int = 511
PARAM_BOUNDS: dict
__version__: str = '0.1.0'
