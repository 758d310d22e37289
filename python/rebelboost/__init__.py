"""rebelboost: boosted shallow trees (discrete AdaBoost, VEB-Boost, REBEL; a gradient-boosted regressor) on a
C++17 engine.

Estimators follow scikit-learn conventions; models are saved in one binary format that the C++ library
(``find_package(rebelboost)``) loads too.
"""

from pathlib import Path

from rebelboost._core import __version__
from rebelboost.adaboost import AdaBoostClassifier
from rebelboost.decision import predict_min_cost
from rebelboost.rebel import REBELClassifier
from rebelboost.regressor import BoostingRegressor
from rebelboost.veb import VEBBoostClassifier
from rebelboost.serialization import ModelFileError, load, to_json
from rebelboost.shap_export import to_shap
from rebelboost.json_model import from_json
from rebelboost import plot  # matplotlib is imported only when a plot is drawn

__all__ = ["AdaBoostClassifier", "REBELClassifier", "BoostingRegressor", "VEBBoostClassifier", "predict_min_cost", "ModelFileError", "load", "to_json", "from_json", "to_shap", "plot", "get_cmake_dir", "get_include", "__version__"]


def get_cmake_dir() -> str:
    """Folder holding rebelboost-config.cmake: pass it as ``-Drebelboost_DIR=...`` to CMake."""
    return str(Path(__file__).resolve().parent / "lib" / "cmake" / "rebelboost")


def get_include() -> str:
    """Folder holding the C++ headers (``rebelboost/rebelboost.hpp``)."""
    return str(Path(__file__).resolve().parent / "include")
