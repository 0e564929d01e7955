// Whole-file reads and atomic writes over POSIX calls, so that a write can
// be synced (fsync) before its rename.
#include "common/file_io.h"
#include "common/huge_pages.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace perfgate {
namespace {

absl::Status Unavailable(const char* what, const std::string& path, int err) {
  return absl::UnavailableError(absl::StrCat(what, " ", path, ": ", std::strerror(err)));
}

// The directory of path and the temporary name beside it.
std::pair<std::string, std::string> DirAndTemp(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string prefix = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  return {dir, absl::StrCat(prefix, ".", name, ".tmp.", ::getpid())};
}

absl::Status WriteAll(int fd, const std::string& text, const std::string& tmp) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unavailable("cannot write", tmp, errno);
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return Unavailable("cannot open", dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? absl::OkStatus() : Unavailable("cannot fsync", dir, err);
}

}  // namespace

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t spare) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  std::string text;
  std::error_code size_unknown;  // a pipe: the text grows as it comes
  const auto size = std::filesystem::file_size(path, size_unknown);
  text.reserve((size_unknown ? 0 : size) + spare);
  AdviseHugePages(text.data(), text.capacity());  // a result file runs to tens of megabytes
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) text.append(chunk, static_cast<size_t>(in.gcount()));
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return text;
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& text, AtomicWrite how) {
  const auto [dir, tmp] = DirAndTemp(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, how.mode);
  if (fd < 0) return Unavailable("cannot create", tmp, errno);
  absl::Status s = WriteAll(fd, text, tmp);
  if (s.ok() && how.durable && ::fsync(fd) != 0) s = Unavailable("cannot fsync", tmp, errno);
  if (::close(fd) != 0 && s.ok()) s = Unavailable("cannot write", tmp, errno);
  if (s.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    s = Unavailable(absl::StrCat("cannot rename ", tmp, " to").c_str(), path, errno);
  }
  if (!s.ok()) {
    std::remove(tmp.c_str());
    return s;
  }
  return how.durable ? SyncDir(dir) : absl::OkStatus();
}

}  // namespace perfgate
