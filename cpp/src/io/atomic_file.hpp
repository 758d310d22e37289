// Atomic file replacement that a killed writer cannot litter: readers see the old file or the new one.
#pragma once

#include <string>

namespace rebelboost::io {

// Replaces `path` by `bytes`: written to a temporary file in the same folder, flushed, then renamed over
// `path`. The temporary file has no name while it is written (O_TMPFILE, where the OS offers it), so a
// writer killed at any instant leaves nothing; otherwise it is `path.tmp-<pid>-<suffix>`, locked by its
// writer, and the next write to `path` removes such files whose writer is gone (lock free, pid not
// running). Throws IoError when the OS refuses.
void write_atomically(const std::string& path, const std::string& bytes);

}  // namespace rebelboost::io
