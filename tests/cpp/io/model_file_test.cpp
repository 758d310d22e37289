// Tests of the model file: exact round trips, atomic saves, and corrupt or hostile input never accepted.
#include "rebelboost/io.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rebelboost/error.hpp"
#include "rebelboost/predict.hpp"
#include "rebelboost/train.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

namespace fs = std::filesystem;
using testing::Dense;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// ---- an independent writer of the documented layout (rebelboost/io.hpp, model_file.cpp) -----------

class Bytes {
 public:
  template <typename U>
  Bytes& put(U v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(U));
    for (std::size_t i = 0; i < sizeof(U); ++i) s_.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
    return *this;
  }
  Bytes& raw(const std::string& s) {
    s_ += s;
    return *this;
  }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

std::uint64_t fnv1a_64(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64-bit offset basis
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;  // FNV 64-bit prime
  }
  return h;
}

struct RawNode {
  std::int32_t feature = -1;
  std::uint8_t nan_left = 0;
  std::int8_t value = 1;
  std::uint16_t padding = 0;
  std::uint32_t left = 0, right = 0;
  double threshold = 0.0, gain = 0.0;
};

struct RawTree {
  std::optional<std::uint32_t> declared_nodes;  // default: nodes.size()
  std::vector<double> step;
  std::vector<RawNode> nodes;
  std::vector<double> covers;  // version 5: written after the nodes when the model's covers flag is 1
};

struct RawModel {
  std::uint32_t loss = 1, n_features = 3, n_outputs = 1, reserved = 0;
  std::vector<double> bias = {0.25};
  std::string metadata = "{\"classes\": [0, 1]}";
  std::optional<std::uint64_t> declared_metadata;  // default: metadata.size()
  std::optional<std::uint64_t> declared_trees;     // default: trees.size()
  std::vector<RawTree> trees;
  std::optional<std::uint32_t> covers_flag;  // version 5; default: 1 when the first tree has covers
  std::uint32_t covers_padding = 0;
  std::uint32_t cascade_every = 0;         // version 3: the soft cascade section
  std::vector<double> cascade_thresholds;  // n_checkpoints x classes
  std::uint32_t g = 0;                     // version 4: REBEL's surrogate
  std::string after_trees;  // extra payload bytes after the last section
};

// The payload in the layout of `version` (before 3: no cascade section; before 4: no g; before 5: no covers).
std::string payload_of(const RawModel& m, std::uint32_t version = 1) {
  Bytes b;
  b.put(m.loss).put(m.n_features).put(m.n_outputs).put(m.reserved);
  for (double v : m.bias) b.put(v);
  b.put<std::uint64_t>(m.declared_metadata.value_or(m.metadata.size())).raw(m.metadata);
  b.put<std::uint64_t>(m.declared_trees.value_or(m.trees.size()));
  if (version >= 5)
    b.put<std::uint32_t>(m.covers_flag.value_or(!m.trees.empty() && !m.trees[0].covers.empty() ? 1 : 0))
        .put(m.covers_padding);
  for (const RawTree& t : m.trees) {
    b.put<std::uint32_t>(t.declared_nodes.value_or(static_cast<std::uint32_t>(t.nodes.size())));
    for (double v : t.step) b.put(v);
    for (const RawNode& n : t.nodes)
      b.put(n.feature).put(n.nan_left).put(n.value).put(n.padding).put(n.left).put(n.right).put(n.threshold).put(n.gain);
    if (version >= 5)
      for (double c : t.covers) b.put(c);
  }
  if (version >= 3) {
    const std::uint32_t classes = m.n_outputs == 1 ? 2 : m.n_outputs;
    b.put(m.cascade_every).put(classes).put<std::uint64_t>(classes ? m.cascade_thresholds.size() / classes : 0);
    for (double v : m.cascade_thresholds) b.put(v);
  }
  if (version >= 4) b.put(m.g);
  return b.raw(m.after_trees).str();
}

struct FileOptions {
  std::uint32_t version = kFormatVersion;
  std::uint32_t reserved = 0;
  std::optional<std::uint64_t> declared_payload;  // default: the real payload size
  std::string trailing;                           // bytes after the checksum
};

// Header + payload + a correct FNV-1a checksum of the payload: hostile content that passes the checksum.
std::string file_of(const std::string& payload, const FileOptions& o = {}) {
  Bytes b;
  b.raw("RBLBOOST").put(o.version).put(o.reserved).put<std::uint64_t>(o.declared_payload.value_or(payload.size()));
  b.raw(payload).put<std::uint64_t>(fnv1a_64(payload)).raw(o.trailing);
  return b.str();
}

FileOptions version(std::uint32_t v) {
  FileOptions o;
  o.version = v;
  return o;
}

std::string file_of(const RawModel& m, const FileOptions& o = {}) { return file_of(payload_of(m, o.version), o); }

RawModel raw_of(const Model& model) {
  RawModel r;
  r.loss = static_cast<std::uint32_t>(model.loss);
  r.n_features = model.n_features;
  r.n_outputs = model.n_outputs;
  r.bias = model.bias;
  r.metadata = model.metadata;
  for (const Tree& t : model.trees) {
    RawTree rt;
    rt.step = t.step;
    for (const Node& n : t.nodes) {
      RawNode rn;
      rn.feature = n.feature;
      rn.nan_left = n.nan_left;
      rn.value = n.value;
      rn.left = n.left;
      rn.right = n.right;
      rn.threshold = n.threshold;
      rn.gain = n.gain;
      rt.nodes.push_back(rn);
    }
    rt.covers = t.cover;
    r.trees.push_back(rt);
  }
  r.cascade_every = model.cascade.every;
  r.cascade_thresholds = model.cascade.thresholds;
  return r;
}

// A valid hand-made AdaBoost model: a stump on feature 2 and a depth-2 tree.
RawModel base_model() {
  RawModel m;
  RawTree stump;
  stump.step = {0.5};
  stump.nodes.resize(3);
  stump.nodes[0] = RawNode{2, 1, 0, 0, 1, 2, 0.75, 0.1};
  stump.nodes[1].value = 1;
  stump.nodes[2].value = -1;
  RawTree deep;
  deep.step = {-0.3};
  deep.nodes.resize(5);
  deep.nodes[0] = RawNode{0, 0, 0, 0, 1, 2, -1.0, 0.2};
  deep.nodes[1] = RawNode{1, 1, 0, 0, 3, 4, 2.5, 0.05};
  deep.nodes[2].value = -1;
  deep.nodes[3].value = 1;
  deep.nodes[4].value = -1;
  m.trees = {stump, deep};
  return m;
}

// ---- helpers ---------------------------------------------------------------------------------------

Model from_bytes(const std::string& s) { return deserialize(s.data(), s.size()); }

void expect_rejected(const std::string& bytes, const std::string& needle) {
  try {
    from_bytes(bytes);
    ADD_FAILURE() << "accepted a hostile file; expected an error containing '" << needle << "'";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message '" << e.what() << "' lacks '" << needle << "'";
  }
}

struct Trained {
  Model model;
  Dense<double> X;
};

Trained trained(int n_trees, int depth) {
  Dense<double> X = testing::random_matrix(800, 4, 21, 0.1);
  const auto y = testing::noisy_labels(X, 22, 0.2);
  TrainParams p;
  p.n_estimators = n_trees;
  p.max_depth = depth;
  p.n_threads = 1;
  Trained t{train(X.c_view(), y.data(), nullptr, 2, p).model, X};
  static const char kMeta[] = "{\"classes\": [\"no\", \"yes\"]}\0binary\xff";
  t.model.metadata = std::string(kMeta, sizeof(kMeta) - 1);  // embedded NUL and a non-UTF-8 byte
  return t;
}

std::vector<double> scores(const Model& m, const Dense<double>& X) {
  std::vector<double> s(X.n_rows * m.n_outputs);
  decision_function(m, X.c_view(), s.data(), 1);
  return s;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "rb-io-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.insert(e.path().filename().string());
    return names;
  }

 private:
  fs::path path_;
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// ---- round trips -----------------------------------------------------------------------------------

TEST(ModelFile, IndependentWriterMatchesSerialize) {
  const Trained t = trained(5, 2);
  EXPECT_TRUE(file_of(raw_of(t.model)) == serialize(t.model)) << "the test's layout writer disagrees with the core";
  EXPECT_NO_THROW(from_bytes(file_of(base_model())));
}

TEST(ModelFile, RoundTripIsExact) {
  const Trained t = trained(12, 3);
  const std::string bytes = serialize(t.model);
  const Model back = from_bytes(bytes);
  EXPECT_TRUE(serialize(back) == bytes);
  EXPECT_EQ(back.metadata, t.model.metadata);
  EXPECT_EQ(back.bias, t.model.bias);
  EXPECT_EQ(back.loss, t.model.loss);
  EXPECT_EQ(scores(back, t.X), scores(t.model, t.X));
  // Signed zeros, subnormals and -inf/+inf thresholds survive bit for bit.
  RawModel r = base_model();
  r.trees[0].nodes[0].threshold = -0.0;
  r.trees[1].nodes[0].threshold = std::numeric_limits<double>::denorm_min();
  r.trees[1].nodes[1].threshold = kInf;
  r.bias = {-0.0};
  const std::string odd = file_of(r);
  EXPECT_TRUE(serialize(from_bytes(odd)) == odd);
}

TEST(ModelFile, EmptyModelRoundTrips) {
  Model m;
  m.n_features = 1;
  m.bias = {0.0};
  const std::string bytes = serialize(m);
  EXPECT_TRUE(serialize(from_bytes(bytes)) == bytes);
}

TEST(ModelFile, SaveAndLoadAtomically) {
  TempDir dir;
  const Trained t = trained(8, 2);
  const fs::path path = dir.path() / "model.rbm";
  save_model(t.model, path.string());
  EXPECT_EQ(dir.entries(), std::set<std::string>{"model.rbm"}) << "temporary file left behind";
  EXPECT_TRUE(read_all(path) == serialize(t.model));
  const Model back = load_model(path.string());
  EXPECT_TRUE(serialize(back) == serialize(t.model));
  EXPECT_EQ(scores(back, t.X), scores(t.model, t.X));

  // Overwriting an existing file replaces it whole.
  const Trained small = trained(1, 1);
  save_model(small.model, path.string());
  EXPECT_EQ(dir.entries(), std::set<std::string>{"model.rbm"});
  EXPECT_TRUE(read_all(path) == serialize(small.model));
}

TEST(ModelFile, SaveReclaimsWhatKilledSavesLeft) {
  // A save killed between naming its temporary file and the rename leaves <path>.tmp-<pid>-*; the next
  // save to that path removes those whose writer is gone, and nothing else.
  TempDir dir;
  const Trained t = trained(2, 1);
  const fs::path path = dir.path() / "model.rbm";
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // a pid that no longer runs
  const std::string dead = "model.rbm.tmp-" + std::to_string(child) + "-aB3xYz";
  const std::string alive = "model.rbm.tmp-" + std::to_string(::getpid()) + "-Qw9eRt";  // a save in progress
  for (const std::string& name : {dead, alive, std::string("model.rbm.tmp-XyZ123"), std::string("other.rbm.tmp-1-a")})
    std::ofstream(dir.path() / name) << "partial";
  save_model(t.model, path.string());
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"model.rbm", alive, "model.rbm.tmp-XyZ123", "other.rbm.tmp-1-a"}));
  EXPECT_TRUE(serialize(load_model(path.string())) == serialize(t.model));
}

TEST(ModelFile, SaveErrorsLeaveNothingBehind) {
  TempDir dir;
  const Trained t = trained(2, 1);
  EXPECT_THROW(save_model(t.model, (dir.path() / "missing" / "model.rbm").string()), IoError);
  Model invalid = t.model;
  invalid.trees[0].step[0] = kNaN;
  EXPECT_THROW(save_model(invalid, (dir.path() / "bad.rbm").string()), ModelFileError);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(ModelFile, LoadErrors) {
  TempDir dir;
  EXPECT_THROW(load_model((dir.path() / "nope.rbm").string()), IoError);
  // A directory or a device is not a model file: IoError, not a stream exception or a hang.
  EXPECT_THROW(load_model(dir.path().string()), IoError);
  EXPECT_THROW(load_model("/dev/null"), IoError);
  std::ofstream(dir.path() / "empty.rbm").close();
  EXPECT_THROW(load_model((dir.path() / "empty.rbm").string()), ModelFileError);
  std::ofstream(dir.path() / "text.rbm") << "hello, this is not a model file at all.";
  EXPECT_THROW(load_model((dir.path() / "text.rbm").string()), ModelFileError);
  std::ofstream(dir.path() / "hostile.rbm", std::ios::binary) << file_of(base_model(), version(kFormatVersion + 1));
  EXPECT_THROW(load_model((dir.path() / "hostile.rbm").string()), ModelFileError);
}

TEST(ModelFile, PathsWithNulBytesAndFifosAreRefusedAtOnce) {
  // "m.rbm\0junk" loaded m.rbm and "a\0b.rbm" saved to a (the OS cut the name at the NUL); a FIFO was
  // opened for a blocking read before the regular-file check, so loading it waited forever.
  TempDir dir;
  const Trained t = trained(2, 1);
  const std::string path = (dir.path() / "m.rbm").string();
  save_model(t.model, path);
  EXPECT_THROW(load_model(path + std::string("\0junk", 5)), InvalidArgument);
  EXPECT_THROW(save_model(t.model, (dir.path() / "a").string() + std::string("\0b.rbm", 6)), InvalidArgument);
  EXPECT_THROW(load_model(""), InvalidArgument);
  const std::string fifo = (dir.path() / "fifo.rbm").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const pid_t child = ::fork();  // in a child with an alarm, so a regression fails instead of hanging
  if (child == 0) {
    ::alarm(20);
    try {
      load_model(fifo);
    } catch (const IoError& e) {
      ::_exit(std::string(e.what()).find("not a regular file (a FIFO)") != std::string::npos ? 0 : 2);
    } catch (...) {
    }
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_THROW(save_model(t.model, fifo), IoError);  // a writer refuses it too
  EXPECT_THROW(save_model(t.model, dir.path().string()), IoError);
}

// ---- systematic corruption of a real file --------------------------------------------------------

TEST(ModelFileCorruption, EveryTruncationIsRejected) {
  const std::string bytes = serialize(trained(5, 2).model);
  ASSERT_GT(bytes.size(), 500u);
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    const std::string cut = bytes.substr(0, len);
    EXPECT_THROW(from_bytes(cut), ModelFileError) << "truncated to " << len << " of " << bytes.size() << " bytes";
  }
}

// Flips every byte with each mask; a flip must be rejected, or (when the checksum cannot see it) give
// a model that is valid and means the same thing.
std::vector<std::size_t> accepted_flips(const std::string& bytes, const std::vector<unsigned>& masks) {
  std::vector<std::size_t> accepted;
  const std::string canonical = bytes;
  for (std::size_t pos = 0; pos < bytes.size(); ++pos) {
    for (unsigned mask : masks) {
      std::string bad = bytes;
      bad[pos] = static_cast<char>(static_cast<unsigned char>(bad[pos]) ^ mask);
      try {
        const Model m = from_bytes(bad);
        EXPECT_NO_THROW(m.validate()) << "position " << pos;
        EXPECT_TRUE(serialize(m) == canonical) << "a corrupt file at byte " << pos << " loaded as a different model";
        accepted.push_back(pos);
      } catch (const ModelFileError&) {
      }
    }
  }
  return accepted;
}

TEST(ModelFileCorruption, EveryByteFlipIsRejectedOrHarmless) {
  const std::string bytes = serialize(trained(5, 2).model);
  std::vector<unsigned> masks = {0xFF};
  for (unsigned bit = 0; bit < 8; ++bit) masks.push_back(1u << bit);
  const auto accepted = accepted_flips(bytes, masks);
  // FNV-1a changes whenever one payload byte does, and every header byte is checked (bytes 12..15, the
  // reserved field outside the checksum, must be zero), so no flip at all should load.
  EXPECT_TRUE(accepted.empty()) << accepted.size() << " corrupt files loaded, first flip at byte " << accepted.front();
}

TEST(ModelFileCorruption, ChecksumAndFramingErrors) {
  const std::string good = serialize(trained(3, 2).model);
  std::string bad = good;
  bad[40] ^= 0x01;
  expect_rejected(bad, "checksum");
  bad = good;
  bad[0] = 'X';
  expect_rejected(bad, "magic");
  expect_rejected(good + "x", "trailing bytes");
  expect_rejected(good + std::string(1000, '\0'), "trailing bytes");
  expect_rejected(good.substr(0, good.size() - 1), "truncated");
}

// ---- hostile payloads that carry a valid checksum ------------------------------------------------

TEST(ModelFileHostile, WrongFormatVersion) {
  for (std::uint32_t v : {0u, kFormatVersion + 1, 0xFFFFFFFFu})
    expect_rejected(file_of(base_model(), version(v)), "unsupported model file format version " + std::to_string(v));
}

TEST(ModelFileHostile, NonZeroReservedFields) {
  FileOptions o;
  o.reserved = 1;
  expect_rejected(file_of(base_model(), o), "reserved header field");
  RawModel m = base_model();
  m.reserved = 0x80000000u;  // since version 2 the learner family
  expect_rejected(file_of(m, version(1)), "reserved field");
  expect_rejected(file_of(m), "unknown learner family");
}

TEST(ModelFileHostile, PayloadSizeDisagreesWithTheFile) {
  const std::string payload = payload_of(base_model());
  FileOptions o;
  o.declared_payload = payload.size() + 1;
  expect_rejected(file_of(payload, o), "truncated");
  o.declared_payload = std::numeric_limits<std::uint64_t>::max();
  expect_rejected(file_of(payload, o), "truncated");
  o.declared_payload = std::numeric_limits<std::uint64_t>::max() - 31;  // size arithmetic must not wrap
  expect_rejected(file_of(payload, o), "truncated");
  o.declared_payload = payload.size() - 1;
  expect_rejected(file_of(payload, o), "trailing");
  FileOptions trailing;
  trailing.trailing = "JUNK";
  expect_rejected(file_of(payload, trailing), "trailing bytes");
}

TEST(ModelFileHostile, BytesAfterTheLastTree) {
  RawModel m = base_model();
  m.after_trees = std::string(7, '\0');
  expect_rejected(file_of(m), "after the last section");
  m.after_trees = std::string(100, 'z');
  expect_rejected(file_of(m), "after the last section");
}

TEST(ModelFileHostile, HugeTreeCount) {
  for (std::uint64_t n : {std::uint64_t{3}, std::uint64_t{1} << 32, std::uint64_t{1} << 62,
                          std::numeric_limits<std::uint64_t>::max()}) {
    RawModel m = base_model();
    m.declared_trees = n;  // version 1: nothing follows the trees, so a third tree runs off the end
    expect_rejected(file_of(m, version(1)), n == 3 ? "truncated" : "tree count " + std::to_string(n) + " exceeds the file size");
  }
}

TEST(ModelFileHostile, HugeOrZeroNodeCount) {
  for (std::uint32_t n : {0u, static_cast<std::uint32_t>(kMaxTreeNodes + 1), 0x7FFFFFFFu, 0xFFFFFFFFu}) {
    RawModel m = base_model();
    m.trees[1].declared_nodes = n;
    expect_rejected(file_of(m), "a tree with " + std::to_string(n) + " nodes");
  }
  // Allowed by the cap but more nodes than the file holds.
  RawModel m = base_model();
  m.trees[1].declared_nodes = static_cast<std::uint32_t>(kMaxTreeNodes);
  expect_rejected(file_of(m), "node count 511 exceeds the file size");
}

TEST(ModelFileHostile, HugeMetadataOrOutputCount) {
  RawModel m = base_model();
  m.declared_metadata = std::numeric_limits<std::uint64_t>::max();
  expect_rejected(file_of(m), "metadata");
  m = base_model();
  m.declared_metadata = m.metadata.size() + 1000;
  expect_rejected(file_of(m), "metadata");

  m = base_model();
  m.n_outputs = 0;
  m.bias.clear();
  for (auto& t : m.trees) t.step.clear();
  expect_rejected(file_of(m), "0 outputs");
  m = base_model();
  m.n_outputs = 0xFFFFFFFFu;
  expect_rejected(file_of(m), "4294967295 outputs");
  m = base_model();
  m.n_outputs = 1u << 16;
  expect_rejected(file_of(m), "65536 outputs, more than the limit kMaxClasses = 4096");
  m = base_model();
  m.n_outputs = kMaxClasses;  // allowed by the cap, but the bias does not fit in the file
  expect_rejected(file_of(m), "bias count 4096 exceeds the file size");
}

TEST(ModelFileHostile, ChildIndices) {
  struct Case {
    std::uint32_t left, right;
  };
  // Node 1 of the deep tree has valid children 3 and 4 (> 1, < 5 nodes, distinct). Replace them with
  // backward, self, equal and out-of-range indices.
  for (const Case c : {Case{0, 4}, Case{1, 4}, Case{3, 1}, Case{3, 3}, Case{3, 5}, Case{5, 4},
                       Case{3, 0xFFFFFFFFu}, Case{0x80000000u, 4}}) {
    RawModel m = base_model();
    m.trees[1].nodes[1].left = c.left;
    m.trees[1].nodes[1].right = c.right;
    expect_rejected(file_of(m), "node 1 has out-of-range children");
  }
  RawModel m = base_model();
  m.trees[0].nodes[0].left = 0;  // root pointing at itself: an infinite loop if accepted
  expect_rejected(file_of(m), "node 0 has out-of-range children");
}

TEST(ModelFileHostile, NodesMustFormATree) {
  // Found by the fuzzer: children in range and increasing, but node 3 shared by two parents (and node 2
  // unreachable) made Tree::depth() too small, and flattening read a split as a leaf of value 0.
  RawModel m = base_model();
  RawTree graph;
  graph.step = {0.5};
  graph.nodes.resize(7);
  graph.nodes[0] = RawNode{0, 0, 0, 0, 1, 3, 0.0, 0.1};
  graph.nodes[1] = RawNode{1, 0, 0, 0, 3, 4, 0.0, 0.1};
  graph.nodes[2] = RawNode{1, 0, 0, 0, 5, 6, 0.0, 0.1};
  graph.nodes[3] = RawNode{2, 0, 0, 0, 5, 6, 0.0, 0.1};
  for (int i : {4, 5, 6}) graph.nodes[static_cast<std::size_t>(i)].value = 1;
  m.trees.push_back(graph);
  expect_rejected(file_of(m), "tree 2: node 2 is unreachable (the nodes must form a tree)");
  RawTree& shared = m.trees.back();  // 0 -> (1, 3), 1 -> (2, 3), 3 -> (4, 5): every node reachable, 3 twice
  shared.nodes.resize(6);
  shared.nodes[1] = RawNode{1, 0, 0, 0, 2, 3, 0.0, 0.1};
  shared.nodes[2] = RawNode{};
  shared.nodes[3] = RawNode{2, 0, 0, 0, 4, 5, 0.0, 0.1};
  expect_rejected(file_of(m), "tree 2: node 3 has several parents");
}

TEST(ModelFileHostile, FeatureOutOfRange) {
  for (std::int32_t f : {3, 4, 1000, std::numeric_limits<std::int32_t>::max()}) {
    RawModel m = base_model();  // n_features = 3
    m.trees[1].nodes[1].feature = f;
    expect_rejected(file_of(m), "uses feature " + std::to_string(f) + " of 3");
  }
  RawModel m = base_model();
  m.n_features = 0;
  expect_rejected(file_of(m), "n_features is 0");
}

TEST(ModelFileHostile, NonFiniteNumbers) {
  RawModel m = base_model();
  m.trees[0].nodes[0].threshold = kNaN;
  expect_rejected(file_of(m), "NaN threshold");
  for (double v : {kInf, -kInf, kNaN}) {
    m = base_model();
    m.trees[1].step[0] = v;
    expect_rejected(file_of(m), "non-finite step");
    m = base_model();
    m.bias[0] = v;
    expect_rejected(file_of(m), "non-finite bias");
    m = base_model();
    m.trees[1].nodes[0].gain = v;
    expect_rejected(file_of(m), "non-finite gain");
  }
}

TEST(ModelFileHostile, BadLeavesAndNodeFields) {
  for (std::int8_t v : {std::int8_t{0}, std::int8_t{2}, std::int8_t{-2}, std::int8_t{-128}}) {
    RawModel m = base_model();
    m.trees[1].nodes[3].value = v;
    expect_rejected(file_of(m), "bad leaf 3");
  }
  RawModel m = base_model();
  m.trees[1].nodes[3].feature = -2;
  expect_rejected(file_of(m), "bad leaf 3");
  m = base_model();
  m.trees[0].nodes[0].nan_left = 2;
  expect_rejected(file_of(m), "bad NaN direction");
  m = base_model();
  m.trees[0].nodes[1].padding = 1;
  expect_rejected(file_of(m), "padding");
}

TEST(ModelFileHostile, LossAndOutputsDisagree) {
  RawModel m = base_model();
  m.loss = 99;
  expect_rejected(file_of(m), "unknown loss kind 99");
  m = base_model();
  m.loss = 0;
  expect_rejected(file_of(m), "unknown loss kind 0");
  // AdaBoost with K = 2 (consistent sizes, wrong for the loss) and REBEL with K = 1.
  m = base_model();
  m.n_outputs = 2;
  m.bias = {0.1, 0.2};
  for (auto& t : m.trees) t.step = {0.5, 0.5};
  expect_rejected(file_of(m), "AdaBoost model with 2 outputs");
  m = base_model();
  m.loss = static_cast<std::uint32_t>(LossKind::kRebel);
  expect_rejected(file_of(m), "REBEL model with 1 outputs");
}

// ---- limits: every resource a file controls is bounded, and the error names the limit --------------

TEST(ModelFileLimits, FeatureCountBeyondTheLimit) {
  for (std::uint32_t n : {kMaxFeatures + 1, 0xFFFFFFFFu}) {  // feature_importances would allocate 8 n bytes
    RawModel m = base_model();
    m.n_features = n;
    expect_rejected(file_of(m), std::to_string(n) + " features, more than the limit kMaxFeatures = 16777216");
  }
  RawModel m = base_model();
  m.n_features = 1000;
  EXPECT_EQ(from_bytes(file_of(m)).feature_importances().size(), 1000u);
}

TEST(ModelFileLimits, TreeCountBeyondTheLimit) {
  // kMaxTrees + 1 one-leaf trees (44 bytes each): the count fits in the file but not in the limit.
  RawModel m = base_model();
  m.trees.clear();
  RawTree leaf;
  leaf.step = {0.0};
  leaf.nodes.resize(1);
  m.trees.push_back(leaf);
  const std::string one = payload_of(m);
  const std::size_t tree_at = one.size() - 44;
  std::string payload = one.substr(0, tree_at - 8);
  Bytes count;
  count.put<std::uint64_t>(kMaxTrees + 1);
  payload += count.str();
  payload.reserve(payload.size() + (kMaxTrees + 1) * 44);
  for (std::size_t t = 0; t <= kMaxTrees; ++t) payload.append(one, tree_at, 44);
  expect_rejected(file_of(payload, version(1)), "1000001 trees, more than the limit kMaxTrees = 1000000");
}

TEST(ModelFileLimits, MetadataBeyondTheLimit) {
  RawModel m = base_model();
  m.metadata.assign(kMaxMetadataBytes + 1, ' ');
  expect_rejected(file_of(m), "bytes of metadata, more than the limit kMaxMetadataBytes");
  Model model = from_bytes(file_of(base_model()));
  model.metadata.assign(kMaxMetadataBytes + 1, ' ');
  EXPECT_THROW(serialize(model), ModelFileError);  // nor is such a file ever written
}

TEST(ModelFileLimits, ScoresThatCouldOverflowAreRejected) {
  // Finite but huge steps gave inf scores and NaN probabilities: |bias| + sum |steps| is bounded per output.
  RawModel m = base_model();
  m.trees[0].step = {1e308};
  m.trees[1].step = {1e308};
  expect_rejected(file_of(m), "could reach inf (|bias| + the sum of |steps|), beyond the limit kMaxAbsScore = 1e300");
  m = base_model();
  m.bias = {-1e300};
  m.trees[0].step = {1e290};
  expect_rejected(file_of(m), "scores of output 0 could reach 1e+300");
  m.loss = static_cast<std::uint32_t>(LossKind::kRebel);  // the bound is per output: only output 1 is too large
  m.n_outputs = 2;
  m.bias = {0.25, 0.0};
  m.trees[0].step = {-0.5e300, 0.8e300};
  m.trees[1].step = {0.5e300, 0.8e300};
  expect_rejected(file_of(m), "scores of output 1 could reach 1.6e+300");
  m.trees[1].step = {0.5e300, 0.2e300};
  const Model at_the_limit = from_bytes(file_of(m));
  const std::vector<double> x = {0.0, 5.0, 1.0, -3.0, kNaN, 7.0};
  std::vector<double> s(4);
  decision_function(at_the_limit, MatrixView<double>::row_major(x.data(), 2, 3), s.data(), 1);
  for (double v : s) EXPECT_TRUE(std::isfinite(v) && std::isfinite(2 * v)) << v;
}

TEST(ModelFileLimits, GainsAreFiniteAndNonNegativeAndImportancesNeverOverflow) {
  RawModel m = base_model();
  m.trees[1].nodes[1].gain = -0.5;
  expect_rejected(file_of(m), "negative gain at node 1");
  m = base_model();  // the largest finite gains and steps still give importances that sum to 1
  m.trees[0].nodes[0].gain = std::numeric_limits<double>::max();
  m.trees[1].nodes[0].gain = std::numeric_limits<double>::max();
  m.trees[0].step = {0.4e300};
  m.trees[1].step = {0.5e300};
  const std::vector<double> imp = from_bytes(file_of(m)).feature_importances();
  double total = 0.0;
  for (double v : imp) {
    EXPECT_TRUE(std::isfinite(v) && v >= 0.0) << v;
    total += v;
  }
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_NEAR(imp[2] / imp[0], 0.4 / 0.5, 1e-12);  // gain x |step|_1 of the stump vs the deep tree's root
}

TEST(ModelFileHostile, LargestAllowedTreeLoads) {
  // A 511-node chain (every right child a leaf) is legal and must load and predict without recursion.
  RawModel m = base_model();
  RawTree chain;
  chain.step = {0.125};
  const std::uint32_t n = static_cast<std::uint32_t>(kMaxTreeNodes);
  chain.nodes.resize(n);
  for (std::uint32_t i = 0; i + 2 < n; i += 2) {
    chain.nodes[i] = RawNode{0, 0, 0, 0, i + 2, i + 1, static_cast<double>(i), 0.0};
    chain.nodes[i + 1].value = (i / 2) % 2 ? 1 : -1;
  }
  chain.nodes[n - 1].value = 1;
  m.trees.push_back(chain);
  const Model model = from_bytes(file_of(m));
  EXPECT_EQ(model.trees.back().depth(), 255);
  const std::vector<double> x = {-1.0, 0.0, 0.0};
  EXPECT_EQ(model.trees.back().output(x.data(), 1), 1);
}

}  // namespace
}  // namespace rebelboost

namespace rebelboost {
namespace {

// Version 3's cascade section: counts, classes and thresholds are checked like everything else.
TEST(ModelFileHostile, CascadeSection) {
  RawModel m = base_model();
  m.cascade_every = 1;
  m.cascade_thresholds = {0.5, 0.5};
  EXPECT_EQ(from_bytes(file_of(m)).cascade.thresholds, (std::vector<double>{0.5, 0.5}));
  Bytes b;  // every 1, 3 classes for a binary model
  b.put<std::uint32_t>(1).put<std::uint32_t>(3).put<std::uint64_t>(0);
  expect_rejected(file_of(payload_of(base_model(), 1) + b.str(), version(3)), "cascade for 3 classes");
  Bytes huge;  // 2^61 checkpoints
  huge.put<std::uint32_t>(1).put<std::uint32_t>(2).put<std::uint64_t>(std::uint64_t{1} << 61);
  expect_rejected(file_of(payload_of(base_model(), 1) + huge.str(), version(3)), "cascade checkpoint count");
  Bytes empty;  // no checkpoints, yet checked every 5 learners
  empty.put<std::uint32_t>(5).put<std::uint32_t>(2).put<std::uint64_t>(0);
  expect_rejected(file_of(payload_of(base_model(), 1) + empty.str(), version(3)), "empty cascade");
  m.cascade_thresholds = {std::nan(""), 0.5};
  expect_rejected(file_of(m), "cascade threshold 0");
  m.cascade_thresholds = {0.5, 0.5, 0.5, 0.5};  // a checkpoint at learner 2 of the 2 trees
  expect_rejected(file_of(m), "past the model's 2 learners");
  for (std::uint32_t v : {1u, 2u})  // earlier versions: no section, no cascade
    EXPECT_TRUE(from_bytes(file_of(base_model(), version(v))).cascade.empty());
}

// Version 4's surrogate g of REBEL: old files load as exponential; an unknown g, or a g other than the
// exponential for a binary model, is rejected; a REBEL model keeps its g through a round trip.
TEST(ModelFileHostile, SurrogateSection) {
  RawModel m = base_model();
  for (std::uint32_t v : {1u, 2u, 3u, 4u, 5u, kFormatVersion})
    EXPECT_EQ(from_bytes(file_of(m, version(v))).g, RebelG::kExponential);
  m.g = 1;
  expect_rejected(file_of(m), "surrogate (REBEL only)");
  m.g = 7;
  expect_rejected(file_of(m), "unknown REBEL surrogate g 7");
  expect_rejected(file_of(payload_of(base_model(), 3), version(4)), "truncated");  // a version 4 file without its g
  RawModel r = base_model();
  r.loss = 3;
  r.n_outputs = 2;
  r.bias = {0.25, -0.25};
  for (RawTree& t : r.trees) t.step = {t.step[0], -t.step[0]};
  for (std::uint32_t g : {1u, 2u}) {
    r.g = g;
    const std::string bytes = file_of(r);
    const Model loaded = from_bytes(bytes);
    EXPECT_EQ(loaded.g, static_cast<RebelG>(g));
    EXPECT_EQ(serialize(loaded), bytes);
  }
}

}  // namespace
}  // namespace rebelboost
