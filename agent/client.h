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

namespace perfgate::agent {

struct ClientOptions {
  std::string address = "127.0.0.1:50051";
  std::string token;              // sent as "authorization: Bearer <token>" when set
  double rpc_timeout_s = 30;      // unary calls
  double stream_timeout_s = 6 * 3600;  // the whole run's stream
  int attempts = 5;               // per call, on UNAVAILABLE / DEADLINE_EXCEEDED
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
  absl::Status OpenRun(const RunMeta& meta);
  /// Sends batch `sequence` of `run_id` and waits for its acknowledgement.
  absl::StatusOr<Ack> SendBatch(const std::string& run_id, uint64_t sequence,
                                const std::vector<CaseResult>& cases);
  /// Ends the stream and closes the run; returns the samples the coordinator stored.
  absl::StatusOr<uint64_t> CloseRun(const std::string& run_id, RunStatus status,
                                    uint64_t last_sequence, const std::string& reason);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfgate::agent
