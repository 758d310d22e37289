// The trained ensemble: bias a_0 plus T weak learners, each with a step vector: trees with +-1 leaves, or
// Localized Similarities with real outputs in [-1, 1] (docs/methods/similarities.md), or, for regression, trees
// with real-valued leaves (docs/guide/regression.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rebelboost {

// Which loss trained the model; decides how scores H are turned into classes.
enum class LossKind : std::uint32_t {
  kAdaBoost = 1,  // binary, K = 1 score, class 1 iff H > 0
  kVebBoost = 2,  // binary, K = 1 score, class 1 iff H > 0
  kRebel = 3,     // K scores, class = argmax_k H_k (minimum-risk class)
  kSquaredError = 4,  // regression: K = 1 real-valued output H, trees with real leaves (Tree::leaf_value)
};

const char* loss_name(LossKind loss);

// REBEL's convex surrogate g of the coupled sum (thesis §4.3; docs/guide/rebel.md "The loss family"): the subcosts,
// the steps and the link from scores to probabilities depend on it. Binary losses use kExponential.
enum class RebelG : std::uint32_t {
  kExponential = 0,  // g(x) = e^x (the thesis's REBEL; closed-form steps)
  kLogistic = 1,     // g(x) = log2(1 + e^x) (with 2 classes: LogitBoost's loss)
  kSquared = 2,      // g(x) = (1 + x)^2 (with 2 classes: L2Boost's loss)
};

// "exponential", "logistic" or "squared" ("unknown" otherwise).
const char* rebel_g_name(RebelG g);

// The family of a model's weak learners (one per model; a hybrid model holds learners of both others).
enum class LearnerKind : std::uint32_t {
  kTree = 0,        // binary trees on raw feature values (Model::trees)
  kSimilarity = 1,  // Localized Similarities on standardised features (Model::similarities)
  kHybrid = 2,      // trees and similarities, in the order Model::order gives (docs/guide/similarity.md)
};

const char* learner_name(LearnerKind learner);

// Limits every model respects, trained or loaded: loaders reject files beyond them and training refuses
// data or parameters that would exceed them, so a model file bounds the memory and time it can make a
// reader spend (docs/limitations.md). Each error message names the limit it hit.
inline constexpr std::size_t kMaxTreeNodes = 511;            // per tree (a full depth-8 tree); so depth <= 255
inline constexpr std::size_t kMaxTrees = 1000000;             // trees per model (n_estimators)
inline constexpr std::uint32_t kMaxFeatures = 1u << 24;      // n_features (feature_importances: 128 MiB at most)
inline constexpr std::uint32_t kMaxClasses = 4096;           // classes, and so n_outputs K (REBEL keeps K x K costs)
inline constexpr std::size_t kMaxMetadataBytes = std::size_t{1} << 25;  // 32 MiB of opaque metadata
// Largest |bias_k| + sum_t |step_tk| for any class k: every score, and twice it and the difference of two,
// stays finite, so probabilities never turn into NaN.
inline constexpr double kMaxAbsScore = 1e300;
// Largest |y| of a regression target: squared errors (1e300) stay finite.
inline constexpr double kMaxAbsTarget = 1e150;

// One node of a tree. A split sends x to `left` when x[feature] <= threshold, NaN to the side nan_left
// names, everything else to `right`. A leaf has feature == -1 and value +1 or -1.
struct Node {
  std::int32_t feature = -1;
  std::uint8_t nan_left = 0;
  std::int8_t value = 0;
  std::uint32_t left = 0;   // index into Tree::nodes, always greater than this node's index
  std::uint32_t right = 0;  // idem
  double threshold = 0.0;   // raw feature value (upper edge of the last bin sent left)
  double gain = 0.0;        // decrease of the (normalised) training loss bought by this split
};

// A binary tree f(x) in {+1, -1}; the model adds f(x) * step to the K scores. In a regression model
// (LossKind::kSquaredError) f(x) is the real leaf_value of the leaf x reaches (its leaves' Node::value is +1).
struct Tree {
  std::vector<Node> nodes;  // nodes[0] is the root
  std::vector<double> step; // K entries
  // Regression models only (empty otherwise): per node, the leaf's output f (0 at split nodes), finite.
  std::vector<double> leaf_value;
  // Node covers (docs/guide/explanations.md): cover[i] is the training sample weight (the weights the fit
  // was given, not the boosting weights; 1 per row without them) that reaches node i, summed exactly and
  // rounded once. Empty for trees read from files older than format version 5. Finite, >= 0, and a child's
  // cover never exceeds its parent's (path-dependent TreeSHAP reads cover[child] / cover[node] as the
  // probability of the child).
  std::vector<double> cover;

  // Leaf value f(x) for a row whose feature j is at x[j * stride].
  template <typename T>
  int output(const T* x, std::ptrdiff_t stride) const {
    std::uint32_t i = 0;
    for (;;) {
      const Node& n = nodes[i];
      if (n.feature < 0) return n.value;
      const T v = x[static_cast<std::ptrdiff_t>(n.feature) * stride];
      const bool go_left = (v != v) ? (n.nan_left != 0) : (static_cast<double>(v) <= n.threshold);
      i = go_left ? n.left : n.right;
    }
  }

  // f(x) as a real number: leaf_value of the leaf x reaches, or its +-1 value.
  template <typename T>
  double output_real(const T* x, std::ptrdiff_t stride) const {
    return leaf_value.empty() ? static_cast<double>(output(x, stride)) : leaf_value[leaf_index(x, stride)];
  }

  // The node index of the leaf x reaches.
  template <typename T>
  std::uint32_t leaf_index(const T* x, std::ptrdiff_t stride) const {
    std::uint32_t i = 0;
    for (;;) {
      const Node& n = nodes[i];
      if (n.feature < 0) return i;
      const T v = x[static_cast<std::ptrdiff_t>(n.feature) * stride];
      const bool go_left = (v != v) ? (n.nan_left != 0) : (static_cast<double>(v) <= n.threshold);
      i = go_left ? n.left : n.right;
    }
  }

  // max |f(x)| over the leaves: 1 for +-1 trees.
  double max_abs_output() const;

  int depth() const;
};

// A Localized Similarity (thesis §5.4) on standardised features z = (x - feature_mean) / feature_scale,
// comparing z to one or two anchors (rows of Model::anchors, D_a = ||z - anchor_a||^2):
//   kConstant  f = 1 (the homogeneous learner)
//   kOnePoint  f = (tau - D_i) / (tau + D_i)                      in (-1, 1], +1 at anchor i
//   kTwoPoint  f = c q <d, z - m> / (4 q^2 + ||z - m||^4)         in [-1, 1], about +-0.99 at the anchors
//              d = (a_i - a_j) / 2, m = (a_i + a_j) / 2, q = ||d||^2, c = 16 / (3 (4/3)^(1/4)) (max |f| = 1)
struct Similarity {
  enum class Kind : std::uint32_t { kConstant = 0, kOnePoint = 1, kTwoPoint = 2 };
  Kind kind = Kind::kConstant;
  std::uint32_t anchor_i = 0;  // index into Model::anchor_rows (kOnePoint, kTwoPoint)
  std::uint32_t anchor_j = 0;  // idem (kTwoPoint); 0 when unused
  double tau = 0.0;            // kOnePoint: threshold on D_i (> 0); 0 otherwise
  std::vector<double> step;    // K entries
};

// A soft cascade (thesis §2.2; Bourdev and Brandt, CVPR 2005): checkpoint c is reached after (c + 1) * every
// learners, and there a row leaves with class k when its margin for k is at least thresholds[c * C + k]
// (C = n_classes(): 2 for binary models, else K). Margins: binary models use P for class 1 and -P for
// class 0 (P the row's partial score: class 1 when P >= theta_1, class 0 when P <= -theta_0, theta_0 +
// theta_1 > 0); with K >= 2 classes only the leader (first on ties) can leave, its margin the lead over the
// runner-up. +inf never leaves. Thresholds come from calibration on validation data (predict/cascade.hpp).
struct Cascade {
  std::uint32_t every = 0;
  std::vector<double> thresholds;  // empty: no cascade

  bool empty() const { return thresholds.empty(); }
  // Keeps the checkpoints before learner n_learners (after truncating a model to its first learners).
  void truncate(std::size_t n_learners, std::size_t n_classes);
};

// Learner t of a hybrid model: trees[index] or similarities[index], as `kind` says. The learners of each
// kind keep their order, so index counts the earlier learners of the same kind.
struct LearnerRef {
  LearnerKind kind = LearnerKind::kTree;  // kTree or kSimilarity
  std::uint32_t index = 0;
};

struct Model {
  LossKind loss = LossKind::kAdaBoost;
  RebelG g = RebelG::kExponential;  // REBEL's surrogate; kExponential for the binary losses
  LearnerKind learner = LearnerKind::kTree;
  std::uint32_t n_features = 0;
  std::uint32_t n_outputs = 1;  // K: length of bias and of every step vector
  std::vector<double> bias;     // a_0
  std::vector<Tree> trees;      // learner == kTree
  // learner == kSimilarity: the standardisation, the anchors (n_anchors x n_features, row-major, in
  // standardised coordinates), each anchor's row in the training X (for inspection), the learners.
  std::vector<double> feature_mean;
  std::vector<double> feature_scale;
  std::vector<double> anchors;
  std::vector<std::uint64_t> anchor_rows;
  std::vector<Similarity> similarities;
  // learner == kHybrid: learner t is order[t] (trees and similarities above, standardisation included);
  // empty otherwise.
  std::vector<LearnerRef> order;
  std::string metadata;         // opaque to the core (the Python layer stores classes, names, params as JSON)
  Cascade cascade;              // optional soft cascade, used when a prediction asks for it

  // Classes a prediction chooses from: 2 for binary models (K = 1), else K (regression models: 2, unused).
  std::size_t n_classes() const { return n_outputs == 1 ? 2 : n_outputs; }

  // A regressor (LossKind::kSquaredError): its score H is the prediction; it has no classes, cascade or exit.
  bool is_regression() const { return loss == LossKind::kSquaredError; }

  // Number of weak learners (trees or similarities), the T of H = a_0 + sum_{t < T} f_t a_t.
  std::size_t n_learners() const {
    return learner == LearnerKind::kHybrid ? order.size()
                                           : learner == LearnerKind::kTree ? trees.size() : similarities.size();
  }
  // Keeps the first n learners (all if fewer), and for similarities the anchors they use (anchors are
  // stored in the order of first use, so that is a prefix), and the cascade's checkpoints before n. For a
  // hybrid model the first n learners are a prefix of the trees and a prefix of the similarities.
  void truncate(std::size_t n);
  // Step vector a_t of learner t < n_learners().
  const std::vector<double>& step(std::size_t t) const {
    const LearnerRef r = ref(t);
    return r.kind == LearnerKind::kTree ? trees[r.index].step : similarities[r.index].step;
  }
  // Learner t < n_learners() as a kind and an index into trees or similarities (any model).
  LearnerRef ref(std::size_t t) const {
    if (learner == LearnerKind::kHybrid) return order[t];
    return {learner, static_cast<std::uint32_t>(t)};
  }

  // Throws ModelFileError unless every index, size and value is consistent (finite steps and thresholds,
  // child indices increasing and in range, features < n_features, leaves +-1; for similarities: positive
  // finite scales, finite anchors, anchor indices in range, distinct two-point anchors, tau > 0; covers on
  // every tree or on none, as Tree::cover describes; only the
  // members of the model's learner family non-empty; a cascade's checkpoints before the last learner with
  // thresholds as Cascade describes) and within the limits above (scores bounded by
  // kMaxAbsScore included). Loaders and save call it; O(nodes + learners x K + anchors x n_features).
  void validate() const;

  // Whether every tree holds its node covers (predict/tree_shap.hpp needs them); true for similarity models
  // and tree models without trees, which need none.
  bool has_covers() const;

  // Per-feature importance: sum over splits of gain * |step|_1 of the tree, normalised to sum 1
  // (all zeros when the model has no split, and for similarity models, which have no splits).
  std::vector<double> feature_importances() const;
};

}  // namespace rebelboost
