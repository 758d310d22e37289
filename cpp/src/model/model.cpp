// Model invariants (checked on load) and derived quantities.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "rebelboost/error.hpp"
#include "rebelboost/model.hpp"

namespace rebelboost {

const char* loss_name(LossKind loss) {
  switch (loss) {
    case LossKind::kAdaBoost: return "AdaBoost";
    case LossKind::kVebBoost: return "VEB-Boost";
    case LossKind::kRebel: return "REBEL";
  }
  return "unknown";
}

const char* learner_name(LearnerKind learner) {
  switch (learner) {
    case LearnerKind::kTree: return "tree";
    case LearnerKind::kSimilarity: return "similarity";
  }
  return "unknown";
}

int Tree::depth() const {
  // Children always have larger indices than their parent, so one forward pass finds every depth. No
  // allocation for trees within the loaders' limit (prediction asks for every tree's depth per call).
  std::array<int, kMaxTreeNodes> small;
  std::vector<int> large;
  int* d = small.data();
  if (nodes.size() > kMaxTreeNodes) {
    large.resize(nodes.size());
    d = large.data();
  }
  std::fill(d, d + nodes.size(), 0);
  int deepest = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].feature < 0) continue;
    d[nodes[i].left] = d[nodes[i].right] = d[i] + 1;
    deepest = std::max(deepest, d[i] + 1);
  }
  return deepest;
}

namespace {

[[noreturn]] void invalid(const std::string& what) { throw ModelFileError("invalid model: " + what); }

}  // namespace

void Model::validate() const {
  if (loss != LossKind::kAdaBoost && loss != LossKind::kVebBoost && loss != LossKind::kRebel)
    invalid("unknown loss kind " + std::to_string(static_cast<std::uint32_t>(loss)));
  if (n_features == 0) invalid("n_features is 0");
  const bool binary = loss != LossKind::kRebel;
  if (binary ? n_outputs != 1 : n_outputs < 2)
    invalid(std::string(loss_name(loss)) + " model with " + std::to_string(n_outputs) + " outputs");
  if (bias.size() != n_outputs) invalid("bias has " + std::to_string(bias.size()) + " entries, expected " + std::to_string(n_outputs));
  for (double v : bias)
    if (!std::isfinite(v)) invalid("non-finite bias");
  for (std::size_t t = 0; t < trees.size(); ++t) {
    const Tree& tree = trees[t];
    const std::string where = "tree " + std::to_string(t) + ": ";
    if (tree.nodes.empty()) invalid(where + "no nodes");
    if (tree.nodes.size() > kMaxTreeNodes) invalid(where + "too many nodes");
    if (tree.step.size() != n_outputs) invalid(where + "step has the wrong length");
    for (double v : tree.step)
      if (!std::isfinite(v)) invalid(where + "non-finite step");
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
      const Node& node = tree.nodes[i];
      if (node.feature < 0) {
        if (node.feature != -1 || (node.value != 1 && node.value != -1)) invalid(where + "bad leaf " + std::to_string(i));
        continue;
      }
      if (static_cast<std::uint32_t>(node.feature) >= n_features)
        invalid(where + "node " + std::to_string(i) + " uses feature " + std::to_string(node.feature) + " of " +
                std::to_string(n_features));
      if (std::isnan(node.threshold)) invalid(where + "NaN threshold");
      if (node.nan_left > 1) invalid(where + "bad NaN direction");
      if (!std::isfinite(node.gain)) invalid(where + "non-finite gain");
      if (node.left <= i || node.right <= i || node.left >= tree.nodes.size() || node.right >= tree.nodes.size() ||
          node.left == node.right)
        invalid(where + "node " + std::to_string(i) + " has out-of-range children");
    }
  }
}

std::vector<double> Model::feature_importances() const {
  std::vector<double> importance(n_features, 0.0);
  for (const Tree& tree : trees) {
    double weight = 0.0;
    for (double a : tree.step) weight += std::fabs(a);
    for (const Node& node : tree.nodes)
      if (node.feature >= 0) importance[static_cast<std::size_t>(node.feature)] += node.gain * weight;
  }
  double total = 0.0;
  for (double v : importance) total += v;
  if (total > 0.0)
    for (double& v : importance) v /= total;
  return importance;
}

}  // namespace rebelboost
