#include "client/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_io.h"
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

// Writes bytes to dir/name atomically and durably: a crash leaves either the
// old file or the new one, never half of one. A failure is INTERNAL, as
// every spool error: UNAVAILABLE would read as a coordinator out of reach.
absl::Status WriteDurably(const std::string& dir, const std::string& name, const std::string& bytes) {
  const absl::Status s = WriteFileAtomically(absl::StrCat(dir, "/", name), bytes, {.mode = 0600, .durable = true});
  return s.ok() ? s : absl::InternalError(s.message());
}

template <typename Message>
absl::StatusOr<Message> ReadMessage(const std::string& path) {
  auto bytes = ReadWholeFile(path);
  PERFGATE_RETURN_IF_ERROR(bytes);
  Message m;
  if (!m.ParseFromString(*bytes)) {
    return absl::DataLossError(absl::StrCat(path, " is truncated or corrupt (", bytes->size(),
                                            " bytes); delete it to give up that part of the run"));
  }
  return m;
}

// The hidden temporary files (".NAME.tmp.PID") that WriteFileAtomically
// leaves only when it was killed between writing and renaming.
void RemoveLeftOverTemporaries(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> temporaries;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 1 && name[0] == '.' && name.find(".tmp.") != std::string::npos) temporaries.push_back(name);
  }
  closedir(d);
  for (const std::string& name : temporaries) unlink(absl::StrCat(dir, "/", name).c_str());
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
  RemoveLeftOverTemporaries(path_);  // of writes a crash cut short
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
    auto text = ReadWholeFile(path_ + "/acked");
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
