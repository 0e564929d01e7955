// The agent's gRPC client of the coordinator's Ingest service. Every call has
// a deadline; batches travel on one stream per run, each answered by an
// acknowledgement before the next is sent, and a batch whose stream broke is
// resent (same sequence) on a new stream.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/model.h"
#include "perfgate/v1/ingest.pb.h"

namespace perfgate::agent {

struct ClientOptions {
  std::string address = "127.0.0.1:50051";
  std::string token;              // sent as "authorization: Bearer <token>" when set
  double rpc_timeout_s = 30;      // unary calls
  double stream_timeout_s = 6 * 3600;  // the whole run's stream
  int attempts = 5;               // per call, on a broken connection
};

/// What the coordinator acknowledged for a batch.
struct Ack {
  uint64_t sequence = 0;
  bool duplicate = false;
  uint32_t samples_stored = 0;
};

class CoordinatorClient {
 public:
  explicit CoordinatorClient(ClientOptions options);
  ~CoordinatorClient();

  absl::Status RegisterAgent(const std::string& name, const std::string& hostname,
                             const std::string& version);
  absl::Status OpenRun(const v1::OpenRunRequest& request);
  /// Sends a batch on the run's stream and waits for its acknowledgement;
  /// a broken stream is reopened and the batch resent.
  absl::StatusOr<Ack> SendBatch(const v1::ResultBatch& batch);
  /// Ends the stream and closes the run; returns the samples the coordinator stored.
  absl::StatusOr<uint64_t> CloseRun(const v1::CloseRunRequest& request);
  /// Stores a node's calibration; returns the entries the coordinator wrote
  /// (an entry older than the one it holds is not).
  absl::StatusOr<uint32_t> PutCalibration(const v1::PutCalibrationRequest& request);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// Sends a run measured elsewhere (a result file, one side of an A/B job) as
/// a whole: opens it, one acknowledged batch per case, closes it complete.
/// When a batch is refused the run is closed as failed, so it is never a
/// baseline. Returns the samples the coordinator stored.
absl::StatusOr<uint64_t> SendCompleteRun(CoordinatorClient& client, const RunMeta& meta,
                                         const std::vector<CaseResult>& cases);

}  // namespace perfgate::agent
