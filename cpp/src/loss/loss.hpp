// The one interface every loss implements (DESIGN "One framework for all three losses").
//
// A loss owns the per-sample scores H_n and weights. Per iteration the booster asks it for split values
// (through tree::SplitObjective), then for the closed-form step of the grown tree, then applies the step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "rebelboost/train.hpp"
#include "tree/grower.hpp"

namespace rebelboost::loss {

class Loss : public tree::SplitObjective {
 public:
  // Number of scores per sample (K).
  virtual std::size_t n_outputs() const = 0;

  // a_0: the step of the homogeneous learner f = +1 from zero scores; scores and weights start there.
  virtual std::vector<double> init_bias() = 0;

  // Closed-form step a* for tree outputs f (f[n] in {+1,-1}), with the documented smoothing.
  virtual std::vector<double> step(const std::int8_t* f) const = 0;

  // True if the tree f has an edge: a step a* != 0 lowers the loss.
  virtual bool has_edge(const std::int8_t* f) const = 0;

  // H_n += f_n * step for every sample; refreshes weights.
  virtual void update(const std::int8_t* f, const std::vector<double>& step) = 0;

  // Current surrogate loss, normalised so that the all-zero scores have loss 1.
  virtual double value() const = 0;

  // Weighted fraction of samples the tree f gets wrong (binary losses; 0 for others).
  virtual double weighted_error(const std::int8_t* f) const = 0;
};

// Discrete AdaBoost (thesis §2.2): labels y[n] in {0, 1} mapped to -1/+1; weights sample_weight / sum
// (null = uniform); smoothing as a fraction of the total weight.
std::unique_ptr<Loss> make_adaboost(const std::int32_t* y, const double* sample_weight, std::size_t n,
                                    double smoothing, int n_threads);

}  // namespace rebelboost::loss
