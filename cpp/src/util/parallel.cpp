// Thread-count-independent reductions.
#include "util/parallel.hpp"

#include <cerrno>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

namespace rebelboost::util {

std::size_t work_per_thread() {
  static const std::size_t value = [] {
    const char* text = std::getenv("REBELBOOST_WORK_PER_THREAD");
    if (text == nullptr || *text == '\0') return kWorkPerThread;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    // Anything but a plain positive integer (signs, junk, overflow) leaves the default.
    if (*end != '\0' || errno != 0 || v == 0 || text[0] < '0' || text[0] > '9') return kWorkPerThread;
    return static_cast<std::size_t>(v);
  }();
  return value;
}

bool waiting_threads_spin() {
  static const bool value = [] {
    const char* text = std::getenv("OMP_WAIT_POLICY");
    if (text == nullptr) return true;
    std::string policy(text);
    for (char& c : policy) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return policy != "passive";
  }();
  return value;
}

}  // namespace rebelboost::util
