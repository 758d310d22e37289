// Model invariants (checked on load) and derived quantities.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "model/similarity_function.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/model.hpp"
#include "util/format.hpp"

namespace rebelboost {

const char* loss_name(LossKind loss) {
  switch (loss) {
    case LossKind::kAdaBoost: return "AdaBoost";
    case LossKind::kVebBoost: return "VEB-Boost";
    case LossKind::kRebel: return "REBEL";
    case LossKind::kSquaredError: return "squared error";
  }
  return "unknown";
}

const char* rebel_g_name(RebelG g) {
  switch (g) {
    case RebelG::kExponential: return "exponential";
    case RebelG::kLogistic: return "logistic";
    case RebelG::kSquared: return "squared";
  }
  return "unknown";
}

const char* learner_name(LearnerKind learner) {
  switch (learner) {
    case LearnerKind::kTree: return "tree";
    case LearnerKind::kSimilarity: return "similarity";
    case LearnerKind::kHybrid: return "hybrid";
  }
  return "unknown";
}

double Tree::max_abs_output() const {
  if (leaf_value.empty()) return 1.0;
  double m = 0.0;
  for (double v : leaf_value) m = std::max(m, std::fabs(v));
  return m;
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

// Every node but the root has exactly one parent: the nodes form a tree, not a graph whose shared or
// unreachable nodes would make Tree::depth() and the flattened copies wrong (children indices are already
// checked to be larger than their parent's, so there are no cycles).
template <typename Where>
void check_single_parents(const Tree& tree, const Where& where) {
  std::array<std::uint16_t, kMaxTreeNodes> parents{};
  for (const Node& node : tree.nodes)
    if (node.feature >= 0) {
      ++parents[node.left];
      ++parents[node.right];
    }
  for (std::size_t i = 1; i < tree.nodes.size(); ++i)
    if (parents[i] != 1)
      invalid(where() + "node " + std::to_string(i) + (parents[i] == 0 ? " is unreachable" : " has several parents") +
              " (the nodes must form a tree)");
}

// Covers (Tree::cover): none, or one per node, finite, >= 0, a child's at most its parent's, so every
// ratio TreeSHAP forms is a probability in [0, 1].
template <typename Where>
void check_covers(const Tree& tree, const Where& where) {
  if (tree.cover.empty()) return;
  if (tree.cover.size() != tree.nodes.size())
    invalid(where() + std::to_string(tree.cover.size()) + " covers for " + std::to_string(tree.nodes.size()) + " nodes");
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const double c = tree.cover[i];
    if (!(c >= 0.0) || !std::isfinite(c)) invalid(where() + "cover of node " + std::to_string(i) + " is not finite and >= 0");
    const Node& node = tree.nodes[i];
    if (node.feature >= 0 && (tree.cover[node.left] > c || tree.cover[node.right] > c))
      invalid(where() + "a child of node " + std::to_string(i) + " has a larger cover than the node");
  }
}

// Real leaves: on every tree of a regression model (one finite value per node, 0 at splits), on no other.
template <typename Where>
void check_leaf_values(const Model& model, const Tree& tree, const Where& where) {
  if (!model.is_regression()) {
    if (!tree.leaf_value.empty()) invalid(where() + "real leaf values in a classification model");
    return;
  }
  if (tree.leaf_value.size() != tree.nodes.size())
    invalid(where() + std::to_string(tree.leaf_value.size()) + " leaf values for " + std::to_string(tree.nodes.size()) +
            " nodes");
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const double v = tree.leaf_value[i];
    if (!std::isfinite(v)) invalid(where() + "non-finite leaf value at node " + std::to_string(i));
    if (tree.nodes[i].feature >= 0 && v != 0.0) invalid(where() + "split node " + std::to_string(i) + " has a leaf value");
  }
}

void validate_tree(const Model& model, const Tree& tree, std::size_t t) {
  const auto where = [t]() { return "tree " + std::to_string(t) + ": "; };
  if (tree.nodes.empty()) invalid(where() + "no nodes");
  if (tree.nodes.size() > kMaxTreeNodes)
    invalid(where() + std::to_string(tree.nodes.size()) + " nodes, more than the limit kMaxTreeNodes = " +
            std::to_string(kMaxTreeNodes));
  if (tree.step.size() != model.n_outputs) invalid(where() + "step has the wrong length");
  for (double v : tree.step)
    if (!std::isfinite(v)) invalid(where() + "non-finite step");
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const Node& node = tree.nodes[i];
    if (node.feature < 0) {
      if (node.feature != -1 || (node.value != 1 && node.value != -1)) invalid(where() + "bad leaf " + std::to_string(i));
      if (model.is_regression() && node.value != 1) invalid(where() + "regression leaf " + std::to_string(i) + " has value -1");
      continue;
    }
    if (static_cast<std::uint32_t>(node.feature) >= model.n_features)
      invalid(where() + "node " + std::to_string(i) + " uses feature " + std::to_string(node.feature) + " of " +
              std::to_string(model.n_features));
    if (std::isnan(node.threshold)) invalid(where() + "NaN threshold");
    if (node.nan_left > 1) invalid(where() + "bad NaN direction");
    if (!std::isfinite(node.gain)) invalid(where() + "non-finite gain");
    if (node.gain < 0.0) invalid(where() + "negative gain at node " + std::to_string(i));
    if (node.left <= i || node.right <= i || node.left >= tree.nodes.size() || node.right >= tree.nodes.size() ||
        node.left == node.right)
      invalid(where() + "node " + std::to_string(i) + " has out-of-range children");
  }
  check_single_parents(tree, where);
  check_covers(tree, where);
  check_leaf_values(model, tree, where);
}

void check_score_bound(const Model& model) {
  // |H_k(x)| <= |bias_k| + sum_t max|f_t| |step_tk| for every x and every number of learners used (|f_t| <= 1
  // but for regression trees' real leaves).
  for (std::size_t k = 0; k < model.n_outputs; ++k) {
    double bound = std::fabs(model.bias[k]);
    for (std::size_t t = 0; t < model.n_learners(); ++t)
      bound += std::fabs(model.step(t)[k]) * (model.learner == LearnerKind::kTree ? model.trees[t].max_abs_output() : 1.0);
    if (!(bound <= kMaxAbsScore))
      invalid("the scores of output " + std::to_string(k) + " could reach " + util::format_number(bound) +
              " (|bias| + the sum of |steps|), beyond the limit kMaxAbsScore = 1e300");
  }
}

void check_finite(const std::vector<double>& values, const std::string& where, const std::string& what) {
  for (double v : values)
    if (!std::isfinite(v)) invalid(where + "non-finite " + what);
}

void validate_similarities(const Model& m) {
  const std::size_t d = m.n_features;
  if (m.feature_mean.size() != d || m.feature_scale.size() != d)
    invalid("the standardisation has " + std::to_string(m.feature_mean.size()) + " means and " +
            std::to_string(m.feature_scale.size()) + " scales for " + std::to_string(d) + " features");
  check_finite(m.feature_mean, "", "feature mean");
  for (double v : m.feature_scale)
    if (!(v > 0.0) || !std::isfinite(v)) invalid("feature scale " + std::to_string(v) + " is not positive and finite");
  const std::size_t n_anchors = m.anchor_rows.size();
  if (m.anchors.size() / d != n_anchors || m.anchors.size() % d != 0)
    invalid("anchors hold " + std::to_string(m.anchors.size()) + " values for " + std::to_string(n_anchors) +
            " anchors of " + std::to_string(d) + " features");
  check_finite(m.anchors, "", "anchor coordinate");
  for (std::size_t a = 0; a < n_anchors; ++a)  // anchors are training rows: finite in the user's units too
    for (std::size_t c = 0; c < d; ++c)
      if (!std::isfinite(m.anchors[a * d + c] * m.feature_scale[c] + m.feature_mean[c]))
        invalid("anchor " + std::to_string(a) + " is not finite in the original units (feature " + std::to_string(c) + ")");
  if (n_anchors > 2 * m.similarities.size())
    invalid(std::to_string(n_anchors) + " anchors for " + std::to_string(m.similarities.size()) +
            " similarities (each uses at most 2)");
  using Kind = Similarity::Kind;
  for (std::size_t t = 0; t < m.similarities.size(); ++t) {
    const Similarity& s = m.similarities[t];
    const std::string where = "similarity " + std::to_string(t) + ": ";
    if (s.step.size() != m.n_outputs) invalid(where + "step has the wrong length");
    check_finite(s.step, where, "step");
    const bool one = s.kind == Kind::kOnePoint, two = s.kind == Kind::kTwoPoint;
    if (!one && !two && s.kind != Kind::kConstant)
      invalid(where + "unknown kind " + std::to_string(static_cast<std::uint32_t>(s.kind)));
    if ((one || two) ? s.anchor_i >= n_anchors : s.anchor_i != 0) invalid(where + "bad first anchor");
    if (two ? s.anchor_j >= n_anchors || s.anchor_j == s.anchor_i : s.anchor_j != 0) invalid(where + "bad second anchor");
    if (one ? !(s.tau > 0.0) || !std::isfinite(s.tau) : s.tau != 0.0) invalid(where + "bad tau");
    if (two) {
      const double q = 0.25 * similarity::squared_distance(&m.anchors[s.anchor_i * d], &m.anchors[s.anchor_j * d], d);
      if (!(q > 0.0) || !std::isfinite(q)) invalid(where + "its two anchors coincide or are too far apart");
    }
  }
}

void validate_trees(const Model& m) {
  for (std::size_t t = 0; t < m.trees.size(); ++t) {
    validate_tree(m, m.trees[t], t);
    if (m.trees[t].cover.empty() != m.trees[0].cover.empty())
      invalid("tree " + std::to_string(t) + (m.trees[t].cover.empty() ? " has no covers" : " has covers") +
              " unlike tree 0 (covers are on every tree or on none)");
  }
}

// A hybrid model's order names every tree and every similarity once, each kind in its stored order.
void validate_order(const Model& m) {
  std::size_t n_trees = 0, n_similarities = 0;
  for (std::size_t t = 0; t < m.order.size(); ++t) {
    const LearnerRef r = m.order[t];
    const bool tree = r.kind == LearnerKind::kTree;
    if (!tree && r.kind != LearnerKind::kSimilarity)
      invalid("hybrid learner " + std::to_string(t) + " has the unknown kind " +
              std::to_string(static_cast<std::uint32_t>(r.kind)));
    std::size_t& seen = tree ? n_trees : n_similarities;
    if (r.index != seen) invalid("hybrid learner " + std::to_string(t) + " is out of order");
    ++seen;
  }
  if (n_trees != m.trees.size() || n_similarities != m.similarities.size())
    invalid("the hybrid order names " + std::to_string(n_trees) + " trees and " + std::to_string(n_similarities) +
            " similarities; the model holds " + std::to_string(m.trees.size()) + " and " +
            std::to_string(m.similarities.size()));
}

void validate_cascade(const Model& model) {
  const Cascade& c = model.cascade;
  if (c.empty()) return;
  const std::size_t C = model.n_classes(), T = model.n_learners();
  if (c.every == 0) invalid("cascade checked every 0 learners");
  if (c.thresholds.size() % C != 0)
    invalid("cascade has " + std::to_string(c.thresholds.size()) + " thresholds, not a multiple of " + std::to_string(C) +
            " classes");
  const std::size_t n_checkpoints = c.thresholds.size() / C;
  if (n_checkpoints > (T == 0 ? 0 : (T - 1) / c.every))
    invalid("cascade has " + std::to_string(n_checkpoints) + " checkpoints every " + std::to_string(c.every) +
            " learners, past the model's " + std::to_string(T) + " learners");
  for (std::size_t i = 0; i < c.thresholds.size(); ++i) {
    const double v = c.thresholds[i];
    if (std::isnan(v) || v == -std::numeric_limits<double>::infinity() || (C > 2 && v < 0.0))
      invalid("cascade threshold " + std::to_string(i) + " is " + std::to_string(v) +
              (C > 2 ? " (a lead over the runner-up: >= 0 or +inf)" : " (finite or +inf)"));
    if (C == 2 && i % 2 == 1 && !(c.thresholds[i - 1] + v > 0.0))
      invalid("cascade checkpoint " + std::to_string(i / 2) + " would leave with both classes (theta_0 + theta_1 <= 0)");
  }
}

}  // namespace

void Model::validate() const {
  if (loss != LossKind::kAdaBoost && loss != LossKind::kVebBoost && loss != LossKind::kRebel && !is_regression())
    invalid("unknown loss kind " + std::to_string(static_cast<std::uint32_t>(loss)));
  if (is_regression() && (learner != LearnerKind::kTree || !cascade.empty()))
    invalid("a regression model holds trees only, and no cascade");
  if (g != RebelG::kExponential && g != RebelG::kLogistic && g != RebelG::kSquared)
    invalid("unknown REBEL surrogate g " + std::to_string(static_cast<std::uint32_t>(g)));
  if (g != RebelG::kExponential && loss != LossKind::kRebel)
    invalid(std::string(loss_name(loss)) + " model with the " + rebel_g_name(g) + " surrogate (REBEL only)");
  if (g != RebelG::kExponential && learner != LearnerKind::kTree)
    invalid(std::string(learner_name(learner)) + " model with the " + rebel_g_name(g) + " surrogate (exponential only)");
  if (n_features == 0) invalid("n_features is 0");
  if (n_features > kMaxFeatures)
    invalid(std::to_string(n_features) + " features, more than the limit kMaxFeatures = " + std::to_string(kMaxFeatures));
  const bool binary = loss != LossKind::kRebel;
  if (binary ? n_outputs != 1 : n_outputs < 2)
    invalid(std::string(loss_name(loss)) + " model with " + std::to_string(n_outputs) + " outputs");
  if (n_outputs > kMaxClasses)
    invalid(std::to_string(n_outputs) + " outputs, more than the limit kMaxClasses = " + std::to_string(kMaxClasses));
  const std::size_t n_all = trees.size() + similarities.size();
  if (n_all > kMaxTrees)
    invalid(std::to_string(n_all) + (learner == LearnerKind::kTree         ? " trees"
                                     : learner == LearnerKind::kSimilarity ? " similarities"
                                                                           : " learners") +
            ", more than the limit kMaxTrees = " + std::to_string(kMaxTrees));
  if (metadata.size() > kMaxMetadataBytes)
    invalid(std::to_string(metadata.size()) + " bytes of metadata, more than the limit kMaxMetadataBytes = " +
            std::to_string(kMaxMetadataBytes));
  if (bias.size() != n_outputs) invalid("bias has " + std::to_string(bias.size()) + " entries, expected " + std::to_string(n_outputs));
  for (double v : bias)
    if (!std::isfinite(v)) invalid("non-finite bias");
  const bool hybrid = learner == LearnerKind::kHybrid;
  if (learner == LearnerKind::kTree) {
    if (!feature_mean.empty() || !feature_scale.empty() || !anchors.empty() || !anchor_rows.empty() || !similarities.empty())
      invalid("a tree model holds similarity members");
  } else if (learner == LearnerKind::kSimilarity) {
    if (!trees.empty()) invalid("a similarity model holds trees");
  } else if (!hybrid) {
    invalid("unknown learner kind " + std::to_string(static_cast<std::uint32_t>(learner)));
  }
  if (!hybrid && !order.empty()) invalid(std::string("a ") + learner_name(learner) + " model holds a hybrid order");
  if (learner != LearnerKind::kSimilarity) validate_trees(*this);
  if (learner != LearnerKind::kTree) validate_similarities(*this);
  if (hybrid) validate_order(*this);
  check_score_bound(*this);
  validate_cascade(*this);
}

void Cascade::truncate(std::size_t n_learners, std::size_t n_classes) {
  if (empty()) return;
  const std::size_t keep = n_learners == 0 ? 0 : (n_learners - 1) / every;
  if (thresholds.size() > keep * n_classes) thresholds.resize(keep * n_classes);
  if (thresholds.empty()) every = 0;
}

void Model::truncate(std::size_t n) {
  cascade.truncate(std::min(n, n_learners()), n_classes());
  if (n >= n_learners()) return;
  std::size_t n_trees = n, n_similarities = n;
  if (learner == LearnerKind::kHybrid) {
    order.resize(n);
    n_trees = 0;
    for (const LearnerRef& r : order) n_trees += r.kind == LearnerKind::kTree ? 1 : 0;
    n_similarities = n - n_trees;
  }
  if (n_trees < trees.size()) trees.resize(n_trees);
  if (n_similarities >= similarities.size()) return;
  similarities.resize(n_similarities);
  std::size_t used = 0;
  for (const Similarity& s : similarities) {
    if (s.kind != Similarity::Kind::kConstant) used = std::max<std::size_t>(used, std::size_t{s.anchor_i} + 1);
    if (s.kind == Similarity::Kind::kTwoPoint) used = std::max<std::size_t>(used, std::size_t{s.anchor_j} + 1);
  }
  anchor_rows.resize(std::min(used, anchor_rows.size()));
  anchors.resize(anchor_rows.size() * n_features);
}

bool Model::has_covers() const {
  return trees.empty() || !trees[0].cover.empty();
}

std::vector<double> Model::feature_importances() const {
  // Gains and |step|_1 are first divided by their largest values, so every term is at most 1 and no sum
  // overflows whatever finite numbers a model holds (the normalised result is the same).
  double max_gain = 0.0, max_weight = 0.0;
  std::vector<double> weight(trees.size(), 0.0);
  for (std::size_t t = 0; t < trees.size(); ++t) {
    for (double a : trees[t].step) weight[t] += std::fabs(a);
    max_weight = std::max(max_weight, weight[t]);
    for (const Node& node : trees[t].nodes)
      if (node.feature >= 0) max_gain = std::max(max_gain, node.gain);
  }
  std::vector<double> importance(n_features, 0.0);
  if (!(max_gain > 0.0 && max_weight > 0.0)) return importance;
  for (std::size_t t = 0; t < trees.size(); ++t)
    for (const Node& node : trees[t].nodes)
      if (node.feature >= 0)
        importance[static_cast<std::size_t>(node.feature)] += (node.gain / max_gain) * (weight[t] / max_weight);
  double total = 0.0;
  for (double v : importance) total += v;
  if (total > 0.0)
    for (double& v : importance) v /= total;
  return importance;
}

}  // namespace rebelboost
