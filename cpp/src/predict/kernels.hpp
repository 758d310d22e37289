// The 16-lane tree kernels, one set per instruction set (generic C++, AVX2, AVX-512), chosen at run time.
//
// A kernel evaluates trees for a group of 16 rows held column-wise: Xt[slot * 16 + j] is row j's value
// of feature features[slot] (only the features some split reads), so every split compares 16 contiguous
// values with one threshold. Trees up to FlatForest::kMaxMaskDepth are evaluated by comparing all their
// splits and combining the 16-bit "goes right" masks bottom-up into the mask of lanes whose leaf is -1;
// deeper trees are walked per lane. Every kernel gives the same bits: scores are accumulated per lane in
// learner order exactly as H = a_0 + sum_t f_t(x) a_t is defined.
#pragma once

#include <cstddef>
#include <cstdint>

#include "predict/forest_arrays.hpp"

namespace rebelboost::predict {

inline constexpr std::size_t kLanes = 16;

// Per lane: the leading class (first on ties), the runner-up, the largest |score| and the smallest score
// (early-exit checks).
struct LaneLeaders {
  double top[kLanes], runner[kLanes], largest[kLanes], bottom[kLanes];
  std::int32_t lead[kLanes], second[kLanes];
};

// A binary model's test at one checkpoint s (StopRule::binary_test): a lane with score P leaves with class 1
// when P - remaining > margin, or when P + remaining < -margin fails and P >= theta1; with class 0 in the
// mirror case (-P >= theta0); margin = margin_scale (2 |P| + mass). The exact bound first, then the
// cascade, as StopRule::decide.
struct BinaryTest {
  double remaining, margin_scale, mass, theta0, theta1;
};

// Checkpoints at[0] < at[1] < ... (learner counts) of a binary model with the test of each.
struct BinaryStops {
  const std::size_t* at;
  const BinaryTest* tests;
  std::size_t n;
};

struct Kernels {
  const char* name;
  // acc[k * 16 + j] += f_t(x_j) a_tk for t in [t_begin, t_end), in that order. has_nan: some value in Xt
  // is NaN (else the kernel may skip the NaN test).
  void (*accumulate_f32)(const ForestArrays& forest, const float* Xt, bool has_nan, std::size_t t_begin,
                         std::size_t t_end, double* acc);
  void (*accumulate_f64)(const ForestArrays& forest, const double* Xt, bool has_nan, std::size_t t_begin,
                         std::size_t t_end, double* acc);
  // out[j * stride + t - t_begin] = f_t(x_j) in {+1, -1} for t in [t_begin, t_end) and j < n_lanes.
  void (*outputs_f32)(const ForestArrays& forest, const float* Xt, bool has_nan, std::size_t t_begin,
                      std::size_t t_end, std::int8_t* out, std::ptrdiff_t stride, std::size_t n_lanes);
  void (*outputs_f64)(const ForestArrays& forest, const double* Xt, bool has_nan, std::size_t t_begin,
                      std::size_t t_end, std::int8_t* out, std::ptrdiff_t stride, std::size_t n_lanes);
  // The LaneLeaders of scores acc[k * 16 + j], K >= 2 classes.
  void (*leaders)(const double* acc, std::size_t K, LaneLeaders& out);
  // Binary models: acc[j] += f_t(x_j) a_t for t in [t_begin, t_end) like accumulate, and after at[i]
  // learners (t_begin < at[i] <= t_end) tests[i] decides the lanes of `open`, until none is open. A lane
  // leaving there gets at[i] in left[j] and its class in bit j of *ones. Returns the lanes still open.
  std::uint32_t (*advance_binary_f32)(const ForestArrays& forest, const float* Xt, bool has_nan, std::size_t t_begin,
                                      std::size_t t_end, const BinaryStops& stops, double* acc, std::uint32_t open,
                                      std::uint32_t* left, std::uint32_t* ones);
  std::uint32_t (*advance_binary_f64)(const ForestArrays& forest, const double* Xt, bool has_nan, std::size_t t_begin,
                                      std::size_t t_end, const BinaryStops& stops, double* acc, std::uint32_t open,
                                      std::uint32_t* left, std::uint32_t* ones);
};

const Kernels& generic_kernels();
// nullptr where the library was built without them or the CPU lacks the instructions.
const Kernels* avx2_kernels();
const Kernels* avx512_kernels();

// The fastest kernels this CPU runs (REBELBOOST_KERNELS=generic|avx2|avx512 in the environment picks one,
// for tests and measurements; an unavailable choice falls back to the best available).
const Kernels& best_kernels();

}  // namespace rebelboost::predict
