#include "client/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "wire/convert.h"

namespace perfgate::client {
namespace {

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

absl::Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return absl::OkStatus();
  return Errno("cannot create spool directory", path);
}

absl::Status MakeDirs(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    PERFGATE_RETURN_IF_ERROR(MakeDir(path.substr(0, pos)));
  }
  return MakeDir(path);
}

absl::Status SyncDir(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return Errno("cannot open", dir);
  const int rc = fsync(fd);
  close(fd);
  return rc == 0 ? absl::OkStatus() : Errno("cannot fsync", dir);
}

// Writes bytes to dir/name atomically and durably: a crash leaves either the
// old file or the new one, never half of one.
absl::Status WriteDurably(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string tmp = absl::StrCat(dir, "/.", name, ".tmp");
  const std::string path = absl::StrCat(dir, "/", name);
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return Errno("cannot create", tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return Errno("cannot write", tmp);
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    close(fd);
    return Errno("cannot fsync", tmp);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) return Errno("cannot rename", tmp);
  return SyncDir(dir);
}

absl::StatusOr<std::string> Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <typename Message>
absl::StatusOr<Message> ReadMessage(const std::string& path) {
  auto bytes = Slurp(path);
  PERFGATE_RETURN_IF_ERROR(bytes);
  Message m;
  if (!m.ParseFromString(*bytes)) {
    return absl::DataLossError(absl::StrCat(path, " is truncated or corrupt (", bytes->size(),
                                            " bytes); delete it to give up that part of the run"));
  }
  return m;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') out.emplace_back(e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool BatchSequence(const std::string& name, uint64_t* seq) {
  absl::string_view v(name);
  return absl::ConsumePrefix(&v, "batch-") && absl::ConsumeSuffix(&v, ".pb") &&
         absl::SimpleAtoi(v, seq);
}

absl::StatusOr<int> Lock(const std::string& run_dir) {
  const std::string path = run_dir + "/lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0) return Errno("cannot open", path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(run_dir, " is in use by another perfgate-agent (still measuring?)"));
  }
  return fd;
}

}  // namespace

absl::StatusOr<SpooledRun> SpooledRun::Create(const std::string& dir, const RunMeta& meta) {
  const std::string path = absl::StrCat(dir, "/", meta.run_id);
  PERFGATE_RETURN_IF_ERROR(MakeDirs(path));
  auto fd = Lock(path);
  PERFGATE_RETURN_IF_ERROR(fd);
  SpooledRun run(path, *fd);
  v1::OpenRunRequest req;
  wire::ToProto(meta, &req);
  PERFGATE_RETURN_IF_ERROR(WriteDurably(path, "run.pb", req.SerializeAsString()));
  return run;
}

absl::StatusOr<SpooledRun> SpooledRun::Open(const std::string& run_dir) {
  auto fd = Lock(run_dir);
  PERFGATE_RETURN_IF_ERROR(fd);
  return SpooledRun(run_dir, *fd);
}

SpooledRun::SpooledRun(SpooledRun&& other) noexcept
    : path_(std::move(other.path_)), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

SpooledRun& SpooledRun::operator=(SpooledRun&& other) noexcept {
  if (this != &other) {
    if (lock_fd_ >= 0) close(lock_fd_);
    path_ = std::move(other.path_);
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}

SpooledRun::~SpooledRun() {
  if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
}

absl::Status SpooledRun::Append(const v1::ResultBatch& batch) {
  return WriteDurably(path_, absl::StrCat("batch-", batch.sequence(), ".pb"),
                      batch.SerializeAsString());
}

absl::Status SpooledRun::Acknowledge(uint64_t sequence) {
  auto last = LastSequence();
  PERFGATE_RETURN_IF_ERROR(last);
  // The high-water mark first: a crash between the two steps leaves a batch
  // that is resent and acknowledged as a duplicate, never a lost count.
  PERFGATE_RETURN_IF_ERROR(WriteDurably(path_, "acked", absl::StrCat(std::max(*last, sequence))));
  const std::string file = absl::StrCat(path_, "/batch-", sequence, ".pb");
  if (unlink(file.c_str()) != 0 && errno != ENOENT) return Errno("cannot remove", file);
  return absl::OkStatus();
}

absl::Status SpooledRun::Close(const v1::CloseRunRequest& close) {
  return WriteDurably(path_, "close.pb", close.SerializeAsString());
}

absl::Status SpooledRun::Remove() {
  for (const std::string& name : Entries(path_)) {
    const std::string file = absl::StrCat(path_, "/", name);
    if (unlink(file.c_str()) != 0 && errno != ENOENT) return Errno("cannot remove", file);
  }
  for (const char* hidden : {"/.run.pb.tmp", "/.acked.tmp", "/.close.pb.tmp"}) {
    unlink((path_ + hidden).c_str());
  }
  if (rmdir(path_.c_str()) != 0 && errno != ENOENT) return Errno("cannot remove", path_);
  return absl::OkStatus();
}

absl::StatusOr<v1::OpenRunRequest> SpooledRun::ReadRun() const {
  return ReadMessage<v1::OpenRunRequest>(path_ + "/run.pb");
}

absl::StatusOr<std::map<uint64_t, v1::ResultBatch>> SpooledRun::ReadPending() const {
  std::map<uint64_t, v1::ResultBatch> out;
  for (const std::string& name : Entries(path_)) {
    uint64_t seq = 0;
    if (!BatchSequence(name, &seq)) continue;
    auto batch = ReadMessage<v1::ResultBatch>(absl::StrCat(path_, "/", name));
    PERFGATE_RETURN_IF_ERROR(batch);
    if (batch->sequence() != seq) {
      return absl::DataLossError(absl::StrCat(path_, "/", name, " holds batch ", batch->sequence()));
    }
    out.emplace(seq, std::move(*batch));
  }
  return out;
}

absl::StatusOr<std::optional<v1::CloseRunRequest>> SpooledRun::ReadClose() const {
  if (access((path_ + "/close.pb").c_str(), F_OK) != 0) return std::optional<v1::CloseRunRequest>();
  auto close = ReadMessage<v1::CloseRunRequest>(path_ + "/close.pb");
  PERFGATE_RETURN_IF_ERROR(close);
  return std::optional<v1::CloseRunRequest>(std::move(*close));
}

absl::StatusOr<uint64_t> SpooledRun::LastSequence() const {
  uint64_t last = 0;
  if (access((path_ + "/acked").c_str(), F_OK) == 0) {
    auto text = Slurp(path_ + "/acked");
    PERFGATE_RETURN_IF_ERROR(text);
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &last)) {
      return absl::DataLossError(absl::StrCat(path_, "/acked is corrupt: '", *text, "'"));
    }
  }
  for (const std::string& name : Entries(path_)) {
    uint64_t seq = 0;
    if (BatchSequence(name, &seq)) last = std::max(last, seq);
  }
  return last;
}

absl::StatusOr<std::vector<std::string>> ListSpool(const std::string& dir) {
  std::vector<std::string> out;
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return out;
    return Errno("cannot read spool", dir);
  }
  for (const std::string& name : Entries(dir)) {
    const std::string path = absl::StrCat(dir, "/", name);
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) out.push_back(path);
  }
  return out;
}

}  // namespace perfgate::client
