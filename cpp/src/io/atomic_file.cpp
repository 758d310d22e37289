// Atomic file replacement (see atomic_file.hpp): anonymous or locked temporary file, rename, reclaim.
#include "io/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "rebelboost/error.hpp"

namespace rebelboost::io {

namespace {

// An owned file descriptor; a writer keeps its temporary file open (and locked) until the rename.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

struct TempFile {
  Fd fd;             // open and locked by this writer
  std::string name;  // empty: none
};

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Whether the writer of a temporary file named <name>.tmp-<pid>-... is gone: pid not running and the
// writer's lock free (the lock also covers a pid reused or seen from another pid namespace).
bool writer_gone(const std::string& file, long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) return false;
  const Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  return fd.get() >= 0 && ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0;
}

// Removes the temporary files that killed writers of `path` left behind.
void reclaim_leftovers(const std::string& path) {
  const std::string folder = folder_of(path), prefix = name_of(path) + ".tmp-";
  DIR* dir = ::opendir(folder.c_str());
  if (!dir) return;
  while (const dirent* entry = ::readdir(dir)) {
    const char* name = entry->d_name;
    if (std::strncmp(name, prefix.c_str(), prefix.size()) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '-') continue;  // not ours (e.g. written by an older version, no pid)
    const std::string file = folder + "/" + name;
    if (writer_gone(file, pid)) ::unlink(file.c_str());
  }
  ::closedir(dir);
}

void write_all(int fd, const std::string& bytes, const std::string& what) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot write " + what + ": " + std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) throw IoError("cannot flush " + what + ": " + std::strerror(errno));
}

// A fresh name <path>.tmp-<pid>-<suffix> for linking the anonymous file (a name taken is skipped).
std::string temp_name(const std::string& path) {
  static std::atomic<unsigned long> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(static_cast<unsigned long>(now)) + "-" +
         std::to_string(counter++);
}

// Writes `bytes` to an unnamed file in path's folder, then gives it a temporary name; no name where the
// OS offers no unnamed files or cannot name them (linkat needs /proc or privileges).
TempFile write_unnamed(const std::string& path, const std::string& bytes) {
  TempFile temp;
#ifdef O_TMPFILE
  temp.fd = Fd(::open(folder_of(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644));
  if (temp.fd.get() < 0) return temp;
  ::flock(temp.fd.get(), LOCK_EX);
  write_all(temp.fd.get(), bytes, "a temporary file next to '" + path + "'");
  const std::string proc = "/proc/self/fd/" + std::to_string(temp.fd.get());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = temp_name(path);
    if (::linkat(temp.fd.get(), "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0 ||
        ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      temp.name = name;
      return temp;
    }
    if (errno != EEXIST) break;
  }
#else
  (void)path;
  (void)bytes;
#endif
  return temp;
}

// Writes `bytes` to a new locked file <path>.tmp-<pid>-XXXXXX.
TempFile write_named(const std::string& path, const std::string& bytes) {
  TempFile temp;
  temp.name = path + ".tmp-" + std::to_string(::getpid()) + "-XXXXXX";
  temp.fd = Fd(::mkstemp(temp.name.data()));
  if (temp.fd.get() < 0) throw IoError("cannot create a temporary file next to '" + path + "': " + std::strerror(errno));
  ::flock(temp.fd.get(), LOCK_EX);
  try {
    write_all(temp.fd.get(), bytes, "a temporary file next to '" + path + "'");  // the user's path, not ours
  } catch (...) {
    ::unlink(temp.name.c_str());
    throw;
  }
  return temp;
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

[[noreturn]] void not_regular(const std::string& path, const char* what, bool reading, mode_t mode) {
  throw IoError(std::string(reading ? "cannot read " : "cannot write ") + what + " '" + path + "': not a regular file (" + kind_of(mode) + ")");
}

}  // namespace

void check_path(const std::string& path, const char* what, bool reading) {
  if (path.empty()) throw InvalidArgument(std::string(what) + " path is empty");
  const auto nul = path.find('\0');
  if (nul != std::string::npos)
    throw InvalidArgument(std::string(what) + " path holds a NUL byte at position " + std::to_string(nul) +
                          " (the OS would cut the name there: '" + path.substr(0, nul) + "')");
  struct stat st {};
  if ((reading ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return;  // open() reports it
  if (!S_ISREG(st.st_mode) && (reading || !S_ISLNK(st.st_mode))) not_regular(path, what, reading, st.st_mode);
}

int open_regular(const std::string& path, const char* what) {
  check_path(path, what, true);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw IoError(std::string("cannot open ") + what + " '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const mode_t mode = st.st_mode;
    ::close(fd);
    not_regular(path, what, true, mode);
  }
  return fd;
}

void write_atomically(const std::string& path, const std::string& bytes) {
  check_path(path, "model file", false);
  reclaim_leftovers(path);
  TempFile temp = write_unnamed(path, bytes);
  if (temp.name.empty()) temp = write_named(path, bytes);
  if (std::rename(temp.name.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.name.c_str());
    throw IoError("cannot rename the temporary file to '" + path + "': " + std::strerror(err));
  }
  const Fd folder(::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() >= 0) ::fsync(folder.get());  // the rename itself reaches the disk (best effort)
}

}  // namespace rebelboost::io
