// The 16-lane kernel body, instantiated once per instruction set by kernels_<isa>.cpp with its own Ops.
//
// Included only by those files. Everything here has internal linkage and uses no std templates, so code
// compiled with AVX-512 flags can never be picked by the linker for a caller on another CPU.
//
// Ops provides, for 16 contiguous values x of type T (float or double) and a threshold:
//   greater(x, thr)   bit j set iff x[j] > thr            (ordered: NaN gives 0)
//   not_le(x, thr)    bit j set iff !(x[j] <= thr)         (unordered: NaN gives 1)
//   add(acc, a, neg)  acc[j] += (bit j of neg) ? -a : a    for j < 16
//   kMasks            true: trees up to kMaxMaskDepth compare all splits at once; false: every tree is
//                     walked per lane (for plain C++, where 16 scalar compares per split cost too much)
#pragma once

#include <cstddef>
#include <cstdint>

#include "predict/forest_arrays.hpp"
#include "predict/kernels.hpp"

namespace rebelboost::predict {
namespace {

constexpr std::uint32_t kAllLanes = 0xFFFFu;

// The per-tree functions must melt into the loop over trees (a call per tree costs as much as the tree).
#if defined(__GNUC__) || defined(__clang__)
#define REBELBOOST_KERNEL_INLINE inline __attribute__((always_inline))
#else
#define REBELBOOST_KERNEL_INLINE inline
#endif

// Lanes that split i sends right. Without NaN in the group, "right" is x > threshold; with NaN, a split
// sending NaN left needs the ordered test and one sending NaN right the unordered one.
template <class Ops, typename T, bool kNaN>
REBELBOOST_KERNEL_INLINE std::uint32_t right_lanes(const ForestArrays& f, const T* Xt, std::size_t i) {
  const T* x = Xt + static_cast<std::size_t>(f.slot[i]) * kLanes;
  const T thr = thresholds_for(f, Xt)[i];
  if (!kNaN || f.nan_left[i]) return Ops::greater(x, thr);
  return Ops::not_le(x, thr);
}

// All 2^D - 1 splits of a complete tree compared at once, then combined bottom-up: v[i] is the mask of
// lanes whose leaf below node i is -1.
template <class Ops, typename T, bool kNaN, int D>
REBELBOOST_KERNEL_INLINE std::uint32_t mask_tree(const ForestArrays& f, const T* Xt, std::size_t t) {
  constexpr int kSplits = (1 << D) - 1;
  const std::size_t s0 = f.first_split[t];
  const std::uint64_t leaves = f.leaf_neg[f.leaf_word[t]];
  std::uint32_t r[kSplits];
  for (int i = 0; i < kSplits; ++i) r[i] = right_lanes<Ops, T, kNaN>(f, Xt, s0 + static_cast<std::size_t>(i));
  std::uint32_t v[1 << D];
  for (int j = 0; j < (1 << D); ++j) v[j] = ((leaves >> j) & 1u) ? kAllLanes : 0u;
  for (int level = D - 1; level >= 0; --level)
    for (int i = 0; i < (1 << level); ++i) {
      const std::uint32_t go_right = r[(1 << level) - 1 + i];
      v[i] = (go_right & v[2 * i + 1]) | (~go_right & v[2 * i]);
    }
  return v[0] & kAllLanes;
}

// Deeper complete trees: a level-order walk, the 16 lanes side by side level by level (independent loads
// overlap) and without a data-dependent branch.
template <typename T>
inline std::uint32_t walk_complete(const ForestArrays& f, const T* Xt, std::size_t t) {
  const int d = f.depth[t];
  const std::size_t s0 = f.first_split[t];
  const std::size_t first_leaf = (std::size_t{1} << d) - 1;
  const std::uint64_t* leaves = f.leaf_neg + f.leaf_word[t];
  const T* thr = thresholds_for(f, Xt) + s0;
  const std::uint8_t* nan_left = f.nan_left + s0;
  const std::uint32_t* slot = f.slot + s0;
  std::size_t i[kLanes] = {};
  for (int level = 0; level < d; ++level)
    for (std::size_t j = 0; j < kLanes; ++j) {
      const T x = Xt[static_cast<std::size_t>(slot[i[j]]) * kLanes + j];
      const std::size_t left = static_cast<std::size_t>(x <= thr[i[j]]) | (static_cast<std::size_t>(x != x) & nan_left[i[j]]);
      i[j] = 2 * i[j] + 2 - left;
    }
  std::uint32_t neg = 0;
  for (std::size_t j = 0; j < kLanes; ++j) {
    const std::size_t leaf = i[j] - first_leaf;
    neg |= static_cast<std::uint32_t>((leaves[leaf / 64] >> (leaf % 64)) & 1u) << j;
  }
  return neg;
}

// Trees kept as their own nodes: a node walk per lane.
template <typename T>
inline std::uint32_t walk_nodes(const ForestArrays& f, const T* Xt, std::size_t t) {
  const std::size_t s0 = f.first_split[t];
  const T* thr = thresholds_for(f, Xt) + s0;
  std::uint32_t neg = 0;
  for (std::size_t j = 0; j < kLanes; ++j) {
    std::size_t i = 0;
    while (f.node_value[s0 + i] == 0) {
      const T x = Xt[static_cast<std::size_t>(f.slot[s0 + i]) * kLanes + j];
      i = (x <= thr[i] || (x != x && f.nan_left[s0 + i])) ? f.left[s0 + i] : f.right[s0 + i];
    }
    neg |= static_cast<std::uint32_t>(f.node_value[s0 + i] < 0) << j;
  }
  return neg;
}

// Calls sink(t, mask of the lanes for which tree t outputs -1) for t in [t_begin, t_end), in order. Trees
// come in runs of one depth and kind, so the loop inside a run is specialised (no dispatch per tree).
template <class Ops, typename T, bool kNaN, typename Sink>
REBELBOOST_KERNEL_INLINE void for_each_tree(const ForestArrays& f, const T* Xt, std::size_t t_begin,
                                            std::size_t t_end, Sink&& sink) {
  for (std::size_t t = t_begin; t < t_end;) {
    const std::size_t end = f.run_end[t] < t_end ? f.run_end[t] : t_end;
    if (f.walk[t]) {
      for (; t < end; ++t) sink(t, walk_nodes(f, Xt, t));
      continue;
    }
    if (!Ops::kMasks && f.depth[t] > 0) {
      for (; t < end; ++t) sink(t, walk_complete(f, Xt, t));
      continue;
    }
    switch (f.depth[t]) {
      case 0:
        for (; t < end; ++t) sink(t, (f.leaf_neg[f.leaf_word[t]] & 1u) ? kAllLanes : 0u);
        break;
      case 1:
        for (; t < end; ++t) sink(t, mask_tree<Ops, T, kNaN, 1>(f, Xt, t));
        break;
      case 2:
        for (; t < end; ++t) sink(t, mask_tree<Ops, T, kNaN, 2>(f, Xt, t));
        break;
      case 3:
        for (; t < end; ++t) sink(t, mask_tree<Ops, T, kNaN, 3>(f, Xt, t));
        break;
      case 4:
        for (; t < end; ++t) sink(t, mask_tree<Ops, T, kNaN, 4>(f, Xt, t));
        break;
      case 5:
        for (; t < end; ++t) sink(t, mask_tree<Ops, T, kNaN, 5>(f, Xt, t));
        break;
      case 6:
        for (; t < end; ++t) sink(t, mask_tree<Ops, T, kNaN, 6>(f, Xt, t));
        break;
      default:
        for (; t < end; ++t) sink(t, walk_complete(f, Xt, t));
    }
  }
}

// Regression trees (real leaves): leaf[j] = the leaf lane j reaches in tree t (complete trees: its index
// among the 2^d leaves; node-walk trees: its node). Shallow complete trees compare all splits at once and
// follow each lane's bits down; deeper ones are walked per lane.
template <class Ops, typename T, bool kNaN>
REBELBOOST_KERNEL_INLINE void tree_leaves(const ForestArrays& f, const T* Xt, std::size_t t, std::uint32_t* leaf) {
  const std::size_t s0 = f.first_split[t];
  const T* thr = thresholds_for(f, Xt) + s0;
  if (f.walk[t]) {
    for (std::size_t j = 0; j < kLanes; ++j) {
      std::size_t i = 0;
      while (f.node_value[s0 + i] == 0) {
        const T x = Xt[static_cast<std::size_t>(f.slot[s0 + i]) * kLanes + j];
        i = (x <= thr[i] || (x != x && f.nan_left[s0 + i])) ? f.left[s0 + i] : f.right[s0 + i];
      }
      leaf[j] = static_cast<std::uint32_t>(i);
    }
    return;
  }
  const int d = f.depth[t];
  const std::uint32_t first_leaf = (1u << d) - 1;
  if (Ops::kMasks && d <= 6) {
    std::uint32_t r[63];
    for (std::uint32_t i = 0; i < first_leaf; ++i) r[i] = right_lanes<Ops, T, kNaN>(f, Xt, s0 + i);
    for (std::size_t j = 0; j < kLanes; ++j) {
      std::uint32_t i = 0;
      for (int level = 0; level < d; ++level) i = 2 * i + 1 + ((r[i] >> j) & 1u);
      leaf[j] = i - first_leaf;
    }
    return;
  }
  for (std::size_t j = 0; j < kLanes; ++j) {
    std::size_t i = 0;
    for (int level = 0; level < d; ++level) {
      const T x = Xt[static_cast<std::size_t>(f.slot[s0 + i]) * kLanes + j];
      i = (x <= thr[i] || (x != x && f.nan_left[s0 + i])) ? 2 * i + 1 : 2 * i + 2;
    }
    leaf[j] = static_cast<std::uint32_t>(i - first_leaf);
  }
}

// acc[j] += f_t(x_j) a_t for regression trees (K = 1), in learner order.
template <class Ops, typename T, bool kNaN>
void accumulate_real(const ForestArrays& f, const T* Xt, std::size_t t_begin, std::size_t t_end, double* acc) {
  double a[kLanes];
  std::uint32_t leaf[kLanes];
  for (std::size_t j = 0; j < kLanes; ++j) a[j] = acc[j];
  for (std::size_t t = t_begin; t < t_end; ++t) {
    tree_leaves<Ops, T, kNaN>(f, Xt, t, leaf);
    const double* v = f.leaf_value + f.leaf_first[t];
    for (std::size_t j = 0; j < kLanes; ++j) a[j] += v[leaf[j]];
  }
  for (std::size_t j = 0; j < kLanes; ++j) acc[j] = a[j];
}

template <class Ops, typename T, bool kNaN>
void accumulate_impl(const ForestArrays& f, const T* Xt, std::size_t t_begin, std::size_t t_end, double* acc) {
  const std::size_t K = f.n_outputs;
  if (f.leaf_value != nullptr) return accumulate_real<Ops, T, kNaN>(f, Xt, t_begin, t_end, acc);
  if (K == 1) {  // binary models: the 16 scores stay in registers across trees
    double a[kLanes];
    for (std::size_t j = 0; j < kLanes; ++j) a[j] = acc[j];
    for_each_tree<Ops, T, kNaN>(f, Xt, t_begin, t_end,
                                [&](std::size_t t, std::uint32_t neg) { Ops::add(a, f.steps[t], neg); });
    for (std::size_t j = 0; j < kLanes; ++j) acc[j] = a[j];
    return;
  }
  for_each_tree<Ops, T, kNaN>(f, Xt, t_begin, t_end, [&](std::size_t t, std::uint32_t neg) {
    const double* step = f.steps + t * K;
    for (std::size_t k = 0; k < K; ++k) Ops::add(acc + k * kLanes, step[k], neg);
  });
}

template <class Ops, typename T>
void accumulate(const ForestArrays& f, const T* Xt, bool has_nan, std::size_t t_begin, std::size_t t_end,
                double* acc) {
  if (has_nan)
    accumulate_impl<Ops, T, true>(f, Xt, t_begin, t_end, acc);
  else
    accumulate_impl<Ops, T, false>(f, Xt, t_begin, t_end, acc);
}

template <class Ops, typename T>
void outputs(const ForestArrays& f, const T* Xt, bool has_nan, std::size_t t_begin, std::size_t t_end,
             std::int8_t* out, std::ptrdiff_t stride, std::size_t n_lanes) {
  const auto write = [&](std::size_t t, std::uint32_t neg) {
    for (std::size_t j = 0; j < n_lanes; ++j)
      out[static_cast<std::ptrdiff_t>(j) * stride + static_cast<std::ptrdiff_t>(t - t_begin)] = ((neg >> j) & 1u) ? -1 : 1;
  };
  if (has_nan)
    for_each_tree<Ops, T, true>(f, Xt, t_begin, t_end, write);
  else
    for_each_tree<Ops, T, false>(f, Xt, t_begin, t_end, write);
}

// Lane-inner loops without branches, which the compiler turns into compares and blends of whole registers.
void leaders(const double* acc, std::size_t K, LaneLeaders& out) {
  for (std::size_t j = 0; j < kLanes; ++j) {
    const double a = acc[j], b = acc[kLanes + j];
    const bool swap = b > a;
    out.top[j] = swap ? b : a;
    out.runner[j] = swap ? a : b;
    out.bottom[j] = swap ? a : b;
    out.lead[j] = swap ? 1 : 0;
    out.second[j] = swap ? 0 : 1;
    const double fa = a < 0 ? -a : a, fb = b < 0 ? -b : b;
    out.largest[j] = fa > fb ? fa : fb;
  }
  for (std::size_t k = 2; k < K; ++k)
    for (std::size_t j = 0; j < kLanes; ++j) {
      const double v = acc[k * kLanes + j], fv = v < 0 ? -v : v;
      const bool new_top = v > out.top[j], new_second = !new_top && v > out.runner[j];
      out.second[j] = new_top ? out.lead[j] : (new_second ? static_cast<std::int32_t>(k) : out.second[j]);
      out.runner[j] = new_top ? out.top[j] : (new_second ? v : out.runner[j]);
      out.lead[j] = new_top ? static_cast<std::int32_t>(k) : out.lead[j];
      out.top[j] = new_top ? v : out.top[j];
      out.largest[j] = fv > out.largest[j] ? fv : out.largest[j];
      out.bottom[j] = v < out.bottom[j] ? v : out.bottom[j];
    }
}

// BinaryTest on the open lanes of scores p[j]: the mask of those leaving, and of those leaving with class 1.
// Each comparison a > b (a <= b) is made as a - b > 0 (a - b <= 0), which has the same answer for finite a
// and b (a rounded difference keeps its sign and is 0 only when a = b), so the masks come from the Ops'
// 16-lane compares; NaN thresholds compare false, as in StopRule::decide.
template <class Ops>
REBELBOOST_KERNEL_INLINE std::uint32_t decide_binary(const double* p, const BinaryTest& test, std::uint32_t open,
                                                     std::uint32_t& one) {
  // No lane can leave while every |p| is at most `remaining` (the exact bound needs |p| - remaining above a
  // margin >= 0) and below both thresholds (the cascade needs |p| >= theta): one max over the lanes instead
  // of the four tests (most checkpoints decide nothing). NaN thresholds compare false: the tests run.
  double largest = 0.0;
  for (std::size_t j = 0; j < kLanes; ++j) {
    const double fv = p[j] < 0 ? -p[j] : p[j];
    largest = fv > largest ? fv : largest;
  }
  if (largest <= test.remaining && largest < test.theta0 && largest < test.theta1) {
    one = 0;
    return 0;
  }
  double up[kLanes], down[kLanes], to_one[kLanes], to_zero[kLanes];
  for (std::size_t j = 0; j < kLanes; ++j) {
    const double v = p[j], fv = v < 0 ? -v : v, margin = test.margin_scale * (2.0 * fv + test.mass);
    up[j] = (v - test.remaining) - margin;      // > 0: v - remaining > margin
    down[j] = -margin - (v + test.remaining);   // > 0: v + remaining < -margin
    to_one[j] = test.theta1 - v;                // <= 0: v >= theta1
    to_zero[j] = test.theta0 + v;               // <= 0: -v >= theta0
  }
  const std::uint32_t u = Ops::greater(up, 0.0), d = Ops::greater(down, 0.0);
  const std::uint32_t is_one = u | (~d & ~Ops::not_le(to_one, 0.0));
  const std::uint32_t is_zero = d | (~u & ~Ops::not_le(to_zero, 0.0));
  const std::uint32_t leave = (is_one | is_zero) & open;
  one = is_one & leave;
  return leave;
}

template <class Ops, typename T, bool kNaN>
std::uint32_t advance_binary_impl(const ForestArrays& f, const T* Xt, std::size_t t, std::size_t t_end,
                                  const BinaryStops& stops, double* acc, std::uint32_t open, std::uint32_t* left,
                                  std::uint32_t* ones) {
  double a[kLanes];
  for (std::size_t j = 0; j < kLanes; ++j) a[j] = acc[j];
  const auto add = [&](std::size_t tree, std::uint32_t neg) { Ops::add(a, f.steps[tree], neg); };
  for (std::size_t i = 0; i < stops.n && open; ++i) {
    for_each_tree<Ops, T, kNaN>(f, Xt, t, stops.at[i], add);
    t = stops.at[i];
    std::uint32_t one = 0;
    const std::uint32_t leave = decide_binary<Ops>(a, stops.tests[i], open, one);
    for (std::uint32_t m = leave; m; m &= m - 1) left[__builtin_ctz(m)] = static_cast<std::uint32_t>(t);
    *ones |= one;
    open &= ~leave;
  }
  if (open) for_each_tree<Ops, T, kNaN>(f, Xt, t, t_end, add);
  for (std::size_t j = 0; j < kLanes; ++j) acc[j] = a[j];
  return open;
}

template <class Ops, typename T>
std::uint32_t advance_binary(const ForestArrays& f, const T* Xt, bool has_nan, std::size_t t_begin, std::size_t t_end,
                             const BinaryStops& stops, double* acc, std::uint32_t open, std::uint32_t* left,
                             std::uint32_t* ones) {
  if (has_nan) return advance_binary_impl<Ops, T, true>(f, Xt, t_begin, t_end, stops, acc, open, left, ones);
  return advance_binary_impl<Ops, T, false>(f, Xt, t_begin, t_end, stops, acc, open, left, ones);
}

template <class Ops>
Kernels make_kernels(const char* name) {
  return {name, &accumulate<Ops, float>, &accumulate<Ops, double>, &outputs<Ops, float>, &outputs<Ops, double>,
          &leaders, &advance_binary<Ops, float>, &advance_binary<Ops, double>};
}

}  // namespace
}  // namespace rebelboost::predict
