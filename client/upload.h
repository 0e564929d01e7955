// The upload of one run to the coordinator: register the agent, OpenRun,
// numbered ResultBatch messages each acknowledged, CloseRun complete; a run
// whose batch is refused is closed as failed, so that it never serves as a
// baseline. The one place this protocol is written: `perfgate-agent run`
// (case by case, as they finish), `replay` (a spooled run), `ab` (both sides
// whole) and `perfgate ingest` (result files whole) all use it.
//
// With a spool (spool.h) every batch is written to disk before the wire, and
// a coordinator that cannot be reached (UNAVAILABLE, DEADLINE_EXCEEDED, once
// the client's own retries are spent) takes the upload offline: the run goes
// on into the spool, for Replay to send later. Without one, every failure is
// the caller's error. A refusal (any other error) removes the spool: a
// refused run would be refused again on replay.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/coordinator_client.h"
#include "client/spool.h"
#include "common/model.h"
#include "perfgate/v1/ingest.pb.h"

namespace perfgate::client {

/// The coordinator could not be reached, as opposed to refusing what it got.
bool Unreachable(const absl::Status& s);

class RunUpload {
 public:
  /// Sample values (samples x metrics) SendWhole puts in one batch at most,
  /// unless a single case holds more: about 1 MB on the wire.
  static constexpr size_t kBatchValues = 65536;

  /// An upload of the run `meta` over `client` (which must outlive it).
  /// With a non-empty `spool_dir` the run is spooled in <spool_dir>/<run_id>/
  /// (created here: the error is the spool's); empty, nothing is spooled.
  static absl::StatusOr<RunUpload> Create(CoordinatorClient& client, const RunMeta& meta,
                                          const std::string& spool_dir = "");
  RunUpload(RunUpload&&) noexcept = default;
  RunUpload& operator=(RunUpload&&) noexcept = default;

  /// Called once when an unreachable coordinator takes a spooled upload
  /// offline, with the error that did.
  void OnOffline(std::function<void(const absl::Status&)> f) { on_offline_ = std::move(f); }

  /// Registers (or updates) the run's agent.
  absl::Status Register(const std::string& hostname, const std::string& version);
  /// Opens the run on the coordinator.
  absl::Status Open();
  /// The next batch: one case, spooled first, then sent and acknowledged
  /// while online. A refused batch closes the run as failed.
  absl::Status Send(const CaseResult& c);
  /// Closes the run complete, with the reasons it is invalid for gating.
  /// Returns the samples the coordinator stored (the spool is removed), or
  /// nullopt when the upload is offline: then KeepInSpool() records the close.
  absl::StatusOr<std::optional<uint64_t>> Close(const std::vector<std::string>& invalid_reasons);
  /// Records the close of an offline upload in its spool, for Replay.
  absl::Status KeepInSpool();
  /// Gives the run up after a failure outside the upload: closes it as failed
  /// (best effort, when online) and removes the spool. Does nothing once the
  /// upload has ended.
  void Abandon(const absl::Status& why);

  /// Open, the cases in batches of up to kBatchValues sample values (many
  /// cases a batch), Close: a run measured elsewhere sent whole. Returns the
  /// samples stored.
  absl::StatusOr<uint64_t> SendWhole(const std::vector<CaseResult>& cases);

  bool online() const { return online_; }
  const std::string& run_id() const { return open_.run_id(); }
  /// The run's spool directory; empty without one.
  std::string spool_path() const { return spool_ ? spool_->path() : std::string(); }

  /// What Replay did with one spooled run.
  struct Replayed {
    std::string run_id;
    bool already_stored = false;  // the coordinator had the whole run: only the spool was removed
    size_t batches = 0;           // batches sent
    uint64_t samples_stored = 0;
  };
  /// Sends one spooled run (measured while the coordinator was away, or by an
  /// agent that stopped): opens it again, sends what was never acknowledged,
  /// closes it (as failed, when the agent never ended it) and removes it from
  /// the spool. FAILED_PRECONDITION when an agent still holds it.
  static absl::StatusOr<Replayed> Replay(CoordinatorClient& client, const std::string& run_dir,
                                         const std::string& hostname, const std::string& version);

 private:
  RunUpload(CoordinatorClient& client, v1::OpenRunRequest open, std::optional<SpooledRun> spool)
      : client_(&client), open_(std::move(open)), spool_(std::move(spool)) {}
  // Numbers, spools and sends one batch of cases.
  absl::Status SendBatch(v1::ResultBatch batch);
  // True when `s` takes the upload offline: the coordinator is unreachable
  // and there is a spool to measure on into.
  bool WentOffline(const absl::Status& s);
  // A step was refused: the upload ends, its spool removed; returns `s`.
  absl::Status Refused(const absl::Status& s);
  void RemoveSpool();

  CoordinatorClient* client_;
  v1::OpenRunRequest open_;
  std::optional<SpooledRun> spool_;
  std::function<void(const absl::Status&)> on_offline_;
  bool online_ = true;
  bool ended_ = false;
  uint64_t sequence_ = 0;       // the last batch numbered
  uint64_t acknowledged_ = 0;   // the last batch the coordinator acknowledged
  v1::CloseRunRequest close_;   // set by Close
};

}  // namespace perfgate::client
