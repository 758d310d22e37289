// A node's rows cut into the schedule's segments (see mass_segments.hpp).
#include "tree/mass_segments.hpp"

#include <algorithm>
#include <cmath>

namespace rebelboost::tree {

namespace {

// A row's rank: the binary exponent of its mass (0..63, the heaviest rows first), then the weightless rows.
constexpr int kWeightless = 64;  // mass 0, t != 0
constexpr int kLeftOut = 65;
constexpr int kRanks = 65;       // ranks that list rows

int rank_of(std::uint32_t r, const std::int64_t* t, const std::int64_t* mass, const std::uint8_t* skip) {
  if (skip && skip[r]) return kLeftOut;
  const std::int64_t m = mass[r];
  if (m == 0) return t[r] != 0 ? kWeightless : kLeftOut;
  return 63 - __builtin_clzll(static_cast<std::uint64_t>(m));
}

// The ranks in reading order.
constexpr int rank_at(int k) { return k < 64 ? 63 - k : kWeightless; }

// The rows per rank, their mass, and where each rank starts in the reading order.
struct RankTable {
  std::size_t count[kRanks] = {};
  std::int64_t mass[kRanks] = {};
  std::size_t start[kRanks] = {};
  std::size_t listed = 0;
  std::int64_t total = 0;

  void finish() {
    for (int k = 0; k < kRanks; ++k) {
      const int r = rank_at(k);
      start[r] = listed;
      listed += count[r];
      total += mass[r];
    }
  }

  // The fewest rows, in reading order, that hold about `target` of the mass: inside a rank, rows are
  // counted at the rank's mean mass.
  std::size_t position_of(double target) const {
    double before = 0.0;
    for (int k = 0; k < kRanks; ++k) {
      const int r = rank_at(k);
      const double m = static_cast<double>(mass[r]);
      if (count[r] > 0 && before + m >= target) {
        const double share = m > 0.0 ? (target - before) / m : 0.0;
        const auto rows = static_cast<std::size_t>(std::ceil(std::max(share, 0.0) * static_cast<double>(count[r])));
        return start[r] + std::min(rows, count[r]);
      }
      before += m;
    }
    return listed;
  }
};

// The rows and mass per rank (kLeftOut's are not kept), in 4 interleaved tables: consecutive rows mostly
// share a rank, and one table's next add to a rank would wait for its last one (measured: with pass 2 reading
// the stored ranks, the two passes took 0.46 ms instead of 0.57 ms per tree of integer spikes, 100 000 rows).
RankTable count_ranks(const std::uint8_t* rank, const std::uint32_t* rows, std::size_t n, const std::int64_t* mass) {
  std::size_t count[4][kRanks + 1] = {};
  std::int64_t rank_mass[4][kRanks + 1] = {};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (std::size_t u = 0; u < 4; ++u) {
      ++count[u][rank[i + u]];
      rank_mass[u][rank[i + u]] += mass[rows[i + u]];
    }
  for (; i < n; ++i) {
    ++count[0][rank[i]];
    rank_mass[0][rank[i]] += mass[rows[i]];
  }
  RankTable ranks;
  for (int k = 0; k < kRanks; ++k)
    for (int u = 0; u < 4; ++u) {
      ranks.count[k] += count[u][k];
      ranks.mass[k] += rank_mass[u][k];
    }
  return ranks;
}

// Subset 0 and the chunks' cuts (as chunk_bounds in quick_prune.hpp, on the estimated positions).
std::vector<std::size_t> cuts(const RankTable& ranks, const SegmentOptions& options) {
  const double total = static_cast<double>(ranks.total);
  const double base = options.first_empty ? 0.0 : options.eta * total;
  std::vector<std::size_t> bounds{0, options.first_empty ? 0 : ranks.position_of(base)};
  for (int j = 1; j <= options.n_chunks; ++j) {
    const std::size_t m = j == options.n_chunks ? ranks.listed : ranks.position_of(base + (total - base) * j / options.n_chunks);
    if (m > bounds.back()) bounds.push_back(m);
  }
  if (bounds.back() != ranks.listed) bounds.push_back(ranks.listed);
  return bounds;
}

}  // namespace

void segment_by_mass(const std::uint32_t* rows, std::size_t n, const std::int64_t* s, const std::int64_t* t,
                     const std::int64_t* mass, const std::uint8_t* skip, const SegmentOptions& options,
                     MassSegments& out) {
  // Pass 1: each row's rank (kept for pass 2), then the rows and mass per rank.
  out.rank.resize(n);
  std::uint8_t* rank = out.rank.data();
  for (std::size_t i = 0; i < n; ++i) rank[i] = static_cast<std::uint8_t>(rank_of(rows[i], t, mass, skip));
  RankTable ranks = count_ranks(rank, rows, n, mass);
  ranks.finish();
  out.bounds = cuts(ranks, options);
  const std::size_t n_segments = out.bounds.size() - 1;
  // Each listed row's place: its rank's next position in reading order gives its segment; inside the
  // segment it goes to the front, or with split_sign and s < 0 to the back.
  std::size_t next[kRanks], segment[kRanks];
  for (int k = 0; k < kRanks; ++k) {
    next[k] = ranks.start[k];
    segment[k] = 0;
  }
  std::vector<std::size_t> front(out.bounds.begin(), out.bounds.end() - 1), back(out.bounds.begin() + 1, out.bounds.end());
  std::vector<std::int64_t> segment_mass(n_segments, 0);
  out.rows.resize(ranks.listed);
  out.s.resize(ranks.listed);
  out.t.resize(options.with_t ? ranks.listed : 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t r = rows[i];
    const int k = rank[i];
    if (k == kLeftOut) continue;
    const std::size_t position = next[k]++;
    std::size_t& j = segment[k];
    while (position >= out.bounds[j + 1]) ++j;
    const std::size_t at = options.split_sign && s[r] < 0 ? --back[j] : front[j]++;
    out.rows[at] = r;
    out.s[at] = s[r] + options.s_offset;
    if (options.with_t) out.t[at] = t[r];
    segment_mass[j] += mass[r];
  }
  out.second_class = front;
  out.mass_before.assign(1, options.mass_before_first);
  for (std::size_t j = 0; j < n_segments; ++j) out.mass_before.push_back(out.mass_before.back() + segment_mass[j]);
}

}  // namespace rebelboost::tree
