// The spool of a run upload (upload.h): an on-disk log of a run, written and
// fsynced before each batch is sent and trimmed as batches are acknowledged,
// so that a run measured while the coordinator is away is not lost.
// RunUpload::Replay (`perfgate-agent replay`) sends what a spool holds. Layout: <dir>/<run_id>/ with run.pb (the
// OpenRunRequest), batch-<seq>.pb (unacknowledged ResultBatch messages),
// acked (the highest acknowledged sequence), close.pb (the CloseRunRequest,
// once the run has ended) and lock (held with flock while an agent owns it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "perfgate/v1/ingest.pb.h"

namespace perfgate::client {

/// One run's directory in the spool, owned (locked) by this process.
class SpooledRun {
 public:
  /// Creates <dir>/<run_id>/ (and dir itself), records the run, takes the lock.
  static absl::StatusOr<SpooledRun> Create(const std::string& dir, const RunMeta& meta);
  /// Locks an existing run directory; FAILED_PRECONDITION when another
  /// process holds it (an agent still measuring).
  static absl::StatusOr<SpooledRun> Open(const std::string& run_dir);
  SpooledRun(SpooledRun&& other) noexcept;
  SpooledRun& operator=(SpooledRun&& other) noexcept;
  SpooledRun(const SpooledRun&) = delete;
  SpooledRun& operator=(const SpooledRun&) = delete;
  ~SpooledRun();

  /// Writes batch `batch.sequence()` durably (temporary file, fsync, rename).
  absl::Status Append(const v1::ResultBatch& batch);
  /// Forgets an acknowledged batch and records the high-water mark.
  absl::Status Acknowledge(uint64_t sequence);
  /// Records how the run ended, for a later replay.
  absl::Status Close(const v1::CloseRunRequest& close);
  /// Deletes the run's directory: the coordinator has all of it.
  absl::Status Remove();

  /// The run as recorded at Create.
  absl::StatusOr<v1::OpenRunRequest> ReadRun() const;
  /// Unacknowledged batches by sequence. A truncated or corrupt file is
  /// DATA_LOSS naming it.
  absl::StatusOr<std::map<uint64_t, v1::ResultBatch>> ReadPending() const;
  /// The recorded end of the run, if it ended.
  absl::StatusOr<std::optional<v1::CloseRunRequest>> ReadClose() const;
  /// Highest sequence ever written (acknowledged or pending); 0 when none.
  absl::StatusOr<uint64_t> LastSequence() const;

  const std::string& path() const { return path_; }

 private:
  SpooledRun(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  std::string path_;
  int lock_fd_ = -1;
};

/// The run directories in a spool, oldest name first; empty when the spool
/// does not exist.
absl::StatusOr<std::vector<std::string>> ListSpool(const std::string& dir);

}  // namespace perfgate::client
