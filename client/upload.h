// The upload of one run to the coordinator: register the agent, OpenRun,
// numbered ResultBatch messages each acknowledged, CloseRun complete. The one
// place this protocol is written: `perfgate-agent run` (case by case, as they
// finish), `replay` (a spooled run), `ab` (both sides whole) and `perfgate
// ingest` (result files whole) all use it.
//
// With a spool (spool.h) every batch is written to disk before the wire and
// nothing measured is ever given up:
//  - a spooled upload looks at the connection first (kProbeSeconds) and
//    goes offline at once when the coordinator cannot be reached, so that an
//    absent coordinator costs the run a second per attempt, never a whole
//    call timeout (the agent measures between these calls);
//  - an error that may pass (Transient: UNAVAILABLE, DEADLINE_EXCEEDED,
//    ABORTED, INTERNAL, UNKNOWN, RESOURCE_EXHAUSTED, CANCELLED) takes the
//    upload offline; the run goes on into the spool, and before each later
//    batch the coordinator is tried again with doubling back-off (0.5 s to
//    10 s); once it answers, the run is reopened, what the spool holds is
//    sent and the upload is online again. Close keeps trying for the
//    reconnect window, then leaves the run in the spool for Replay;
//  - an error that can never succeed (a refusal: INVALID_ARGUMENT,
//    FAILED_PRECONDITION, ...) ends the run: nothing more is sent, the run is
//    closed as failed with the refusal as its reason, and the spool keeps
//    every batch; Close returns the refusal. The caller measures on.
// Without a spool, every failure is the caller's error, as it happens.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/coordinator_client.h"
#include "client/spool.h"
#include "common/run_types.h"
#include "perfgate/v1/ingest.pb.h"

namespace perfgate::client {

/// The coordinator could not be reached, as opposed to refusing what it got.
bool Unreachable(const absl::Status& s);
/// The same call may succeed later: unreachable, or an error of the
/// coordinator or its database (INTERNAL, ABORTED, ...), not a refusal.
bool Transient(const absl::Status& s);

class RunUpload {
 public:
  /// Sample values (samples x metrics) SendWhole puts in one batch at most,
  /// unless a single case holds more: about 4 MB on the wire (the
  /// coordinator takes messages up to 64 MB). Fewer, larger batches: each
  /// costs the coordinator a transaction and a dozen statements besides
  /// its COPY.
  static constexpr size_t kBatchValues = 262144;
  /// Batches SendWhole without a spool has written and not yet seen
  /// acknowledged at most: the one the coordinator stores and the next,
  /// which travels meanwhile.
  static constexpr size_t kBatchesInFlight = 2;
  /// How long a spooled upload waits for a connection before each call
  /// while the coordinator is away.
  static constexpr double kProbeSeconds = 1.0;

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
  /// Called each time an offline upload gets back online.
  void OnOnline(std::function<void()> f) { on_online_ = std::move(f); }
  /// How long Close keeps retrying an unreachable coordinator (default 300 s).
  void SetReconnectWindow(double seconds) { reconnect_s_ = seconds; }

  /// Registers (or updates) the run's agent.
  absl::Status Register(const std::string& hostname, const std::string& version);
  /// Opens the run on the coordinator.
  absl::Status Open();
  /// The next batch: one case, spooled first, then sent and acknowledged
  /// while online (offline: after a retry of the coordinator, when its
  /// back-off allows). With a spool only a failure to write it is an error.
  absl::Status Send(const CaseResult& c);
  /// Closes the run complete, with the reasons it is invalid for gating.
  /// Returns the samples the coordinator stored (the spool is removed), or
  /// nullopt when the coordinator stayed away for the reconnect window:
  /// then KeepInSpool() records the close. A refused run is closed as
  /// failed, its spool kept, and the refusal returned.
  absl::StatusOr<std::optional<uint64_t>> Close(const std::vector<std::string>& invalid_reasons);
  /// Records the close of an offline upload in its spool, for Replay.
  absl::Status KeepInSpool();
  /// Gives the run up after a failure outside the upload: closes it as failed
  /// (best effort, when online) and records that close in the spool, which
  /// keeps every batch. Does nothing once the upload has ended.
  void Abandon(const absl::Status& why);

  /// Open, the cases in batches of up to kBatchValues sample values and
  /// wire::kMaxCasesPerBatch cases, Close: a run measured elsewhere sent whole. Returns the
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
  /// closes it (as failed, when the agent never ended it or a batch is
  /// missing from the spool: then with what it has) and removes it from the
  /// spool. A run the coordinator closed already is removed only when it
  /// holds every batch left in the spool. FAILED_PRECONDITION when an agent
  /// still holds it.
  static absl::StatusOr<Replayed> Replay(CoordinatorClient& client, const std::string& run_dir,
                                         const std::string& hostname, const std::string& version);

 private:
  RunUpload(CoordinatorClient& client, v1::OpenRunRequest open, std::optional<SpooledRun> spool)
      : client_(&client), open_(std::move(open)), spool_(std::move(spool)) {}
  // Numbers, spools and sends one batch of cases.
  absl::Status SendBatch(v1::ResultBatch batch);
  // Without a spool: numbers and checks one batch and writes it without
  // waiting for the one before to be acknowledged (kBatchesInFlight).
  absl::Status SendAhead(v1::ResultBatch batch);
  // Takes acknowledgements until at most `keep` batches written ahead are
  // unacknowledged. Once the stream failed, those left are sent one at a
  // time with their retries, as SendBatch sends them.
  absl::Status AwaitAhead(size_t keep);
  // True when `s` takes the upload offline: it may pass and there is a
  // spool to measure on into.
  bool WentOffline(const absl::Status& s);
  // A step was refused: with a spool, nothing more is sent and the run will
  // be closed as failed (returns OK); without one, returns `s`.
  absl::Status Refused(const absl::Status& s);
  // Offline, once the back-off allows: reopen the run, send what the spool
  // holds; true when back online.
  bool TryReconnect();
  // With a spool: false, and offline, when no connection comes up within
  // kProbeSeconds. Without one: true (the call's own timeout decides).
  bool Reachable();
  // How long a send waits for a connection: kProbeSeconds with a spool.
  std::optional<double> ConnectWait() const;
  void RemoveSpool();
  absl::Status CloseRefused();

  CoordinatorClient* client_;
  v1::OpenRunRequest open_;
  std::optional<SpooledRun> spool_;
  std::function<void(const absl::Status&)> on_offline_;
  std::function<void()> on_online_;
  bool online_ = true;
  bool registered_ = false;
  std::optional<absl::Status> refused_;  // the refusal that ended the run
  double reconnect_s_ = 300;
  double backoff_s_ = 0;                 // the pause before the next retry
  std::chrono::steady_clock::time_point next_try_{};
  std::string hostname_, version_;       // for registering again
  bool ended_ = false;
  uint64_t sequence_ = 0;       // the last batch numbered
  uint64_t acknowledged_ = 0;   // the last batch the coordinator acknowledged
  std::deque<v1::ResultBatch> ahead_;  // written by SendAhead, not yet acknowledged
  bool ahead_broken_ = false;          // the stream SendAhead wrote on failed
  v1::CloseRunRequest close_;   // set by Close
};

}  // namespace perfgate::client
