// Model files of similarity models (format version 2 on): exact round trips, every truncation and field
// patched to a hostile value rejected with a clear error, and the documented layout at its offsets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/predict.hpp"
#include "rebelboost/train.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

using testing::Dense;

struct Fixture {
  Model model;
  Dense<double> X;
};

Fixture trained(int n_learners) {
  Dense<double> X = testing::random_matrix(150, 3, 31);
  std::vector<std::int32_t> y(150);
  for (std::size_t r = 0; r < 150; ++r) y[r] = static_cast<std::int32_t>((X.at(r, 0) > 0) + (X.at(r, 1) > 0.4));
  TrainParams p;
  p.loss = LossKind::kRebel;
  p.learner = LearnerKind::kSimilarity;
  p.n_estimators = n_learners;
  p.n_threads = 1;
  Fixture f{train(X.c_view(), y.data(), nullptr, 3, p).model, X};
  f.model.metadata = "{\"note\": \"similarity\"}";
  return f;
}

// Offsets of the documented layout (model_file.cpp) in a serialized similarity model.
struct Layout {
  std::size_t learner_field, mean, scale, anchor_count, first_anchor_row, first_anchor, learner_count,
      first_learner;
  std::size_t learner_size;
  explicit Layout(const Model& m) {
    const std::size_t K = m.n_outputs, d = m.n_features, header = 24;
    learner_field = header + 12;
    mean = header + 16 + 8 * K + 8 + m.metadata.size();
    scale = mean + 8 * d;
    anchor_count = scale + 8 * d;
    first_anchor_row = anchor_count + 8;
    first_anchor = first_anchor_row + 8;
    learner_count = first_anchor_row + m.anchor_rows.size() * (8 + 8 * d);
    first_learner = learner_count + 8;
    learner_size = 24 + 8 * K;
  }
};

std::uint64_t fnv1a(const std::string& s, std::size_t begin, std::size_t end) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = begin; i < end; ++i) {
    h ^= static_cast<unsigned char>(s[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

// Writes v little-endian at `offset` and repairs the checksum, so only the loader's own checks can object.
template <typename U>
std::string patched(std::string bytes, std::size_t offset, U v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(U));
  for (std::size_t i = 0; i < sizeof(U); ++i) bytes[offset + i] = static_cast<char>((bits >> (8 * i)) & 0xFF);
  const std::uint64_t sum = fnv1a(bytes, 24, bytes.size() - 8);
  for (std::size_t i = 0; i < 8; ++i) bytes[bytes.size() - 8 + i] = static_cast<char>((sum >> (8 * i)) & 0xFF);
  return bytes;
}

template <typename U>
U read_at(const std::string& bytes, std::size_t offset) {
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < sizeof(U); ++i) bits |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  U v;
  std::memcpy(&v, &bits, sizeof(U));
  return v;
}

void expect_rejected(const std::string& bytes, const std::string& needle) {
  try {
    deserialize(bytes.data(), bytes.size());
    ADD_FAILURE() << "accepted a hostile file; expected an error containing '" << needle << "'";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "'" << e.what() << "' lacks '" << needle << "'";
  }
}

std::vector<double> scores(const Model& m, const Dense<double>& X) {
  std::vector<double> s(X.n_rows * m.n_outputs);
  decision_function(m, X.c_view(), s.data(), 1);
  return s;
}

TEST(SimilarityFile, RoundTripIsExactAndTheLayoutSitsAtItsOffsets) {
  const Fixture f = trained(30);
  const std::string bytes = serialize(f.model);
  const Model back = deserialize(bytes.data(), bytes.size());
  EXPECT_TRUE(serialize(back) == bytes);
  EXPECT_EQ(scores(back, f.X), scores(f.model, f.X));
  EXPECT_EQ(read_at<std::uint32_t>(bytes, 8), kFormatVersion);
  const Layout at(f.model);
  EXPECT_EQ(read_at<std::uint32_t>(bytes, at.learner_field), 1u);
  EXPECT_EQ(read_at<double>(bytes, at.mean), f.model.feature_mean[0]);
  EXPECT_EQ(read_at<double>(bytes, at.scale + 16), f.model.feature_scale[2]);
  EXPECT_EQ(read_at<std::uint64_t>(bytes, at.anchor_count), f.model.anchor_rows.size());
  EXPECT_EQ(read_at<std::uint64_t>(bytes, at.first_anchor_row), f.model.anchor_rows[0]);
  EXPECT_EQ(read_at<double>(bytes, at.first_anchor), f.model.anchors[0]);
  EXPECT_EQ(read_at<std::uint64_t>(bytes, at.learner_count), f.model.similarities.size());
  // Then version 3's cascade section (16 bytes: none here), version 4's surrogate g (4) and the checksum.
  EXPECT_EQ(at.first_learner + f.model.similarities.size() * at.learner_size + 16 + 4 + 8, bytes.size());
}

TEST(SimilarityFile, EveryTruncationIsRejected) {
  const std::string bytes = serialize(trained(8).model);
  for (std::size_t len = 0; len < bytes.size(); ++len)
    EXPECT_THROW(deserialize(bytes.data(), len), ModelFileError) << "truncated to " << len;
}

TEST(SimilarityFile, HostileFieldsAreRejected) {
  const Fixture f = trained(12);
  const std::string bytes = serialize(f.model);
  const Layout at(f.model);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  expect_rejected(patched<std::uint32_t>(bytes, at.learner_field, 7), "unknown learner family");
  expect_rejected(patched<std::uint32_t>(bytes, 8, 1), "reserved field");  // version 1 knew trees only
  expect_rejected(patched(bytes, at.mean + 8, nan), "non-finite feature mean");
  expect_rejected(patched(bytes, at.scale, 0.0), "feature scale");
  expect_rejected(patched(bytes, at.scale, -inf), "feature scale");
  expect_rejected(patched(bytes, at.first_anchor, inf), "non-finite anchor");
  expect_rejected(patched<std::uint64_t>(bytes, at.anchor_count, std::uint64_t{1} << 60), "exceeds the file size");
  expect_rejected(patched<std::uint64_t>(bytes, at.learner_count, std::uint64_t{1} << 60), "exceeds the file size");
  // Per learner: kind, anchor_i, anchor_j, padding, tau, step. Find one learner of each kind.
  auto first = [&](Similarity::Kind kind) {
    for (std::size_t t = 0; t < f.model.similarities.size(); ++t)
      if (f.model.similarities[t].kind == kind) return at.first_learner + t * at.learner_size;
    return std::size_t{0};
  };
  const std::size_t two = first(Similarity::Kind::kTwoPoint);
  ASSERT_NE(two, 0u);
  const auto n_anchors = static_cast<std::uint32_t>(f.model.anchor_rows.size());
  expect_rejected(patched<std::uint32_t>(bytes, two, 9), "unknown kind");
  expect_rejected(patched<std::uint32_t>(bytes, two + 4, n_anchors), "bad first anchor");
  expect_rejected(patched<std::uint32_t>(bytes, two + 8, n_anchors), "bad second anchor");
  expect_rejected(patched<std::uint32_t>(bytes, two + 8, read_at<std::uint32_t>(bytes, two + 4)), "bad second anchor");
  expect_rejected(patched<std::uint32_t>(bytes, two + 12, 1), "padding");
  expect_rejected(patched(bytes, two + 16, 0.5), "bad tau");
  expect_rejected(patched(bytes, two + 24, nan), "non-finite step");
  // Two distinct anchors at the same place: a two-point learner would divide by zero.
  const std::uint32_t j = read_at<std::uint32_t>(bytes, two + 8), i = read_at<std::uint32_t>(bytes, two + 4);
  std::string same = bytes;
  for (std::size_t c = 0; c < f.model.n_features; ++c)
    same = patched(same, at.first_anchor + j * (8 + 8 * f.model.n_features) + 8 * c,
                   f.model.anchors[i * f.model.n_features + c]);
  expect_rejected(same, "coincide");
  const std::size_t one = first(Similarity::Kind::kOnePoint);
  if (one != 0) {
    expect_rejected(patched(bytes, one + 16, 0.0), "bad tau");
    expect_rejected(patched(bytes, one + 16, inf), "bad tau");
    expect_rejected(patched<std::uint32_t>(bytes, one + 8, 1), "bad second anchor");
  }
  std::string extra = bytes;
  extra.insert(extra.size() - 8, std::string(5, '\0'));
  expect_rejected(patched<std::uint64_t>(extra, 16, bytes.size() - 24 - 8 + 5), "after the last section");
}

TEST(SimilarityFile, TreeMembersInASimilarityModelAndViceVersaAreInvalid) {
  Model m = trained(3).model;
  m.trees.emplace_back();
  EXPECT_THROW(serialize(m), ModelFileError);
  Model t;
  t.n_features = 1;
  t.bias = {0.0};
  t.feature_mean = {0.0};
  EXPECT_THROW(serialize(t), ModelFileError);
}

}  // namespace
}  // namespace rebelboost
