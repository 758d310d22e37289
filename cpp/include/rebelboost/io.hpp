// The model file: one versioned, checksummed, little-endian binary format written and read by the core
// (docs/design/model_format.md: every field, every version, what the loader refuses).
//
// Layout (all integers little-endian):
//   bytes 0..7    magic "RBLBOOST"
//   bytes 8..11   u32 format version (kFormatVersion)
//   bytes 12..15  u32 reserved (must be 0)
//   bytes 16..23  u64 payload size P
//   bytes 24..    payload (P bytes, see model_file.cpp)
//   last 8 bytes  u64 FNV-1a checksum of the payload
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "rebelboost/model.hpp"

namespace rebelboost {

// 2: the payload's fourth u32 (reserved, 0, in version 1) names the learner family; similarity models.
// 3: the soft cascade section.
// 4: REBEL's surrogate g after the cascade (older files load as exponential).
// 5: node covers (Tree::cover) after each tree's nodes (older files load without covers).
// 6: hybrid models (LearnerKind::kHybrid): trees, then similarities, then each learner's kind in order;
//    regression models' leaf values (Tree::leaf_value) after each tree's covers.
// Every earlier version still loads.
inline constexpr std::uint32_t kFormatVersion = 6;

// Model -> bytes of the file format.
std::string serialize(const Model& model);

// Bytes -> Model. The input is untrusted: every size and index is checked before use, so truncated,
// corrupt or hostile input throws ModelFileError (never reads out of bounds, never allocates more than
// the input can describe).
Model deserialize(const void* data, std::size_t size);

// Writes atomically: a temporary file in the same directory, flushed, then renamed over `path`. A save
// killed at any instant leaves no temporary file, or one that the next save to `path` removes.
// Throws IoError when the OS refuses or `path` names a directory, FIFO, socket or device, InvalidArgument
// for an empty path or one holding a NUL byte (checked before anything is written).
void save_model(const Model& model, const std::string& path);

// Reads and deserializes; IoError if the file cannot be read or is not a regular file (a FIFO or device is
// refused before it is opened, and opened without blocking: loading never waits), InvalidArgument for an
// empty path or one holding a NUL byte, ModelFileError if it is not a valid model.
Model load_model(const std::string& path);

}  // namespace rebelboost
