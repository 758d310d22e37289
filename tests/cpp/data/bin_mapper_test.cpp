// Tests of quantile binning: exact bins for few values, NaN handling, quantile balance, raw-threshold identity.
#include "data/bin_mapper.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "rebelboost/error.hpp"
#include "test_util.hpp"

namespace rebelboost::data {
namespace {

using testing::Dense;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Dense<double> one_column(const std::vector<double>& values) {
  return Dense<double>{values.size(), 1, values};
}

BinMapper fit_mapper(const Dense<double>& X, int n_bins, std::size_t subsample = 1000000, int threads = 1) {
  BinMapper m(n_bins, subsample);
  m.fit(X.c_view(), threads);
  return m;
}

TEST(BinMapper, FewDistinctValuesGetOneBinEach) {
  const std::vector<double> distinct = {-3.0, 0.5, 2.0, 7.0, 100.0};
  std::mt19937_64 rng(1);
  std::vector<double> values;
  std::vector<int> rank;
  for (int i = 0; i < 400; ++i) {
    const int k = static_cast<int>(rng() % distinct.size());
    values.push_back(distinct[k]);
    rank.push_back(k);
  }
  for (int n_bins : {6, 7, 256}) {  // 6: exactly n_bins - 1 distinct values, still exact
    const auto X = one_column(values);
    const BinMapper m = fit_mapper(X, n_bins);
    ASSERT_EQ(m.n_value_bins(0), 5) << "n_bins " << n_bins;
    const BinnedMatrix B = m.transform(X.c_view(), 1);
    for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(B.column(0)[i], rank[i]) << "row " << i;
    // Every edge lies strictly between consecutive distinct values.
    for (int b = 0; b < 4; ++b) {
      EXPECT_GE(m.threshold(0, b), distinct[b]);
      EXPECT_LT(m.threshold(0, b), distinct[b + 1]);
    }
    EXPECT_EQ(m.threshold(0, 4), kInf);
  }
}

TEST(BinMapper, SkewedCountsAtTheExactLimitAreStillExact) {
  // n_bins - 1 distinct values where one value holds almost every row: quantiles would merge the rare
  // values, the exact rule must not.
  std::vector<double> values(500, 3.0);
  const std::vector<double> rare = {-7.0, -1.0, 0.0, 10.0};
  for (std::size_t i = 0; i < rare.size(); ++i) values[100 * i + 1] = rare[i];
  const auto X = one_column(values);
  const BinMapper m = fit_mapper(X, 6);
  ASSERT_EQ(m.n_value_bins(0), 5);
  const BinnedMatrix B = m.transform(X.c_view(), 1);
  const std::map<double, int> code_of = {{-7.0, 0}, {-1.0, 1}, {0.0, 2}, {3.0, 3}, {10.0, 4}};
  for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(B.column(0)[i], code_of.at(values[i])) << "row " << i;
}

template <typename T>
void adjacent_values_are_separated() {
  // Consecutive representable values: the midpoint rounds onto one of them, and the edge must still
  // keep every value in its own bin.
  for (const T start : {static_cast<T>(1.5), static_cast<T>(1.0), static_cast<T>(-3.25), std::numeric_limits<T>::denorm_min(),
                        std::nextafter(std::numeric_limits<T>::max(), T(0))}) {
    std::vector<T> distinct = {start};
    for (int k = 0; k < 6 && std::isfinite(std::nextafter(distinct.back(), std::numeric_limits<T>::infinity())); ++k)
      distinct.push_back(std::nextafter(distinct.back(), std::numeric_limits<T>::infinity()));
    std::vector<T> values;
    for (int rep = 0; rep < 20; ++rep)
      for (std::size_t k = 0; k < distinct.size(); ++k) values.push_back(distinct[(k * 5 + rep) % distinct.size()]);
    Dense<T> X{values.size(), 1, values};
    BinMapper m(256, 1000000);
    m.fit(X.c_view(), 1);
    ASSERT_EQ(m.n_value_bins(0), static_cast<int>(distinct.size())) << "start " << start;
    const BinnedMatrix B = m.transform(X.c_view(), 1);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto k = std::find(distinct.begin(), distinct.end(), values[i]) - distinct.begin();
      ASSERT_EQ(B.column(0)[i], k) << "start " << start << " row " << i;
    }
  }
}

TEST(BinMapper, AdjacentDoublesGetTheirOwnBins) { adjacent_values_are_separated<double>(); }
TEST(BinMapper, AdjacentFloatsGetTheirOwnBins) { adjacent_values_are_separated<float>(); }

TEST(BinMapper, OneMoreDistinctValueThanBinsUsesQuantiles) {
  std::vector<double> values;
  for (int rep = 0; rep < 3; ++rep)
    for (int v = 0; v < 6; ++v) values.push_back(v);
  const BinMapper m = fit_mapper(one_column(values), 6);  // 6 distinct values, 5 value bins allowed
  EXPECT_LE(m.n_value_bins(0), 5);
  EXPECT_GE(m.n_value_bins(0), 2);
}

TEST(BinMapper, ConstantColumnHasOneValueBin) {
  for (int n_bins : {3, 64, 256}) {
    const auto X = one_column(std::vector<double>(50, 4.25));
    const BinMapper m = fit_mapper(X, n_bins);
    EXPECT_EQ(m.n_value_bins(0), 1);
    EXPECT_TRUE(m.edges(0).empty());
    const BinnedMatrix B = m.transform(X.c_view(), 1);
    for (std::size_t i = 0; i < 50; ++i) ASSERT_EQ(B.column(0)[i], 0);
  }
}

TEST(BinMapper, NaNGoesToTheLastBin) {
  for (int n_bins : {3, 17, 256}) {
    std::vector<double> values = {1.0, kNaN, 2.0, 3.0, kNaN, 1.0, 5.0, kNaN};
    const auto X = one_column(values);
    const BinMapper m = fit_mapper(X, n_bins);
    EXPECT_EQ(m.missing_bin(), n_bins - 1);
    EXPECT_LE(m.n_value_bins(0), n_bins - 1);
    const BinnedMatrix B = m.transform(X.c_view(), 1);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (std::isnan(values[i])) {
        EXPECT_EQ(B.column(0)[i], n_bins - 1) << "row " << i;
      } else {
        EXPECT_LT(B.column(0)[i], m.n_value_bins(0)) << "row " << i;
      }
    }
  }
}

TEST(BinMapper, AllNaNColumnAndConstantWithNaN) {
  const auto all_nan = one_column(std::vector<double>(10, kNaN));
  const BinMapper m = fit_mapper(all_nan, 256);
  EXPECT_EQ(m.n_value_bins(0), 1);
  const BinnedMatrix B = m.transform(all_nan.c_view(), 1);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(B.column(0)[i], 255);

  const auto mixed = one_column({7.0, kNaN, 7.0, 7.0, kNaN});
  const BinMapper m2 = fit_mapper(mixed, 32);
  EXPECT_EQ(m2.n_value_bins(0), 1);
  const BinnedMatrix B2 = m2.transform(mixed.c_view(), 1);
  const std::vector<int> expected = {0, 31, 0, 0, 31};
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(B2.column(0)[i], expected[i]);
}

TEST(BinMapper, QuantileBinsAreBalanced) {
  struct Case {
    std::size_t n;
    int n_bins;
  };
  for (const Case c : {Case{10000, 11}, Case{20000, 64}, Case{50000, 256}}) {
    const auto X = testing::random_matrix(c.n, 1, 42 + c.n);
    const BinMapper m = fit_mapper(X, c.n_bins);
    const int n_value = m.n_value_bins(0);
    EXPECT_LE(n_value, c.n_bins - 1);
    EXPECT_GE(n_value, c.n_bins - 2);  // continuous data should use (almost) every bin
    const BinnedMatrix B = m.transform(X.c_view(), 1);
    std::vector<std::size_t> count(256, 0);
    for (std::size_t i = 0; i < c.n; ++i) ++count[B.column(0)[i]];
    const double expected = static_cast<double>(c.n) / (c.n_bins - 1);
    for (int b = 0; b < n_value; ++b) {
      EXPECT_GT(count[b], 0.8 * expected) << "bin " << b << " of " << n_value;
      EXPECT_LT(count[b], 1.2 * expected + 2) << "bin " << b << " of " << n_value;
    }
  }
}

TEST(BinMapper, HeavyTiesStayInOneBin) {
  // Half the values are 0: they must share one bin, and bins never exceed n_bins - 1.
  auto X = testing::random_matrix(4000, 1, 5);
  for (std::size_t i = 0; i < 4000; i += 2) X.at(i, 0) = 0.0;
  const BinMapper m = fit_mapper(X, 16);
  EXPECT_LE(m.n_value_bins(0), 15);
  const BinnedMatrix B = m.transform(X.c_view(), 1);
  const int zero_code = B.column(0)[0];
  for (std::size_t i = 0; i < 4000; ++i)
    if (X.at(i, 0) == 0.0) {
      ASSERT_EQ(B.column(0)[i], zero_code);
    }
  const auto edges = m.edges(0);
  EXPECT_TRUE(std::is_sorted(edges.begin(), edges.end()));
  EXPECT_EQ(std::adjacent_find(edges.begin(), edges.end()), edges.end()) << "duplicate edges";
}

// A matrix whose columns stress the edges: continuous, few values, NaNs, ties, adjacent doubles/floats,
// huge magnitudes, signed zeros, subnormals.
template <typename T>
Dense<T> hard_matrix(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> small(0, 4);
  const std::size_t n_cols = 8;
  Dense<T> X{n, n_cols, std::vector<T>(n * n_cols)};
  const T big = std::numeric_limits<T>::max();
  const T base = static_cast<T>(1.5);
  for (std::size_t r = 0; r < n; ++r) {
    X.at(r, 0) = static_cast<T>(normal(rng));
    X.at(r, 1) = static_cast<T>(small(rng) * 0.25 - 0.5);
    X.at(r, 2) = (rng() % 5 == 0) ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(normal(rng) * 1000.0);
    X.at(r, 3) = (rng() % 3 == 0) ? T(0) : static_cast<T>(std::round(normal(rng) * 3.0));
    // Adjacent representable values around 1.5 of the input type.
    T v = base;
    for (int k = static_cast<int>(rng() % 6); k > 0; --k) v = std::nextafter(v, big);
    X.at(r, 4) = v;
    const int pick = static_cast<int>(rng() % 4);
    X.at(r, 5) = pick == 0 ? big : pick == 1 ? -big : pick == 2 ? std::nextafter(big, T(0)) : T(0);
    X.at(r, 6) = (rng() % 2) ? T(0) : -T(0);
    X.at(r, 7) = static_cast<T>(std::numeric_limits<T>::denorm_min() * static_cast<T>(rng() % 7)) *
                 (rng() % 2 ? T(1) : T(-1));
  }
  return X;
}

template <typename T>
void check_threshold_identity(const Dense<T>& X, MatrixView<T> view, int n_bins, std::size_t subsample) {
  BinMapper m(n_bins, subsample);
  m.fit(view, 2);
  const BinnedMatrix B = m.transform(view, 2);
  ASSERT_EQ(B.n_samples, X.n_rows);
  ASSERT_EQ(B.n_features, X.n_cols);
  for (std::size_t f = 0; f < X.n_cols; ++f) {
    const int n_value = m.n_value_bins(f);
    ASSERT_GE(n_value, 1);
    ASSERT_LE(n_value, n_bins - 1);
    for (std::size_t r = 0; r < X.n_rows; ++r) {
      const T x = X.at(r, f);
      const int code = B.column(f)[r];
      if (std::isnan(x)) {
        ASSERT_EQ(code, n_bins - 1) << "feature " << f << " row " << r;
        continue;
      }
      ASSERT_LT(code, n_value) << "feature " << f << " row " << r;
      for (int b = 0; b < n_value; ++b) {
        const bool by_threshold = static_cast<double>(x) <= m.threshold(f, b);
        ASSERT_EQ(by_threshold, code <= b) << "feature " << f << " row " << r << " bin " << b << " x " << x
                                           << " threshold " << m.threshold(f, b);
      }
    }
  }
}

template <typename T>
void threshold_identity_all_layouts() {
  for (std::size_t subsample : {std::size_t{1000000}, std::size_t{700}}) {  // 700 < n: edges from a subset
    for (int n_bins : {3, 9, 256}) {
      const Dense<T> X = hard_matrix<T>(3000, 11 + n_bins);
      SCOPED_TRACE(::testing::Message() << "n_bins " << n_bins << " subsample " << subsample);
      check_threshold_identity(X, X.c_view(), n_bins, subsample);
      const std::vector<T> f = X.f_order();
      check_threshold_identity(X, MatrixView<T>::col_major(f.data(), X.n_rows, X.n_cols), n_bins, subsample);
    }
  }
}

TEST(BinMapper, RawThresholdReproducesCodesFloat64) { threshold_identity_all_layouts<double>(); }
TEST(BinMapper, RawThresholdReproducesCodesFloat32) { threshold_identity_all_layouts<float>(); }

TEST(BinMapper, LayoutsAndThreadCountsGiveTheSameCodes) {
  const Dense<double> X = hard_matrix<double>(2000, 3);
  const std::vector<double> f = X.f_order();
  const auto fview = MatrixView<double>::col_major(f.data(), X.n_rows, X.n_cols);
  BinMapper a(64, 1000000), b(64, 1000000);
  a.fit(X.c_view(), 1);
  b.fit(fview, 3);
  for (std::size_t j = 0; j < X.n_cols; ++j) EXPECT_EQ(a.edges(j), b.edges(j)) << "feature " << j;
  EXPECT_EQ(a.transform(X.c_view(), 1).codes, b.transform(fview, 3).codes);
}

TEST(BinMapper, InfinityIsRejected) {
  for (double bad : {kInf, -kInf}) {
    auto X = testing::random_matrix(100, 3, 9);
    X.at(57, 2) = bad;
    BinMapper m(256, 1000000);
    EXPECT_THROW(m.fit(X.c_view(), 1), InvalidArgument);
    EXPECT_THROW(m.fit(X.c_view(), 3), InvalidArgument);
    const Dense<float> Xf = X.cast<float>();
    EXPECT_THROW(m.fit(Xf.c_view(), 2), InvalidArgument);

    // Fitted on finite data, transforming a matrix with inf also throws.
    const auto clean = testing::random_matrix(100, 3, 10);
    BinMapper ok(256, 1000000);
    ok.fit(clean.c_view(), 1);
    EXPECT_THROW(ok.transform(X.c_view(), 2), InvalidArgument);
    try {
      ok.transform(X.c_view(), 1);
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("row 57"), std::string::npos) << e.what();
    }
  }
}

TEST(BinMapper, BadArgumentsThrow) {
  EXPECT_THROW(BinMapper(2, 10), InvalidArgument);
  EXPECT_THROW(BinMapper(257, 10), InvalidArgument);
  EXPECT_THROW(BinMapper(16, 0), InvalidArgument);
  const auto X = testing::random_matrix(20, 3, 1);
  BinMapper m(16, 100);
  m.fit(X.c_view(), 1);
  const auto wrong = testing::random_matrix(20, 4, 1);
  EXPECT_THROW(m.transform(wrong.c_view(), 1), InvalidArgument);
}

std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

TEST(FindBinEdges, SortsValuesInPlace) {
  // The sort must order every finite double (negatives, signed zeros, subnormals, extremes, integers
  // sharing high bytes) and keep the multiset of bit patterns, below and above the small-input cutoff.
  std::mt19937_64 rng(17);
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::vector<double> specials = {0.0, -0.0, std::numeric_limits<double>::denorm_min(),
                                        -std::numeric_limits<double>::denorm_min(), DBL_MAX, -DBL_MAX,
                                        DBL_MIN, -DBL_MIN, 1.0, -1.0, 1e-300, -1e300};
  for (std::size_t n : {1, 2, 10, 63, 64, 65, 1000, 20000}) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<double> values(n);
      for (std::size_t i = 0; i < n; ++i) {
        switch (kind) {
          case 0: values[i] = normal(rng); break;
          case 1: values[i] = static_cast<double>(static_cast<int>(rng() % 200) - 100); break;  // shared bytes
          case 2: values[i] = specials[rng() % specials.size()]; break;
          default: values[i] = normal(rng) * std::pow(10.0, static_cast<double>(static_cast<int>(rng() % 600) - 300));
        }
      }
      std::vector<std::uint64_t> before(n);
      for (std::size_t i = 0; i < n; ++i) before[i] = bits_of(values[i]);
      find_bin_edges(values, 255);
      ASSERT_TRUE(std::is_sorted(values.begin(), values.end())) << "n " << n << " kind " << kind;
      std::vector<std::uint64_t> after(n);
      for (std::size_t i = 0; i < n; ++i) after[i] = bits_of(values[i]);
      std::sort(before.begin(), before.end());
      std::sort(after.begin(), after.end());
      ASSERT_EQ(before, after) << "values lost or changed, n " << n << " kind " << kind;
    }
  }
}

TEST(FindBinEdges, ExactEdgesAreMidpointsOfNeighbours) {
  std::vector<double> values;
  for (int i = 0; i < 300; ++i) values.push_back(static_cast<double>((i * 37) % 11) - 5.0);  // -5..5
  const std::vector<double> edges = find_bin_edges(values, 255);
  ASSERT_EQ(edges.size(), 10u);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(edges[static_cast<std::size_t>(k)], -4.5 + k);
}

TEST(FindBinEdges, HeavyTiesDoNotWasteBins) {
  // A sparse pixel: 70 % zeros, then 300 distinct values. Quantiles would spend ~178 of 255 edges on
  // the zeros; the count-aware grouping gives the zeros one bin and uses every bin.
  std::vector<double> values(7000, 0.0);
  for (int i = 1; i <= 3000; ++i) values.push_back(static_cast<double>(1 + (i * 7) % 300));
  const std::vector<double> edges = find_bin_edges(values, 255);
  ASSERT_EQ(edges.size(), 254u);
  EXPECT_EQ(edges[0], 0.5);  // zeros alone
  // The other 299 edges' worth of values share 254 bins with about equal counts (10 values each = 1-2
  // distinct values per bin).
  for (std::size_t k = 1; k < edges.size(); ++k) EXPECT_LE(edges[k] - edges[k - 1], 2.0 + 1e-12) << k;
}

TEST(FindBinEdges, OneMoreDistinctValueThanBinsMergesOnePair) {
  std::vector<double> values;
  for (int v = 0; v < 256; ++v)
    for (int r = 0; r < 1 + (v * 13) % 5; ++r) values.push_back(v);
  const std::vector<double> edges = find_bin_edges(values, 255);
  EXPECT_EQ(edges.size(), 254u);
}

TEST(FindBinEdges, BinsHoldAboutEqualCounts) {
  // Continuous data: every bin's count is within a factor 2 of n / bins.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(50000);
  for (double& v : values) v = normal(rng);
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<double> edges = find_bin_edges(values, 64);
  ASSERT_EQ(edges.size(), 63u);
  std::size_t lo = 0;
  for (std::size_t k = 0; k <= edges.size(); ++k) {
    const std::size_t hi = k < edges.size()
                               ? static_cast<std::size_t>(std::upper_bound(sorted.begin(), sorted.end(), edges[k]) - sorted.begin())
                               : sorted.size();
    EXPECT_GT(hi - lo, 50000u / 64 / 2) << "bin " << k;
    EXPECT_LT(hi - lo, 50000u / 64 * 2) << "bin " << k;
    lo = hi;
  }
}

TEST(SubsampleRows, AllRowsWhenThereAreFewer) {
  for (std::int64_t seed : {-1, 0, 7}) {
    const auto rows = subsample_rows(50, 50, seed);
    ASSERT_EQ(rows.size(), 50u);
    for (std::size_t i = 0; i < 50; ++i) EXPECT_EQ(rows[i], i);
    EXPECT_EQ(subsample_rows(10, 1000, seed).size(), 10u);
  }
}

TEST(SubsampleRows, SortedDistinctInRangeAndDeterministic) {
  for (std::int64_t seed : {-1, 0, 1, 123456789}) {
    for (std::size_t n : {101, 1000, 99991}) {
      for (std::size_t k : {1, 2, 100, 777}) {
        const auto rows = subsample_rows(n, k, seed);
        ASSERT_EQ(rows.size(), std::min(n, k)) << "seed " << seed << " n " << n << " k " << k;
        for (std::size_t i = 0; i < rows.size(); ++i) {
          ASSERT_LT(rows[i], n);
          if (i > 0) {
            ASSERT_LT(rows[i - 1], rows[i]);
          }
        }
        EXPECT_EQ(rows, subsample_rows(n, k, seed));
      }
    }
  }
  EXPECT_NE(subsample_rows(10000, 500, 1), subsample_rows(10000, 500, 2));
  EXPECT_NE(subsample_rows(10000, 500, 1), subsample_rows(10000, 500, -1));
}

TEST(SubsampleRows, SeededDrawIsRoughlyUniform) {
  // 2000 of 100000 rows: each tenth of the range should hold about 200 of them.
  const auto rows = subsample_rows(100000, 2000, 99);
  std::vector<int> per_tenth(10, 0);
  for (std::size_t r : rows) ++per_tenth[r / 10000];
  for (int t = 0; t < 10; ++t) {
    EXPECT_GT(per_tenth[t], 140) << "tenth " << t;
    EXPECT_LT(per_tenth[t], 260) << "tenth " << t;
  }
  // Evenly spaced (seed < 0): exactly 200 per tenth.
  std::fill(per_tenth.begin(), per_tenth.end(), 0);
  for (std::size_t r : subsample_rows(100000, 2000, -1)) ++per_tenth[r / 10000];
  for (int t = 0; t < 10; ++t) EXPECT_EQ(per_tenth[t], 200) << "tenth " << t;
}

TEST(BinMapper, SeededSubsampleIsDeterministicAndKeepsTheIdentity) {
  const Dense<double> X = testing::random_matrix(5000, 3, 8, 0.1);
  BinMapper a(32, 400, 5), b(32, 400, 5), c(32, 400, 6);
  a.fit(X.c_view(), 1);
  b.fit(X.c_view(), 3);
  c.fit(X.c_view(), 1);
  bool any_difference = false;
  for (std::size_t f = 0; f < 3; ++f) {
    EXPECT_EQ(a.edges(f), b.edges(f));
    any_difference = any_difference || a.edges(f) != c.edges(f);
  }
  EXPECT_TRUE(any_difference) << "the seed does not change the subsample";
  const BinnedMatrix B = a.transform(X.c_view(), 2);
  for (std::size_t f = 0; f < 3; ++f)
    for (std::size_t r = 0; r < X.n_rows; ++r) {
      if (std::isnan(X.at(r, f))) continue;
      for (int bin = 0; bin < a.n_value_bins(f); ++bin)
        ASSERT_EQ(X.at(r, f) <= a.threshold(f, bin), B.column(f)[r] <= bin) << f << "," << r << "," << bin;
    }
}

TEST(FindBinEdges, EdgesAreSortedMidpointsWithinRange) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> dist(-20, 20);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> values(1 + rng() % 300);
    for (double& v : values) v = dist(rng) * 0.5;
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const int max_bins = 2 + static_cast<int>(rng() % 40);
    const std::vector<double> edges = find_bin_edges(values, max_bins);
    EXPECT_LE(edges.size() + 1, static_cast<std::size_t>(max_bins));
    for (std::size_t i = 0; i < edges.size(); ++i) {
      EXPECT_GE(edges[i], sorted.front());
      EXPECT_LT(edges[i], sorted.back());
      if (i > 0) {
        EXPECT_LT(edges[i - 1], edges[i]);
      }
    }
  }
}

}  // namespace
}  // namespace rebelboost::data
