// Numbers in error messages: short and readable whatever their size ("1e+308", not 309 digits).
#pragma once

#include <cstdio>
#include <string>

namespace rebelboost::util {

inline std::string format_number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  return buffer;
}

}  // namespace rebelboost::util
