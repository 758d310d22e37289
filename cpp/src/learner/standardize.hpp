// Standardisation of raw features for the similarity family: z = (x - mean) / scale per feature.
#pragma once

#include <cstddef>
#include <vector>

#include "rebelboost/matrix_view.hpp"

namespace rebelboost::learner {

struct Standardization {
  std::vector<double> mean;   // weighted mean per feature
  std::vector<double> scale;  // weighted standard deviation per feature (or one common scale); 1 if none
};

// Mean and scale over X's rows weighted by sample_weight (null: all 1; frequencies, so weight 2 counts
// as the row twice), computed on values divided by the column's largest magnitude so that nothing
// overflows. X must be finite (the caller checks).
// global: one scale for every feature instead, the root mean square of the standard deviations (1 if all
// features are constant).
template <typename T>
Standardization fit_standardization(MatrixView<T> X, const double* sample_weight, bool global);

// The standardised rows, row-major n x d, training row r taken from X's row rows[r] (rows empty: the
// identity). Throws InvalidArgument if a value cannot be standardised (a feature spanning more than the
// double range).
template <typename T>
std::vector<double> standardize(MatrixView<T> X, const Standardization& s, const std::vector<std::size_t>& rows);

// z = (x - mean) / scale for one value (the same expression in training and prediction).
inline double standardized(double x, double mean, double scale) { return (x - mean) / scale; }

}  // namespace rebelboost::learner
