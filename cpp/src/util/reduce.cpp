// Reductions of exact sums and integer totals across the participants of a distributed fit.
#include "util/reduce.hpp"

#include <algorithm>

namespace rebelboost::util {

void reduce_sums(std::vector<ExactSum>& sums, Reducer* reducer) {
  if (reducer == nullptr || sums.empty()) return;
  constexpr std::size_t D = ExactSum::kDigits;
  std::vector<std::int64_t> digits(sums.size() * D);
  for (std::size_t k = 0; k < sums.size(); ++k) {
    const auto d = sums[k].digits();
    std::copy(d.begin(), d.end(), digits.begin() + static_cast<std::ptrdiff_t>(k * D));
  }
  reducer->sum(digits.data(), digits.size());
  for (std::size_t k = 0; k < sums.size(); ++k) sums[k] = ExactSum::from_digits(&digits[k * D]);
}

std::vector<double> reduced_values(std::vector<ExactSum>& sums, Reducer* reducer) {
  reduce_sums(sums, reducer);
  std::vector<double> values(sums.size());
  for (std::size_t k = 0; k < sums.size(); ++k) values[k] = sums[k].value();
  return values;
}

double reduced_value(ExactSum sum, Reducer* reducer) {
  std::vector<ExactSum> one{sum};
  return reduced_values(one, reducer)[0];
}

void reduce_counts(std::int64_t* data, std::size_t n, Reducer* reducer) {
  if (reducer != nullptr && n > 0) reducer->sum(data, n);
}

void reduce_max(std::int64_t* data, std::size_t n, Reducer* reducer) {
  if (reducer != nullptr && n > 0) reducer->max(data, n);
}

}  // namespace rebelboost::util
