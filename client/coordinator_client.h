// The one client of the coordinator: Ingest (register, open, stream, close a
// run), Gate (evaluate, fetch a stored report), Query (runs, a run, a
// metric's history, a sweep's fleet) and the standard health check, for the
// agent and the `perfgate` command alike.
//
// Every call has a deadline, set from ClientOptions::timeout_s and covering
// its retries. Calls that may safely run twice are retried with bounded
// back-off (attempts, doubling pauses, never past the deadline) when they fail
// transiently (UNAVAILABLE, DEADLINE_EXCEEDED with time left, ABORTED):
//   - every Ingest call: RegisterAgent is an upsert, OpenRun accepts a run
//     that is still running, a batch carries its sequence number (a resent
//     one is acknowledged as a duplicate), CloseRun accepts the same close again,
//     PutCalibration keeps the newer of two entries;
//   - GetReport and every Query call, which only read;
//   - the health check.
// Gate.Evaluate is never retried: each call stores a new report.
// Ingest calls and the health check wait for a coordinator that is still
// (re)starting, up to the deadline; the others fail fast when none listens.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/tls_files.h"
#include "grpc/health/v1/health.pb.h"
#include "perfgate/v1/gate.pb.h"
#include "perfgate/v1/ingest.pb.h"
#include "perfgate/v1/query.pb.h"

namespace perfgate::client {

/// TLS on the channel (docs/security.md).
struct ClientTls {
  bool enabled = false;     // speak TLS; off: plaintext
  std::string ca_pem;       // CA certificates the server's must chain to; empty: the system's roots
  std::string cert_pem;     // this client's certificate chain, for mutual TLS; empty: none
  std::string key_pem;      // its private key
  std::string server_name;  // the name the server's certificate must carry; empty: the address's host
};

/// How to reach the coordinator and how long to wait for it.
struct ClientOptions {
  std::string address = "127.0.0.1:50051";  // or replicas: "IP:PORT,IP:PORT" (CheckCoordinatorAddress)
  std::string token;                   // sent as "authorization: Bearer <token>" when set
  ClientTls tls;
  double timeout_s = 30;               // deadline of each call, its retries included
  double stream_timeout_s = 6 * 3600;  // the whole run's result stream
  int attempts = 5;                    // at most, for a call that may be retried
};

/// The connection options as a command line gives them: every command that
/// talks to the coordinator takes these (AddConnectionOptions in
/// connection_options.h adds the flags).
struct ConnectionFlags {
  std::string address = "127.0.0.1:50051";
  std::string token_file;     // --token-file: the bearer token, first line
  bool tls = false;           // --tls: TLS with the system's CA certificates
  TlsFiles tls_files;         // --tls-ca (implies TLS), --tls-cert and --tls-key (mutual TLS)
  std::string tls_server_name;  // --tls-server-name
  double timeout_s = 30;
};

/// Options for the coordinator the flags name: the token read from its file
/// (ReadTokenFile: the error names the file) and the TLS files read and
/// checked (LoadTlsFiles), so that a bad file is told before any call.
absl::StatusOr<ClientOptions> MakeClientOptions(const ConnectionFlags& flags);

/// OK for one address ("host:port", any gRPC target) and for a list of
/// replicas ("10.0.0.1:50051,10.0.0.2:50051", balanced round-robin); a list
/// naming a host by name gets INVALID_ARGUMENT saying how to write it.
absl::Status CheckCoordinatorAddress(const std::string& address);

/// The same with only an address, a token file and a timeout (plaintext).
absl::StatusOr<ClientOptions> MakeClientOptions(const std::string& address,
                                                const std::string& token_file, double timeout_s);

/// What the coordinator acknowledged for a batch.
struct Ack {
  uint64_t sequence = 0;
  bool duplicate = false;
  uint32_t samples_stored = 0;
};

/// A connection to one coordinator. Errors of Ingest calls start with the
/// call's name ("OpenRun: ..."), since a run takes several; errors of the
/// other calls carry the coordinator's message as it is, for the command to
/// name itself. Status codes are gRPC's.
class CoordinatorClient {
 public:
  /// Sets up the channel; nothing is sent until the first call.
  explicit CoordinatorClient(ClientOptions options);
  ~CoordinatorClient();

  /// Registers (or updates) the agent that measures.
  absl::Status RegisterAgent(const std::string& name, const std::string& hostname,
                             const std::string& version);
  /// Opens a run (again, when it is still running).
  absl::Status OpenRun(const v1::OpenRunRequest& request);
  /// Sends a batch on the run's stream and waits for its acknowledgement;
  /// a broken stream is reopened and the batch resent, waiting for a
  /// connection up to `connect_wait_s` (nullopt: the call timeout).
  absl::StatusOr<Ack> SendBatch(const v1::ResultBatch& batch, std::optional<double> connect_wait_s = std::nullopt);
  /// Writes a batch on the run's stream without waiting for its
  /// acknowledgement, so that it travels while the coordinator stores the
  /// one before (it stores a stream's batches in order); AwaitAck takes the
  /// acknowledgements in the order the batches were written. Either call
  /// failing ends the stream, whatever the cause (UNAVAILABLE): the batches
  /// not acknowledged go again with SendBatch, which reports the
  /// coordinator's own answer (a batch it stored already is acknowledged
  /// as a duplicate).
  absl::Status WriteBatch(const v1::ResultBatch& batch);
  /// The acknowledgement of the oldest batch written and not yet
  /// acknowledged, which must be batch `sequence`.
  absl::StatusOr<Ack> AwaitAck(uint64_t sequence);
  /// Ends the stream and closes the run; returns the samples the coordinator stored.
  absl::StatusOr<uint64_t> CloseRun(const v1::CloseRunRequest& request);
  /// Stores a node's calibration; returns the entries the coordinator wrote
  /// (an entry older than the one it holds is not).
  absl::StatusOr<uint32_t> PutCalibration(const v1::PutCalibrationRequest& request);

  /// Judges a candidate run and returns the stored report; sent once.
  absl::StatusOr<v1::GateReport> Evaluate(const v1::EvaluateRequest& request);
  /// A stored report, as Evaluate returned it.
  absl::StatusOr<v1::GateReport> GetReport(int64_t report_id);

  /// Recent runs, newest first.
  absl::StatusOr<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest& request);
  /// One run with its environment and summaries.
  absl::StatusOr<v1::RunDetail> GetRun(const std::string& run_id);
  /// A metric's series of run medians and its change points.
  absl::StatusOr<v1::HistoryResponse> History(const v1::HistoryRequest& request);
  /// The outlier nodes of one sweep.
  absl::StatusOr<v1::FleetResponse> Fleet(const v1::FleetRequest& request);
  /// The nodes' stored calibrations.
  absl::StatusOr<v1::ListCalibrationsResponse> ListCalibrations(const v1::ListCalibrationsRequest& request);

  /// True when a connection to the coordinator is up or comes up within
  /// `seconds` (at most the call timeout); a quick look that sends nothing.
  bool Reachable(double seconds);

  /// The coordinator's grpc.health.v1 status, waiting up to the deadline for
  /// one that is still starting.
  absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> Health();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfgate::client
