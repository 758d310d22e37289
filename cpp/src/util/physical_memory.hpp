// The machine's physical memory, for bounding the memory a parameter may claim.
#pragma once

#include <cstddef>

namespace rebelboost::util {

// Bytes of physical memory (POSIX sysconf), or 0 where the system does not say.
std::size_t physical_memory_bytes();

}  // namespace rebelboost::util
