// The model file (layout in rebelboost/io.hpp; docs/design/model_format.md). Payload, all little-endian:
//   u32 loss, u32 n_features (d), u32 n_outputs (K), u32 learner family (version 1: reserved, 0 = trees)
//   f64[K] bias
//   u64 metadata length M, M bytes of metadata
//   trees (family 0):
//     u64 number of trees T, (version >= 5: u32 covers flag C (0 or 1), u32 zero,) then T times:
//       u32 number of nodes N, f64[K] step, then per node 32 bytes:
//         i32 feature, u8 nan_left, i8 value, u16 zero, u32 left, u32 right, f64 threshold, f64 gain
//       when C = 1: f64[N] node covers (Tree::cover)
//       version >= 6, regression models (loss 4) only: f64[N] leaf values (Tree::leaf_value)
//   similarities (family 1, version >= 2):
//     f64[d] feature mean, f64[d] feature scale
//     u64 number of anchors A, then A times: u64 training row, f64[d] standardised coordinates
//     u64 number of learners T, then T times: u32 kind, u32 anchor_i, u32 anchor_j, u32 zero, f64 tau, f64[K] step
//   hybrid (family 2, version >= 6): the trees as above, then the similarities as above, then
//     u64 number of learners T (trees + similarities), T times u32 kind (0 tree, 1 similarity): the order
//   version >= 3, after the learners: the soft cascade (Model::cascade; 0 checkpoints: none)
//     u32 every, u32 classes C (2 for binary models, else K), u64 checkpoints N, f64[N * C] thresholds
//   version >= 4, after the cascade: u32 REBEL surrogate g (Model::g: 0 exponential, 1 logistic, 2 squared)
// Version 1 (trees only), version 2 (no cascade), version 3 (no g: exponential), version 4 (no covers) and
// version 5 (no regression models, no hybrids) files still load.
#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/atomic_file.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"

namespace rebelboost {

namespace {

constexpr char kMagic[8] = {'R', 'B', 'L', 'B', 'O', 'O', 'S', 'T'};
constexpr std::size_t kHeaderSize = 24;
constexpr std::size_t kNodeSize = 32;
constexpr std::size_t kSimilaritySize = 24;  // without its step

std::uint64_t fnv1a(const unsigned char* data, std::size_t n) {
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 1099511628211ull;
  }
  return h;
}

class Writer {
 public:
  template <typename U>
  void put(U v) {  // little-endian, whatever the host order
    unsigned char b[sizeof(U)];
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(U));
    for (std::size_t i = 0; i < sizeof(U); ++i) b[i] = static_cast<unsigned char>(bits >> (8 * i));
    out_.append(reinterpret_cast<const char*>(b), sizeof(U));
  }
  void bytes(const std::string& s) { out_.append(s); }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(const unsigned char* data, std::size_t size) : data_(data), size_(size) {}

  template <typename U>
  U get(const char* what) {
    need(sizeof(U), what);
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < sizeof(U); ++i) bits |= static_cast<std::uint64_t>(data_[pos_ + i]) << (8 * i);
    pos_ += sizeof(U);
    U v;
    std::memcpy(&v, &bits, sizeof(U));
    return v;
  }
  std::string bytes(std::size_t n, const char* what) {
    need(n, what);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  // Throws unless `count` records of `record_size` bytes can still follow: bounds every allocation.
  void need_records(std::uint64_t count, std::size_t record_size, const char* what) const {
    if (record_size != 0 && count > remaining() / record_size)
      throw ModelFileError(std::string("corrupt model file: ") + what + " count " + std::to_string(count) +
                           " exceeds the file size");
  }
  std::size_t remaining() const { return size_ - pos_; }

 private:
  void need(std::size_t n, const char* what) const {
    if (n > remaining()) throw ModelFileError(std::string("truncated model file: ends inside ") + what);
  }
  const unsigned char* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace

namespace {

void write_trees(Writer& p, const Model& model) {
  p.put<std::uint64_t>(model.trees.size());
  const bool covers = !model.trees.empty() && !model.trees[0].cover.empty();
  p.put<std::uint32_t>(covers ? 1 : 0);
  p.put<std::uint32_t>(0);
  for (const Tree& tree : model.trees) {
    p.put<std::uint32_t>(static_cast<std::uint32_t>(tree.nodes.size()));
    for (double v : tree.step) p.put<double>(v);
    for (const Node& n : tree.nodes) {
      p.put<std::int32_t>(n.feature);
      p.put<std::uint8_t>(n.nan_left);
      p.put<std::int8_t>(n.value);
      p.put<std::uint16_t>(0);
      p.put<std::uint32_t>(n.left);
      p.put<std::uint32_t>(n.right);
      p.put<double>(n.threshold);
      p.put<double>(n.gain);
    }
    for (double c : tree.cover) p.put<double>(c);
    for (double v : tree.leaf_value) p.put<double>(v);
  }
}

void write_similarities(Writer& p, const Model& model) {
  for (double v : model.feature_mean) p.put<double>(v);
  for (double v : model.feature_scale) p.put<double>(v);
  const std::size_t d = model.n_features;
  p.put<std::uint64_t>(model.anchor_rows.size());
  for (std::size_t a = 0; a < model.anchor_rows.size(); ++a) {
    p.put<std::uint64_t>(model.anchor_rows[a]);
    for (std::size_t c = 0; c < d; ++c) p.put<double>(model.anchors[a * d + c]);
  }
  p.put<std::uint64_t>(model.similarities.size());
  for (const Similarity& s : model.similarities) {
    p.put<std::uint32_t>(static_cast<std::uint32_t>(s.kind));
    p.put<std::uint32_t>(s.anchor_i);
    p.put<std::uint32_t>(s.anchor_j);
    p.put<std::uint32_t>(0);
    p.put<double>(s.tau);
    for (double v : s.step) p.put<double>(v);
  }
}

void read_trees(Reader& r, Model& m, std::uint32_t version) {
  const auto n_trees = r.get<std::uint64_t>("tree count");
  bool covers = false;
  if (version >= 5) {
    const auto flag = r.get<std::uint32_t>("covers flag");
    if (flag > 1) throw ModelFileError("corrupt model file: covers flag " + std::to_string(flag) + " (0 or 1)");
    if (r.get<std::uint32_t>("covers flag") != 0) throw ModelFileError("corrupt model file: non-zero padding after the covers flag");
    covers = flag == 1;
  }
  const bool leaf_values = version >= 6 && m.is_regression();
  const std::size_t node_size = kNodeSize + (covers ? 8 : 0) + (leaf_values ? 8 : 0);
  const std::size_t min_tree = 4 + 8 * static_cast<std::size_t>(m.n_outputs) + node_size;
  r.need_records(n_trees, min_tree, "tree");
  m.trees.resize(static_cast<std::size_t>(n_trees));
  for (Tree& tree : m.trees) {
    const auto n_nodes = r.get<std::uint32_t>("tree");
    if (n_nodes == 0 || n_nodes > kMaxTreeNodes)
      throw ModelFileError("corrupt model file: a tree with " + std::to_string(n_nodes) + " nodes");
    r.need_records(m.n_outputs, 8, "step");
    tree.step.resize(m.n_outputs);
    for (double& v : tree.step) v = r.get<double>("step");
    r.need_records(n_nodes, node_size, "node");
    tree.nodes.resize(n_nodes);
    for (Node& n : tree.nodes) {
      n.feature = r.get<std::int32_t>("node");
      n.nan_left = r.get<std::uint8_t>("node");
      n.value = r.get<std::int8_t>("node");
      if (r.get<std::uint16_t>("node") != 0) throw ModelFileError("corrupt model file: non-zero padding in a node");
      n.left = r.get<std::uint32_t>("node");
      n.right = r.get<std::uint32_t>("node");
      n.threshold = r.get<double>("node");
      n.gain = r.get<double>("node");
    }
    if (covers) {
      tree.cover.resize(n_nodes);
      for (double& c : tree.cover) c = r.get<double>("covers");
    }
    if (leaf_values) {
      tree.leaf_value.resize(n_nodes);
      for (double& v : tree.leaf_value) v = r.get<double>("leaf values");
    }
  }
}

void read_similarities(Reader& r, Model& m) {
  const std::size_t d = m.n_features;
  r.need_records(2 * static_cast<std::uint64_t>(d), 8, "standardisation");
  m.feature_mean.resize(d);
  m.feature_scale.resize(d);
  for (double& v : m.feature_mean) v = r.get<double>("feature mean");
  for (double& v : m.feature_scale) v = r.get<double>("feature scale");
  const auto n_anchors = r.get<std::uint64_t>("anchor count");
  r.need_records(n_anchors, 8 + 8 * d, "anchor");
  m.anchor_rows.resize(static_cast<std::size_t>(n_anchors));
  m.anchors.resize(static_cast<std::size_t>(n_anchors) * d);
  for (std::size_t a = 0; a < m.anchor_rows.size(); ++a) {
    m.anchor_rows[a] = r.get<std::uint64_t>("anchor");
    for (std::size_t c = 0; c < d; ++c) m.anchors[a * d + c] = r.get<double>("anchor");
  }
  const auto n_learners = r.get<std::uint64_t>("similarity count");
  r.need_records(n_learners, kSimilaritySize + 8 * static_cast<std::size_t>(m.n_outputs), "similarity");
  m.similarities.resize(static_cast<std::size_t>(n_learners));
  for (Similarity& s : m.similarities) {
    s.kind = static_cast<Similarity::Kind>(r.get<std::uint32_t>("similarity"));
    s.anchor_i = r.get<std::uint32_t>("similarity");
    s.anchor_j = r.get<std::uint32_t>("similarity");
    if (r.get<std::uint32_t>("similarity") != 0) throw ModelFileError("corrupt model file: non-zero padding in a similarity");
    s.tau = r.get<double>("similarity");
    s.step.resize(m.n_outputs);
    for (double& v : s.step) v = r.get<double>("step");
  }
}

void write_order(Writer& p, const Model& model) {
  p.put<std::uint64_t>(model.order.size());
  for (const LearnerRef& r : model.order) p.put<std::uint32_t>(static_cast<std::uint32_t>(r.kind));
}

// The kinds in order; each learner's index counts the earlier ones of its kind (Model::validate checks the
// totals against the trees and similarities read before).
void read_order(Reader& r, Model& m) {
  const auto n = r.get<std::uint64_t>("hybrid order");
  r.need_records(n, 4, "hybrid learner");
  m.order.resize(static_cast<std::size_t>(n));
  std::uint32_t n_trees = 0, n_similarities = 0;
  for (LearnerRef& ref : m.order) {
    const auto kind = r.get<std::uint32_t>("hybrid order");
    if (kind > 1) throw ModelFileError("corrupt model file: hybrid learner of unknown kind " + std::to_string(kind));
    ref.kind = static_cast<LearnerKind>(kind);
    ref.index = kind == 0 ? n_trees++ : n_similarities++;
  }
}

void write_cascade(Writer& p, const Model& model) {
  const std::size_t C = model.n_classes();
  p.put<std::uint32_t>(model.cascade.every);
  p.put<std::uint32_t>(static_cast<std::uint32_t>(C));
  p.put<std::uint64_t>(model.cascade.thresholds.size() / C);
  for (double v : model.cascade.thresholds) p.put<double>(v);
}

void read_cascade(Reader& r, Model& m) {
  m.cascade.every = r.get<std::uint32_t>("cascade");
  const auto C = r.get<std::uint32_t>("cascade");
  if (C != m.n_classes())
    throw ModelFileError("corrupt model file: cascade for " + std::to_string(C) + " classes in a model of " +
                         std::to_string(m.n_classes()));
  const auto n = r.get<std::uint64_t>("cascade");
  r.need_records(n, 8 * static_cast<std::size_t>(C), "cascade checkpoint");
  m.cascade.thresholds.resize(static_cast<std::size_t>(n) * C);
  for (double& v : m.cascade.thresholds) v = r.get<double>("cascade thresholds");
  if (n == 0 && m.cascade.every != 0)
    throw ModelFileError("corrupt model file: empty cascade checked every " + std::to_string(m.cascade.every));
}

}  // namespace

std::string serialize(const Model& model) {
  model.validate();
  Writer p;
  p.put<std::uint32_t>(static_cast<std::uint32_t>(model.loss));
  p.put<std::uint32_t>(model.n_features);
  p.put<std::uint32_t>(model.n_outputs);
  p.put<std::uint32_t>(static_cast<std::uint32_t>(model.learner));
  for (double v : model.bias) p.put<double>(v);
  p.put<std::uint64_t>(model.metadata.size());
  p.bytes(model.metadata);
  if (model.learner != LearnerKind::kSimilarity) write_trees(p, model);
  if (model.learner != LearnerKind::kTree) write_similarities(p, model);
  if (model.learner == LearnerKind::kHybrid) write_order(p, model);
  write_cascade(p, model);
  p.put<std::uint32_t>(static_cast<std::uint32_t>(model.g));
  const std::string& payload = p.str();
  Writer file;
  file.bytes(std::string(kMagic, sizeof(kMagic)));
  file.put<std::uint32_t>(kFormatVersion);
  file.put<std::uint32_t>(0);
  file.put<std::uint64_t>(payload.size());
  file.bytes(payload);
  file.put<std::uint64_t>(fnv1a(reinterpret_cast<const unsigned char*>(payload.data()), payload.size()));
  return std::move(file.str());
}

Model deserialize(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  if (size < sizeof(kMagic) || std::memcmp(bytes, kMagic, sizeof(kMagic)) != 0)
    throw ModelFileError("not a rebelboost model file (bad magic bytes)");
  if (size < kHeaderSize + 8) throw ModelFileError("truncated model file: header incomplete");
  Reader header(bytes + sizeof(kMagic), kHeaderSize - sizeof(kMagic));
  const auto version = header.get<std::uint32_t>("header");
  if (version < 1 || version > kFormatVersion)
    throw ModelFileError("unsupported model file format version " + std::to_string(version) +
                         " (this build reads versions 1 to " + std::to_string(kFormatVersion) + ")");
  if (header.get<std::uint32_t>("header") != 0) throw ModelFileError("corrupt model file: non-zero reserved header field");
  const auto payload_size = header.get<std::uint64_t>("header");
  if (payload_size != size - kHeaderSize - 8) {
    if (payload_size > size - kHeaderSize - 8)
      throw ModelFileError("truncated model file: header announces " + std::to_string(payload_size) +
                           " payload bytes, file holds " + std::to_string(size - kHeaderSize - 8));
    throw ModelFileError("corrupt model file: " + std::to_string(size - kHeaderSize - 8 - payload_size) +
                         " unexpected trailing bytes");
  }
  const unsigned char* payload = bytes + kHeaderSize;
  Reader trailer(payload + payload_size, 8);
  if (trailer.get<std::uint64_t>("checksum") != fnv1a(payload, payload_size))
    throw ModelFileError("corrupt model file: checksum mismatch");

  Reader r(payload, payload_size);
  Model m;
  const auto loss = r.get<std::uint32_t>("header fields");
  m.loss = static_cast<LossKind>(loss);
  m.n_features = r.get<std::uint32_t>("header fields");
  m.n_outputs = r.get<std::uint32_t>("header fields");
  const auto learner = r.get<std::uint32_t>("header fields");
  if (version == 1 && learner != 0) throw ModelFileError("corrupt model file: non-zero reserved field");
  const auto last = version >= 6 ? LearnerKind::kHybrid : LearnerKind::kSimilarity;
  if (learner > static_cast<std::uint32_t>(last))
    throw ModelFileError("corrupt model file: unknown learner family " + std::to_string(learner) + " for format version " +
                         std::to_string(version));
  m.learner = static_cast<LearnerKind>(learner);
  if (m.n_outputs == 0) throw ModelFileError("corrupt model file: 0 outputs");
  if (m.n_outputs > kMaxClasses)  // checked before the per-learner step vectors are allocated
    throw ModelFileError("corrupt model file: " + std::to_string(m.n_outputs) +
                         " outputs, more than the limit kMaxClasses = " + std::to_string(kMaxClasses));
  r.need_records(m.n_outputs, 8, "bias");
  m.bias.resize(m.n_outputs);
  for (double& v : m.bias) v = r.get<double>("bias");
  const auto meta_len = r.get<std::uint64_t>("metadata length");
  r.need_records(meta_len, 1, "metadata byte");
  m.metadata = r.bytes(static_cast<std::size_t>(meta_len), "metadata");
  if (m.learner != LearnerKind::kSimilarity) read_trees(r, m, version);
  if (m.learner != LearnerKind::kTree) read_similarities(r, m);
  if (m.learner == LearnerKind::kHybrid) read_order(r, m);
  if (version >= 3) read_cascade(r, m);
  if (version >= 4) m.g = static_cast<RebelG>(r.get<std::uint32_t>("surrogate g"));  // checked by validate()
  if (r.remaining() != 0)
    throw ModelFileError(std::string("corrupt model file: unexpected bytes after the last ") +
                         (version >= 3 ? "section" : m.learner == LearnerKind::kTree ? "tree" : "similarity"));
  m.validate();
  return m;
}

void save_model(const Model& model, const std::string& path) { io::write_atomically(path, serialize(model)); }

Model load_model(const std::string& path) {
  const int fd = io::open_regular(path, "model file");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw IoError("cannot read model file '" + path + "': " + std::strerror(err));
  }
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // a file that shrank while reading is caught as truncated below
    got += static_cast<std::size_t>(n);
  }
  const int err = errno;
  ::close(fd);
  if (got < bytes.size() && err != 0 && got == 0)
    throw IoError("cannot read model file '" + path + "': " + std::strerror(err));
  bytes.resize(got);
  return deserialize(bytes.data(), bytes.size());
}

}  // namespace rebelboost
