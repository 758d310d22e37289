// Tests of Model (cpp/include/rebelboost/model.hpp): validate() accepts what the header promises and rejects
// each broken field with an error naming it; truncate keeps a prefix (trees, anchors, cascade checkpoints);
// has_covers, n_classes and feature_importances against slow references written here; and the model file
// round trip (serialize / deserialize, save_model / load_model) keeps every field (docs/guide/model_files.md).
#include "rebelboost/model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "predict/random_models.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"

namespace rebelboost {
namespace {

// A valid tree model: uneven trees with gains >= 0, covers that shrink down each tree, a metadata string.
Model tree_model(std::uint64_t seed, std::size_t n_outputs, bool covers = true, int n_trees = 12) {
  Model m = testing::uneven_model(seed, 5, n_outputs, n_trees);
  std::mt19937_64 rng(seed + 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (Tree& tree : m.trees) {
    for (Node& node : tree.nodes)
      if (node.feature >= 0) node.gain = unit(rng);
    if (!covers) continue;
    tree.cover.assign(tree.nodes.size(), 0.0);
    tree.cover[0] = 100.0;
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {  // parents come before their children
      const Node& node = tree.nodes[i];
      if (node.feature < 0) continue;
      const double share = unit(rng);
      tree.cover[node.left] = tree.cover[i] * share;
      tree.cover[node.right] = tree.cover[i] * (1.0 - share);
    }
  }
  m.metadata = "{\"seed\": " + std::to_string(seed) + "}";
  return m;
}

// A valid REBEL model of Localized Similarities on 3 features: anchors in order of first use.
Model similarity_model() {
  Model m;
  m.loss = LossKind::kRebel;
  m.learner = LearnerKind::kSimilarity;
  m.n_features = 3;
  m.n_outputs = 3;
  m.bias = {0.1, -0.2, 0.1};
  m.feature_mean = {0.5, -1.0, 2.0};
  m.feature_scale = {1.0, 2.0, 0.5};
  m.anchors = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};  // 4 anchors
  m.anchor_rows = {7, 3, 11, 0};
  using Kind = Similarity::Kind;
  m.similarities = {{Kind::kOnePoint, 0, 0, 0.5, {0.3, -0.1, -0.2}},
                    {Kind::kTwoPoint, 1, 2, 0.0, {-0.2, 0.4, -0.2}},
                    {Kind::kConstant, 0, 0, 0.0, {0.05, 0.0, -0.05}},
                    {Kind::kOnePoint, 3, 0, 1.5, {0.1, 0.1, -0.2}}};
  return m;
}

void expect_invalid(const Model& m, const std::string& words) {
  try {
    m.validate();
    ADD_FAILURE() << "validate() accepted a model that should fail with '" << words << "'";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(ModelValidate, AcceptsValidModels) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    EXPECT_NO_THROW(tree_model(seed, 1).validate());
    EXPECT_NO_THROW(tree_model(seed, 1, false).validate());
    Model rebel = tree_model(seed, 1 + seed % 5 + 1);
    rebel.g = static_cast<RebelG>(seed % 3);
    EXPECT_NO_THROW(rebel.validate());
  }
  EXPECT_NO_THROW(similarity_model().validate());
  Model cascade = tree_model(3, 1);  // 12 learners, checkpoints after 3, 6, 9
  cascade.cascade = {3, {0.5, 0.5, 1.0, -0.5, std::numeric_limits<double>::infinity(), 0.0}};
  EXPECT_NO_THROW(cascade.validate());
}

TEST(ModelValidate, RejectsEachBrokenField) {
  // Each case breaks one thing of a valid model; the error must name it.
  const std::vector<std::pair<std::string, std::function<void(Model&)>>> cases = {
      {"n_features is 0", [](Model& m) { m.n_features = 0; }},
      {"outputs", [](Model& m) { m.n_outputs = 2; }},
      {"bias has", [](Model& m) { m.bias.push_back(0.0); }},
      {"non-finite bias", [](Model& m) { m.bias[0] = std::nan(""); }},
      {"step has the wrong length", [](Model& m) { m.trees[2].step.push_back(1.0); }},
      {"non-finite step", [](Model& m) { m.trees[1].step[0] = std::numeric_limits<double>::infinity(); }},
      {"bad leaf", [](Model& m) { m.trees[0].nodes.back().value = 0; }},
      {"uses feature 5 of 5", [](Model& m) { m.trees[5].nodes[0].feature = 5; }},
      {"NaN threshold", [](Model& m) { m.trees[5].nodes[0].threshold = std::nan(""); }},
      {"negative gain", [](Model& m) { m.trees[5].nodes[0].gain = -1.0; }},
      {"out-of-range children", [](Model& m) { m.trees[5].nodes[0].left = 0; }},
      {"several parents", [](Model& m) {  // node 2 is a child of the root and of node 1
         Tree& t = m.trees[5];
         t.nodes = {Node{0, 0, 0, 1, 2, 0.0, 1.0}, Node{1, 0, 0, 2, 3, 0.0, 1.0}, Node{-1, 0, 1}, Node{-1, 0, -1}};
         t.cover = {4.0, 2.0, 2.0, 1.0};
       }},
      {"covers for", [](Model& m) { m.trees[4].cover.pop_back(); }},
      {"larger cover", [](Model& m) { Tree& t = m.trees[5]; t.cover[t.nodes[0].left] = t.cover[0] * 2; }},
      {"has no covers", [](Model& m) { m.trees[7].cover.clear(); }},
      {"more than the limit kMaxTreeNodes", [](Model& m) { m.trees[0].nodes.resize(kMaxTreeNodes + 1); }},
      {"beyond the limit kMaxAbsScore", [](Model& m) { m.trees[0].step[0] = 9e299; m.trees[1].step[0] = -9e299; }},
      {"holds similarity members", [](Model& m) { m.feature_scale = {1.0}; }},
      {"checked every 0", [](Model& m) { m.cascade = {0, {1.0, 1.0}}; }},
      {"past the model's", [](Model& m) { m.cascade = {6, {1.0, 1.0, 1.0, 1.0}}; }},
      {"both classes", [](Model& m) { m.cascade = {3, {-1.0, 0.5}}; }},
      {"more than the limit kMaxMetadataBytes", [](Model& m) { m.metadata.assign(kMaxMetadataBytes + 1, 'x'); }},
  };
  for (const auto& [words, broken] : cases) {
    SCOPED_TRACE(words);
    Model m = tree_model(11, 1);  // 12 trees, depth 0 to 9 (tree 5 splits at its root)
    ASSERT_GE(m.trees[5].nodes.size(), 3u);
    broken(m);
    expect_invalid(m, words);
  }
}

TEST(ModelValidate, RejectsBrokenSimilarities) {
  const std::vector<std::pair<std::string, std::function<void(Model&)>>> cases = {
      {"means and", [](Model& m) { m.feature_mean.pop_back(); }},
      {"feature scale", [](Model& m) { m.feature_scale[1] = 0.0; }},
      {"anchors hold", [](Model& m) { m.anchors.pop_back(); }},
      {"bad first anchor", [](Model& m) { m.similarities[0].anchor_i = 4; }},
      {"bad second anchor", [](Model& m) { m.similarities[1].anchor_j = 1; }},
      {"bad tau", [](Model& m) { m.similarities[0].tau = 0.0; }},
      {"unknown kind", [](Model& m) { m.similarities[2].kind = static_cast<Similarity::Kind>(7); }},
      {"holds trees", [](Model& m) { m.trees.push_back(tree_model(0, 3).trees[0]); }},
      {"REBEL only", [](Model& m) { m.loss = LossKind::kAdaBoost; m.g = RebelG::kLogistic; }},
  };
  for (const auto& [words, broken] : cases) {
    SCOPED_TRACE(words);
    Model m = similarity_model();
    broken(m);
    expect_invalid(m, words);
  }
}

// Scores of a tree model's first n learners, walked here node by node.
std::vector<double> scores_of_prefix(const Model& m, const std::vector<double>& x, std::size_t n) {
  std::vector<double> h = m.bias;
  for (std::size_t t = 0; t < n; ++t) {
    const Tree& tree = m.trees[t];
    std::uint32_t i = 0;
    while (tree.nodes[i].feature >= 0) {
      const Node& node = tree.nodes[i];
      const double v = x[static_cast<std::size_t>(node.feature)];
      i = (std::isnan(v) ? node.nan_left != 0 : v <= node.threshold) ? node.left : node.right;
    }
    for (std::size_t k = 0; k < h.size(); ++k) h[k] += tree.nodes[i].value * tree.step[k];
  }
  return h;
}

TEST(ModelTruncate, KeepsTheFirstTreesAndTheirCheckpoints) {
  const Model full = [] {
    Model m = tree_model(5, 3, true, 7);
    m.cascade = {2, std::vector<double>(3 * 3, 0.5)};  // checkpoints after 2, 4, 6 learners
    return m;
  }();
  ASSERT_NO_THROW(full.validate());
  const std::vector<double> x = {0.5, -1.0, std::nan(""), 2.0, 0.0};
  for (std::size_t n = 0; n <= 9; ++n) {
    Model m = full;
    m.truncate(n);
    const std::size_t kept = std::min<std::size_t>(n, 7);
    ASSERT_EQ(m.n_learners(), kept);
    EXPECT_NO_THROW(m.validate());
    EXPECT_EQ(m.cascade.thresholds.size(), 3 * (kept == 0 ? 0 : (kept - 1) / 2)) << n;
    EXPECT_EQ(m.cascade.every, m.cascade.thresholds.empty() ? 0u : 2u);
    for (std::size_t t = 0; t < kept; ++t) EXPECT_EQ(m.trees[t].nodes.size(), full.trees[t].nodes.size());
    EXPECT_EQ(scores_of_prefix(m, x, kept), scores_of_prefix(full, x, kept));
  }
}

TEST(ModelTruncate, KeepsTheAnchorsTheFirstSimilaritiesUse) {
  const Model full = similarity_model();
  const std::vector<std::size_t> anchors_kept = {0, 1, 3, 3, 4, 4};  // after 0, 1, ..., 5 learners
  for (std::size_t n = 0; n < anchors_kept.size(); ++n) {
    Model m = full;
    m.truncate(n);
    EXPECT_EQ(m.n_learners(), std::min<std::size_t>(n, 4));
    EXPECT_EQ(m.anchor_rows.size(), anchors_kept[n]) << n;
    EXPECT_EQ(m.anchors.size(), anchors_kept[n] * 3);
    EXPECT_TRUE(std::equal(m.anchor_rows.begin(), m.anchor_rows.end(), full.anchor_rows.begin()));
    EXPECT_NO_THROW(m.validate()) << n;
  }
}

TEST(ModelQueries, CoversAndClasses) {
  EXPECT_TRUE(tree_model(1, 1).has_covers());
  EXPECT_FALSE(tree_model(1, 1, false).has_covers());
  Model empty = tree_model(1, 1, false);
  empty.trees.clear();
  EXPECT_TRUE(empty.has_covers());  // no tree needs covers
  EXPECT_TRUE(similarity_model().has_covers());
  EXPECT_EQ(tree_model(1, 1).n_classes(), 2u);
  for (std::size_t K = 2; K < 6; ++K) {
    Model m = tree_model(K, K);
    EXPECT_EQ(m.n_classes(), K);
    EXPECT_EQ(m.n_outputs, K);
  }
  EXPECT_EQ(similarity_model().n_classes(), 3u);
}

// sum over splits of gain * |step|_1, normalised, summed directly (without the header's rescaling).
std::vector<double> importances_reference(const Model& m) {
  std::vector<double> out(m.n_features, 0.0);
  double total = 0.0;
  for (const Tree& tree : m.trees) {
    double l1 = 0.0;
    for (double a : tree.step) l1 += std::fabs(a);
    for (const Node& node : tree.nodes)
      if (node.feature >= 0) {
        out[static_cast<std::size_t>(node.feature)] += node.gain * l1;
        total += node.gain * l1;
      }
  }
  for (double& v : out) v = total > 0.0 ? v / total : 0.0;
  return out;
}

TEST(ModelFeatureImportances, MatchTheDirectSumAndSurviveHugeValues) {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    Model m = tree_model(seed, 1 + seed % 3);
    const std::vector<double> got = m.feature_importances(), want = importances_reference(m);
    double sum = 0.0;
    for (std::size_t j = 0; j < want.size(); ++j) {
      EXPECT_NEAR(got[j], want[j], 1e-12);
      sum += got[j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    // Gains near the largest double: a direct sum would overflow; the importances are unchanged.
    for (Tree& tree : m.trees)
      for (Node& node : tree.nodes) node.gain *= 1e300;
    const std::vector<double> huge = m.feature_importances();
    for (std::size_t j = 0; j < want.size(); ++j) EXPECT_NEAR(huge[j], want[j], 1e-12);
  }
  Model no_split = tree_model(0, 1);
  for (Tree& tree : no_split.trees)
    for (Node& node : tree.nodes) node.gain = 0.0;
  EXPECT_EQ(no_split.feature_importances(), std::vector<double>(5, 0.0));
  EXPECT_EQ(similarity_model().feature_importances(), std::vector<double>(3, 0.0));
}

void expect_same_model(const Model& a, const Model& b) {
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.g, b.g);
  EXPECT_EQ(a.learner, b.learner);
  EXPECT_EQ(a.n_features, b.n_features);
  EXPECT_EQ(a.n_outputs, b.n_outputs);
  EXPECT_EQ(a.bias, b.bias);
  EXPECT_EQ(a.metadata, b.metadata);
  EXPECT_EQ(a.cascade.every, b.cascade.every);
  EXPECT_EQ(a.cascade.thresholds, b.cascade.thresholds);
  ASSERT_EQ(a.trees.size(), b.trees.size());
  for (std::size_t t = 0; t < a.trees.size(); ++t) {
    const Tree &x = a.trees[t], &y = b.trees[t];
    EXPECT_EQ(x.step, y.step);
    EXPECT_EQ(x.cover, y.cover);
    ASSERT_EQ(x.nodes.size(), y.nodes.size());
    for (std::size_t i = 0; i < x.nodes.size(); ++i) {
      const Node &p = x.nodes[i], &q = y.nodes[i];
      EXPECT_TRUE(p.feature == q.feature && p.nan_left == q.nan_left && p.value == q.value && p.left == q.left &&
                  p.right == q.right && p.gain == q.gain)
          << "tree " << t << " node " << i;
      EXPECT_TRUE(p.threshold == q.threshold || (std::isnan(p.threshold) && std::isnan(q.threshold)));
    }
  }
  EXPECT_EQ(a.feature_mean, b.feature_mean);
  EXPECT_EQ(a.feature_scale, b.feature_scale);
  EXPECT_EQ(a.anchors, b.anchors);
  EXPECT_EQ(a.anchor_rows, b.anchor_rows);
  ASSERT_EQ(a.similarities.size(), b.similarities.size());
  for (std::size_t t = 0; t < a.similarities.size(); ++t) {
    const Similarity &x = a.similarities[t], &y = b.similarities[t];
    EXPECT_TRUE(x.kind == y.kind && x.anchor_i == y.anchor_i && x.anchor_j == y.anchor_j && x.tau == y.tau &&
                x.step == y.step);
  }
}

TEST(ModelFileRoundTrip, EveryFieldSurvivesBytesAndFiles) {
  std::vector<Model> models;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    Model m = tree_model(seed, seed % 2 ? 1 : 2 + seed % 3, seed % 3 != 0);
    if (m.n_outputs > 1) m.g = static_cast<RebelG>(seed % 3);
    if (seed % 4 == 1) m.cascade = {4, std::vector<double>(2 * 2, 0.75)};
    models.push_back(m);
  }
  models.push_back(similarity_model());
  const std::string path = ::testing::TempDir() + "rb_model_round_trip.rbm";
  for (const Model& m : models) {
    ASSERT_NO_THROW(m.validate());
    const std::string bytes = serialize(m);
    const Model back = deserialize(bytes.data(), bytes.size());
    expect_same_model(m, back);
    EXPECT_EQ(serialize(back), bytes);  // one encoding per model
    save_model(m, path);
    expect_same_model(m, load_model(path));
  }
  std::remove(path.c_str());
}

TEST(ModelFileRoundTrip, SaveRefusesAnInvalidModel) {
  Model m = tree_model(2, 1);
  m.bias[0] = std::nan("");
  EXPECT_THROW(serialize(m), ModelFileError);
}

}  // namespace
}  // namespace rebelboost
