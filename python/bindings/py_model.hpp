// The model as Python holds it: the core Model plus its Predictor, compiled on first use and shared by calls.
#pragma once

#include <memory>
#include <utility>

#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"

namespace rebelboost::bindings {

// Python's rebelboost._core.Model. The trees never change after construction (only the opaque metadata
// can be replaced), so the compiled Predictor stays valid; calls hold a shared_ptr to it while the GIL is
// released.
class PyModel {
 public:
  explicit PyModel(Model model) : model_(std::move(model)) {}

  const Model& model() const { return model_; }
  void set_metadata(std::string metadata) { model_.metadata = std::move(metadata); }

  // Built under the GIL (callers hold it), so two threads never compile at once.
  std::shared_ptr<const Predictor> predictor() const {
    if (!predictor_) predictor_ = std::make_shared<const Predictor>(model_);
    return predictor_;
  }

 private:
  Model model_;
  mutable std::shared_ptr<const Predictor> predictor_;
};

}  // namespace rebelboost::bindings
