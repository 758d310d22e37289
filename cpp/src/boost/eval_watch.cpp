// Eval sets: one learner's outputs per row (through its family), scores += f * step, loss updated.
#include "boost/eval_watch.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "rebelboost/error.hpp"
#include "util/format.hpp"

namespace rebelboost::boost {

namespace {

void check_labels_and_weights(std::size_t set, std::size_t n_rows, const std::int32_t* y, const double* target,
                              const double* w, std::size_t n_classes, bool regression) {
  const std::string name = "eval set " + std::to_string(set) + ": ";
  if (n_rows == 0) throw InvalidArgument(name + "has 0 rows");
  if (regression ? target == nullptr : y == nullptr) throw InvalidArgument(name + (regression ? "has no targets" : "has no labels"));
  if (regression) check_targets(target, n_rows, name);
  double total = 0.0;
  for (std::size_t i = 0; i < n_rows; ++i) {
    if (!regression && (y[i] < 0 || static_cast<std::size_t>(y[i]) >= n_classes))
      throw InvalidArgument(name + "label index " + std::to_string(y[i]) + " at row " + std::to_string(i) +
                            " is outside [0, " + std::to_string(n_classes) + ")");
    if (w && (!std::isfinite(w[i]) || w[i] < 0.0))
      throw InvalidArgument(name + "sample_weight at row " + std::to_string(i) + " is negative or not finite");
    total += w ? w[i] : 1.0;
  }
  if (!(total > 0.0) || !std::isfinite(total))
    throw InvalidArgument(name + "sample weights must have a positive, finite sum");
}

}  // namespace

void check_targets(const double* target, std::size_t n_rows, const std::string& where) {
  for (std::size_t i = 0; i < n_rows; ++i)
    if (!(std::fabs(target[i]) <= kMaxAbsTarget))
      throw InvalidArgument(where + "target y at row " + std::to_string(i) + " is " + util::format_number(target[i]) +
                            (std::isfinite(target[i]) ? ", beyond the limit 1e150 (squared errors must stay finite)"
                                                      : "; targets must be finite"));
}

template <typename T>
EvalWatch<T>::EvalWatch(const std::vector<EvalSet<T>>& sets, const std::vector<double>& bias, std::size_t n_features,
                        std::size_t n_classes, bool regression, const LossMaker& make_loss,
                        const learner::Family<T>& family)
    : n_outputs_(bias.size()) {
  for (std::size_t e = 0; e < sets.size(); ++e) {
    const EvalSet<T>& set = sets[e];
    if (set.X.n_cols != n_features)
      throw InvalidArgument("eval set " + std::to_string(e) + " has " + std::to_string(set.X.n_cols) +
                            " features; the training data has " + std::to_string(n_features));
    check_labels_and_weights(e, set.X.n_rows, set.y, set.target, set.sample_weight, n_classes, regression);
    family.check_rows(set.X, "eval set " + std::to_string(e));
    Watched w{set.X, make_loss(set.y, set.target, set.sample_weight, set.X.n_rows), {}};
    w.loss->start_at(bias);
    w.scores.resize(set.X.n_rows * n_outputs_);
    for (std::size_t i = 0; i < set.X.n_rows; ++i) std::copy(bias.begin(), bias.end(), w.scores.begin() + static_cast<std::ptrdiff_t>(i * n_outputs_));
    sets_.push_back(std::move(w));
  }
}

template <typename T>
void EvalWatch<T>::add(learner::Family<T>& family, const Model& model, std::size_t t, IterationInfo& info) {
  info.eval_loss.clear();
  info.eval_scores.clear();
  for (Watched& w : sets_) {
    family.advance(model, t, w.X, *w.loss, w.scores.data());
    info.eval_loss.push_back(w.loss->value());
    info.eval_scores.push_back(w.scores.data());
  }
}

template class EvalWatch<float>;
template class EvalWatch<double>;

}  // namespace rebelboost::boost
