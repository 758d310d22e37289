// The joint root split of a multi-class (REBEL) tree: K-vector histograms, loss 2 sum_k sqrt(s+_k s-_k).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "tree/quick_prune.hpp"

namespace rebelboost::tree {

struct RootSplit {
  bool found = false;
  std::int32_t feature = -1;
  std::int32_t bin = -1;
  bool nan_left = false;
  double loss = 0.0;           // sum_k sqrt(s+_k s-_k) of the split (fixed-point units squared, rooted)
  double loss_unsplit = 0.0;   // the same for the homogeneous learner
  long double precise_loss = 0.0L;  // the loss in long double: what decides between candidates
  std::int64_t bin_accumulations = 0;
};

// Best root split for the labelling left = -1, right = +1 (its mirror image has the same loss).
// v: n x K fixed-point vectors (w+_nk for k != y_n, w-_n in slot y_n) for rows sorted by class, with
// class c in rows [class_begin[c], class_begin[c+1]). Per bin and class the histograms give
// W-_k(b) (the class-k block's slot k) and W+_k(b) (every other row's slot k); then
//   s+_k = R+_k + L-_k,  s-_k = R-_k + L+_k   (thesis Eq. 4.8 with f = -1 left, +1 right).
// A split must be clearly better than the unsplit node. Losses (compared in long double) within a few
// rounding units of the lowest count as tied, and the tie goes to the lowest (feature, bin, NaN right first):
// a rule on the set of candidates, independent of the order they are visited in, so a pruned search
// picks the same split. OpenMP over groups of features; the result does not depend on n_threads.
RootSplit best_multiclass_root(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* v,
                               std::size_t K, const std::vector<std::size_t>& class_begin, int n_threads,
                               const std::uint8_t* active_features = nullptr);

// One feature's candidates: its lowest split loss and every split within the tie tolerance of it (the
// only ones that can be the overall winner).
struct RootCandidates {
  long double min_loss = std::numeric_limits<long double>::infinity();  // lowest precise loss
  double loss_unsplit = 0.0;
  long double precise_unsplit = 0.0L;
  std::vector<RootSplit> near;  // empty: no split beats the unsplit node
};

// The candidates of one feature from its bin sums (wplus/wminus: kHistBins x K each).
RootCandidates evaluate_multiclass_feature(const std::int64_t* wplus, const std::int64_t* wminus, std::size_t K,
                                           int n_value_bins, int missing_bin, std::int32_t feature);

// Every active feature's candidates by the streaming full scan (what best_multiclass_root picks from).
std::vector<RootCandidates> multiclass_candidates(const data::BinnedMatrix& X, const data::BinMapper& bins,
                                                  const std::int64_t* v, std::size_t K,
                                                  const std::vector<std::size_t>& class_begin, int n_threads,
                                                  const std::uint8_t* active_features = nullptr);

// A distributed fit's root: every active feature's K-vector bin sums of the local rows, W+ then W- (kHistBins
// x K each), at out + f x 2 kHistBins K (zeros for inactive features); then, once those are summed over
// the participants, the split best_multiclass_root would pick from them.
void multiclass_histograms(const data::BinnedMatrix& X, const std::int64_t* v, std::size_t K,
                           const std::vector<std::size_t>& class_begin, int n_threads,
                           const std::uint8_t* active_features, std::int64_t* out);
RootSplit multiclass_root_from_histograms(const std::int64_t* hists, const data::BinMapper& bins, std::size_t K,
                                          const std::uint8_t* active_features, int n_threads);

// The winner over features' candidates (any order): lowest (feature, bin, NaN side) among the splits
// within the tie tolerance of the lowest loss.
RootSplit pick_root(const std::vector<RootCandidates>& features, std::size_t K);

// QuickBoost for the joint root split: REBEL's loss sum_k sqrt(s+_k s-_k) of any fixed split never
// decreases when a row is added (every term of s+ and s- is non-negative, and so is the rounding), so a
// feature whose best loss on the heaviest rows exceeds the best complete loss by more than the tie
// tolerance cannot win. Rows are taken heaviest first by sum_k v_nk; first subset eta of the mass, then
// M chunks (quick_prune.hpp). Same result as best_multiclass_root, for any n_threads.
RootSplit quick_multiclass_root(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* v,
                                std::size_t K, const std::vector<std::size_t>& class_begin, int n_threads,
                                const QuickParams& params, QuickWork& work,
                                const std::uint8_t* active_features = nullptr);

}  // namespace rebelboost::tree
