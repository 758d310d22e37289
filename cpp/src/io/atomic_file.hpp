// Atomic file replacement that a killed writer cannot litter: readers see the old file or the new one.
#pragma once

#include <string>

namespace rebelboost::io {

// Replaces `path` by `bytes`: written to a temporary file in the same folder, flushed, then renamed over
// `path`. The temporary file has no name while it is written (O_TMPFILE, where the OS offers it), so a
// writer killed at any instant leaves nothing; otherwise it is `path.tmp-<pid>-<suffix>`, locked by its
// writer, and the next write to `path` removes such files whose writer is gone (lock free, pid not
// running). Throws IoError when the OS refuses.
// `path` is first checked with check_path(path, "model file", false).
void write_atomically(const std::string& path, const std::string& bytes);

// The one check every reader and writer of a path runs before touching the file: throws InvalidArgument
// for an empty path or one holding a NUL byte (the OS would silently cut it there: "a\0b" is "a"), and
// IoError when something other than a regular file (or a symbolic link, for a writer, which replaces the
// link) is there: a directory, FIFO, socket or device. `what` names the file in messages.
void check_path(const std::string& path, const char* what, bool reading);

// Opens `path` for reading, checked as above: stat() first, so a FIFO or device is never opened, then
// opened with O_NONBLOCK (nothing can block even if the path is swapped in between) and fstat()ed: still a
// regular file, the same one. Returns the descriptor (the caller closes it); throws IoError otherwise.
int open_regular(const std::string& path, const char* what);

}  // namespace rebelboost::io
