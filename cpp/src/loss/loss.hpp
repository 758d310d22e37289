// The one interface every loss implements (docs/design/contracts.md "Loss").
//
// A loss owns the per-sample scores H_n and weights. Per iteration the booster asks it for split values
// (through tree::SplitObjective), then for the closed-form step of the grown tree, then applies the step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "rebelboost/error.hpp"
#include "rebelboost/train.hpp"
#include "tree/grower.hpp"

namespace rebelboost::loss {

class Loss : public tree::SplitObjective {
 public:
  // Number of scores per sample (K).
  virtual std::size_t n_outputs() const = 0;

  // a_0: the step of the homogeneous learner f = +1 from zero scores; scores and weights start there.
  virtual std::vector<double> init_bias() = 0;

  // Moves every sample from H = 0 to H = bias (call once, on a fresh loss): the state init_bias() leaves,
  // for a bias found elsewhere (a model's a_0, watched on validation data).
  virtual void start_at(const std::vector<double>& bias) = 0;

  struct Step {
    std::vector<double> step;      // closed-form a* (K entries), with the documented smoothing
    bool has_edge = false;         // a* != 0 strictly lowers the loss
    double weighted_error = 0;     // binary losses: weighted fraction f gets wrong; 0 for others
    bool perfect_fit = false;      // f leaves no loss to remove (binary: zero weighted error)
    std::vector<double> sum_pos;   // s+ (Eq. 4.8), K entries: what update() needs besides the step
    std::vector<double> sum_neg;   // s-
    // The step minimises the loss along the learner, so the loss cannot rise with learning_rate < 2; false
    // for a similarity's step taken on sign(f) (StepRule::kSign), which carries no such promise.
    bool minimises = true;
  };

  // Closed-form step for tree outputs f (f[n] in {+1,-1}), in one pass over the samples.
  virtual Step step(const std::int8_t* f) const = 0;

  // The same step for a tree just grown on this loss's values: a loss may take its sums from what the
  // grower already totalled (GrowResult::value_mass) instead of a pass over the samples (and, in a
  // distributed fit, a reduction). The result equals step(grown.outputs), bit for bit.
  virtual Step tree_step(const tree::GrowResult& grown) const { return step(grown.outputs.data()); }

  // H_n += f_n * a for every sample (a = the step after shrinkage); refreshes weights. `sums` is the
  // Step that step(f) returned for the same f.
  virtual void update(const std::int8_t* f, const std::vector<double>& a, const Step& sums) = 0;

  // What update(f, a, .) needs besides f and a (eval sets call it for every stored tree): step(f) by default;
  // losses whose update needs nothing more return an empty Step and save the step's work.
  virtual Step sums_for_update(const std::int8_t* f) const { return step(f); }

  // Current surrogate loss, normalised so that the all-zero scores have loss 1.
  virtual double value() const = 0;

  // Each sample's current share of the loss (binary: its weight; REBEL: sum_k w+_nk + w-_n), for weight
  // trimming.
  virtual void sample_mass(double* out) const = 0;

  // ---- real-valued learners, |f_n| <= 1 (Localized Similarities); REBEL only ----
  // s_nk (n x K row-major): +w+_nk for the terms the step multiplies by exp(+f_n a_k), -w-_nk for those
  // multiplied by exp(-f_n a_k), so the loss along f is sum_nk |s_nk| exp(sign(s_nk) f_n a_k).
  virtual void signed_weights(double* /*out*/) const { real_valued_unsupported(); }

  // Per class, the exact minimiser of the loss along f (exp_step.hpp), smoothed as step() is; for
  // f in {+-1} it is step()'s closed form. has_edge: some class has sum_n s_nk f_n != 0 (beyond rounding),
  // so the loss falls strictly. sum_pos / sum_neg are left empty.
  virtual Step step_real(const double* /*f*/) const { real_valued_unsupported(); }

  // H_n += f_n a for every sample (a after shrinkage); refreshes the weights.
  virtual void update_real(const double* /*f*/, const std::vector<double>& /*a*/) { real_valued_unsupported(); }

  // ---- regression (gradient boosting; squared error only) ----
  // The next regression tree fits the residuals r_n = y_n - H_n (the negative gradient of the squared
  // error's half), weighted: w_n r_n.
  // max_n |w_n r_n|, kept up to date by start_at and update_real (no pass of its own).
  virtual double largest_weighted_residual() const { regression_unsupported(); }
  // out[n] = w_n r_n scale in fixed point (util::to_fixed_point), in one pass over the rows, which also
  // sums out[n] and |out[n]| (the regression tree's root needs them: docs/guide/regression.md).
  struct FixedPointSums {
    std::int64_t sum = 0, abs_sum = 0;
  };
  virtual FixedPointSums fixed_point_residuals(double /*scale*/, std::int64_t* /*out*/) const { regression_unsupported(); }
  // A learner's outputs by runs of rows, for a pass that needs them one run at a time.
  class RowOutputs {
   public:
    virtual ~RowOutputs() = default;
    // f_i for the rows i in [begin, end) at [i - begin] of the result: `scratch` (room for end - begin
    // values) filled, or the learner's own array.
    virtual const double* run(std::size_t begin, std::size_t end, double* scratch) const = 0;
  };
  // update_real(f, a) with f from `f`, then fixed_point_residuals(scale, out) of the updated scores: the same
  // bits as those two calls, in one pass over the rows (docs/guide/regression.md, the passes per tree).
  virtual FixedPointSums update_and_residuals(const RowOutputs& /*f*/, const std::vector<double>& /*a*/, double /*scale*/,
                                              std::int64_t* /*out*/) {
    regression_unsupported();
  }

 private:
  [[noreturn]] static void regression_unsupported() {
    throw InvalidArgument("regression trees need the squared-error loss");
  }
  [[noreturn]] static void real_valued_unsupported() {
    throw InvalidArgument("real-valued weak learners (similarities) need the REBEL loss with the exponential g");
  }
};

// Discrete AdaBoost (thesis §2.2): labels y[n] in {0, 1} mapped to -1/+1; weights sample_weight / sum
// (null = uniform); smoothing as a fraction of the total weight.
// reducer: null for a local fit; in a distributed fit every total is the total over all participants.
std::unique_ptr<Loss> make_adaboost(const std::int32_t* y, const double* sample_weight, std::size_t n,
                                    double smoothing, int n_threads, Reducer* reducer = nullptr);

// REBEL (thesis Ch. 4): K >= 2 classes, cost matrix C row-major K x K (zero diagonal, >= 0, no zero
// row; validated by the caller); rows must be sorted by class for the root search.
std::unique_ptr<Loss> make_rebel(const std::int32_t* y, const double* sample_weight, std::size_t n, std::size_t K,
                                 const std::vector<double>& cost, double smoothing, int n_threads,
                                 Reducer* reducer = nullptr);

// REBEL with the logistic g(x) = log2(1 + e^x) or the squared g(x) = (1 + x)^2 (thesis §4.3; coupled_sum.hpp):
// same arguments as make_rebel.
std::unique_ptr<Loss> make_logistic(const std::int32_t* y, const double* sample_weight, std::size_t n, std::size_t K,
                                    const std::vector<double>& cost, double smoothing, int n_threads,
                                    Reducer* reducer = nullptr);
std::unique_ptr<Loss> make_squared(const std::int32_t* y, const double* sample_weight, std::size_t n, std::size_t K,
                                   const std::vector<double>& cost, double smoothing, int n_threads,
                                   Reducer* reducer = nullptr);
// REBEL with the surrogate g: make_rebel, make_logistic or make_squared.
std::unique_ptr<Loss> make_rebel_g(RebelG g, const std::int32_t* y, const double* sample_weight, std::size_t n,
                                   std::size_t K, const std::vector<double>& cost, double smoothing, int n_threads,
                                   Reducer* reducer = nullptr);

// Squared error for regression (docs/guide/regression.md): targets y (finite), weights sample_weight (null =
// 1). value() is the weighted mean squared error sum w (y - H)^2 / sum w; the bias is the weighted mean of y;
// split_values, step and update (the +-1 learners' interface) throw: regression trees use residuals() and
// update_real().
std::unique_ptr<Loss> make_squared_error(const double* y, const double* sample_weight, std::size_t n, int n_threads);

// VEB-Boost (docs/methods/veb.md) with variance weight lam in [0, 1]; binary labels as for AdaBoost.
std::unique_ptr<Loss> make_veb(const std::int32_t* y, const double* sample_weight, std::size_t n, double smoothing,
                               int n_threads, double lam, Reducer* reducer = nullptr);

}  // namespace rebelboost::loss
