#include "client/coordinator_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "common/token_file.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "perfgate/v1/gate.grpc.pb.h"
#include "perfgate/v1/ingest.grpc.pb.h"
#include "perfgate/v1/query.grpc.pb.h"

namespace perfgate::client {
namespace {

using Clock = std::chrono::system_clock;

// How one kind of call is made (see the header for which is which).
struct CallPolicy {
  const char* name;     // the RPC, for errors that name it
  bool name_in_error;   // Ingest calls: a run takes several, so the error says which
  bool idempotent;      // safe to send again after a transient failure
  bool wait_for_ready;  // wait for a (re)starting coordinator rather than fail fast
};

constexpr CallPolicy IngestCall(const char* name) { return {name, true, true, true}; }
constexpr CallPolicy ReadCall(const char* name) { return {name, false, true, false}; }
constexpr CallPolicy kEvaluateCall{"Evaluate", false, false, false};
constexpr CallPolicy kHealthCall{"Check", false, true, true};

absl::Status FromGrpc(const grpc::Status& s, const CallPolicy& call) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      call.name_in_error ? absl::StrCat(call.name, ": ", s.error_message())
                                         : s.error_message());
}

// A connection that broke, a reply that came too late or a transaction that
// lost a race is worth another try; anything else the coordinator meant.
bool Transient(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         s.error_code() == grpc::StatusCode::ABORTED;
}

// 400 ms after the first failure, doubling: the attempts of one call span
// a few seconds, enough for a coordinator to restart.
std::chrono::milliseconds Backoff(int attempt) { return std::chrono::milliseconds(200 << attempt); }

Clock::time_point Deadline(double seconds) {
  return Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const ClientTls& tls) {
  if (!tls.enabled) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions o;
  o.pem_root_certs = tls.ca_pem;
  o.pem_private_key = tls.key_pem;
  o.pem_cert_chain = tls.cert_pem;
  return grpc::SslCredentials(o);
}

// True when `address` names several coordinators: a list, or a target
// whose resolver may give several addresses ("dns:///name:port").
bool SeveralCoordinators(const std::string& address) {
  return absl::StrContains(address, ',') || absl::StartsWith(address, "dns:") ||
         absl::StartsWith(address, "ipv4:") || absl::StartsWith(address, "ipv6:");
}

// gRPC's target for an address: a list of IP addresses and ports without a
// scheme ("10.0.0.1:50051,10.0.0.2:50051") gets the "ipv4:" or "ipv6:"
// scheme gRPC reads such a list by.
std::string ChannelTarget(const std::string& address) {
  if (!absl::StrContains(address, ',') || absl::StrContains(address, "://") ||
      absl::StartsWith(address, "ipv4:") || absl::StartsWith(address, "ipv6:")) {
    return address;
  }
  return absl::StrCat(absl::StartsWith(address, "[") ? "ipv6:" : "ipv4:", address);
}

// The one place a connection to the coordinator is made, plaintext or TLS.
std::shared_ptr<grpc::Channel> MakeChannel(const ClientOptions& options) {
  grpc::ChannelArguments args;
  // Replicas behind one address: each call goes to the next one that is up,
  // and a replica that went away is skipped until it is back.
  if (SeveralCoordinators(options.address)) args.SetLoadBalancingPolicyName("round_robin");
  // Reconnect within seconds once a restarted coordinator is back, rather
  // than after gRPC's default backoff of up to two minutes.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  if (options.tls.enabled && !options.tls.server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls.server_name);
  }
  return grpc::CreateCustomChannel(ChannelTarget(options.address), ChannelCredentials(options.tls), args);
}

}  // namespace

absl::Status CheckCoordinatorAddress(const std::string& address) {
  if (address.empty()) return absl::InvalidArgumentError("the coordinator's address is empty");
  if (!absl::StrContains(address, ',') || absl::StrContains(address, "://")) return absl::OkStatus();
  absl::string_view list = address;
  if (absl::StartsWith(list, "ipv4:") || absl::StartsWith(list, "ipv6:")) list.remove_prefix(5);
  for (absl::string_view one : absl::StrSplit(list, ',')) {
    // "[v6]:port" or "v4:port": the host must be an IP address, not a name.
    const size_t colon = one.rfind(':');
    std::string host(one.substr(0, colon == absl::string_view::npos ? 0 : colon));
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    unsigned char buf[sizeof(in6_addr)];
    const bool ip = inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
    int port = 0;
    if (!ip || !absl::SimpleAtoi(one.substr(colon + 1), &port) || port < 1 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat(
          "coordinator address list \"", address, "\": \"", one,
          "\" is not an IP address and port; a list names each replica as IP:PORT "
          "(several replicas behind a DNS name: dns:///NAME:PORT)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ClientOptions> MakeClientOptions(const ConnectionFlags& flags) {
  auto o = MakeClientOptions(flags.address, flags.token_file, flags.timeout_s);
  PERFGATE_RETURN_IF_ERROR(o);
  auto pem = LoadTlsFiles(flags.tls_files);
  PERFGATE_RETURN_IF_ERROR(pem);
  // A CA or a client certificate means TLS; without --tls-ca the server's
  // certificate is checked against the system's roots.
  o->tls.enabled = flags.tls || !flags.tls_files.empty();
  if (!o->tls.enabled && !flags.tls_server_name.empty()) {
    return absl::InvalidArgumentError("--tls-server-name applies to TLS: add --tls or --tls-ca");
  }
  o->tls.ca_pem = std::move(pem->ca);
  o->tls.cert_pem = std::move(pem->cert);
  o->tls.key_pem = std::move(pem->key);
  o->tls.server_name = flags.tls_server_name;
  return o;
}

absl::StatusOr<ClientOptions> MakeClientOptions(const std::string& address,
                                                const std::string& token_file, double timeout_s) {
  PERFGATE_RETURN_IF_ERROR(CheckCoordinatorAddress(address));
  ClientOptions o;
  o.address = address;
  o.timeout_s = timeout_s;
  if (!token_file.empty()) {
    auto token = ReadTokenFile(token_file);
    PERFGATE_RETURN_IF_ERROR(token);
    o.token = *std::move(token);
  }
  return o;
}

class CoordinatorClient::Impl {
 public:
  explicit Impl(ClientOptions o)
      : options_(std::move(o)),
        channel_(MakeChannel(options_)),
        ingest_(v1::Ingest::NewStub(channel_)),
        gate_(v1::Gate::NewStub(channel_)),
        query_(v1::Query::NewStub(channel_)),
        health_(grpc::health::v1::Health::NewStub(channel_)) {}

  void Prepare(grpc::ClientContext* ctx, Clock::time_point deadline) const {
    ctx->set_deadline(deadline);
    if (!options_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + options_.token);
  }

  // Runs a unary call under one deadline; an idempotent call that failed
  // transiently is sent again after a pause, while attempts and time remain.
  template <typename Call>
  absl::Status Unary(const CallPolicy& policy, Call call) {
    const Clock::time_point deadline = Deadline(options_.timeout_s);
    grpc::Status s;
    for (int attempt = 1;; ++attempt) {
      grpc::ClientContext ctx;
      Prepare(&ctx, deadline);
      ctx.set_wait_for_ready(policy.wait_for_ready);
      s = call(&ctx);
      if (s.ok() || !policy.idempotent || !Transient(s) || attempt >= options_.attempts) break;
      if (Clock::now() + Backoff(attempt) >= deadline) break;
      std::this_thread::sleep_for(Backoff(attempt));
    }
    return FromGrpc(s, policy);
  }

  // Opens the run's stream when there is none, waiting up to wait_s for a
  // connection; false when none came.
  bool OpenStream(double wait_s) {
    if (stream_) return true;
    if (!channel_->WaitForConnected(Deadline(wait_s))) return false;
    stream_ctx_ = std::make_unique<grpc::ClientContext>();
    Prepare(stream_ctx_.get(), Deadline(options_.stream_timeout_s));
    stream_ = ingest_->StreamResults(stream_ctx_.get());
    return true;
  }

  void ResetStream() {
    if (stream_) {
      stream_ctx_->TryCancel();
      stream_->Finish().ok();
    }
    stream_.reset();
    stream_ctx_.reset();
  }

  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ingest::Stub> ingest_;
  std::unique_ptr<v1::Gate::Stub> gate_;
  std::unique_ptr<v1::Query::Stub> query_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
  std::unique_ptr<grpc::ClientContext> stream_ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::ResultBatch, v1::BatchAck>> stream_;
};

CoordinatorClient::CoordinatorClient(ClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

CoordinatorClient::~CoordinatorClient() { impl_->ResetStream(); }

absl::Status CoordinatorClient::RegisterAgent(const std::string& name, const std::string& hostname,
                                              const std::string& version) {
  v1::RegisterAgentRequest req;
  req.set_name(name);
  req.set_hostname(hostname);
  req.set_version(version);
  v1::RegisterAgentResponse resp;
  return impl_->Unary(IngestCall("RegisterAgent"), [&](grpc::ClientContext* ctx) {
    return impl_->ingest_->RegisterAgent(ctx, req, &resp);
  });
}

absl::Status CoordinatorClient::OpenRun(const v1::OpenRunRequest& req) {
  v1::OpenRunResponse resp;
  return impl_->Unary(IngestCall("OpenRun"),
                      [&](grpc::ClientContext* ctx) { return impl_->ingest_->OpenRun(ctx, req, &resp); });
}

bool CoordinatorClient::Reachable(double seconds) {
  if (impl_->channel_->GetState(true) == GRPC_CHANNEL_READY) return true;
  return impl_->channel_->WaitForConnected(Deadline(std::min(seconds, impl_->options_.timeout_s)));
}

absl::StatusOr<Ack> CoordinatorClient::SendBatch(const v1::ResultBatch& batch, std::optional<double> connect_wait_s) {
  const uint64_t sequence = batch.sequence();
  const ClientOptions& o = impl_->options_;
  grpc::Status last;
  for (int attempt = 1; attempt <= o.attempts; ++attempt) {
    // Wait a bounded time for the coordinator (it may be restarting); the
    // stream itself lives as long as the run.
    const double wait_s = std::min(connect_wait_s.value_or(o.timeout_s), o.timeout_s);
    if (!impl_->OpenStream(wait_s)) {
      last = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          absl::StrCat("coordinator at ", o.address, " unreachable for ", wait_s, " s"));
      break;  // it already had the whole timeout to come back
    }
    v1::BatchAck ack;
    if (impl_->stream_->Write(batch) && impl_->stream_->Read(&ack)) {
      if (ack.sequence() != sequence) {
        impl_->ResetStream();
        return absl::InternalError(absl::StrCat("coordinator acknowledged batch ", ack.sequence(),
                                                " while batch ", sequence, " was outstanding"));
      }
      return Ack{ack.sequence(), ack.duplicate(), ack.samples_stored()};
    }
    // The stream ended: its status says whether the batch was refused or lost.
    last = impl_->stream_->Finish();
    impl_->stream_.reset();
    impl_->stream_ctx_.reset();
    if (!Transient(last) && last.error_code() != grpc::StatusCode::OK) break;
    if (attempt < o.attempts) {
      std::cerr << "perfgate-agent: batch " << sequence << " not acknowledged ("
                << (last.ok() ? "stream closed" : last.error_message()) << "); resending in "
                << Backoff(attempt).count() << " ms\n";
    }
    std::this_thread::sleep_for(Backoff(attempt));
  }
  const std::string call = absl::StrCat("StreamResults (batch ", sequence, ")");
  return FromGrpc(
      last.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream closed without an acknowledgement") : last,
      IngestCall(call.c_str()));
}

absl::Status CoordinatorClient::WriteBatch(const v1::ResultBatch& batch) {
  if (impl_->OpenStream(impl_->options_.timeout_s) && impl_->stream_->Write(batch)) return absl::OkStatus();
  impl_->ResetStream();
  return absl::UnavailableError(absl::StrCat("StreamResults (batch ", batch.sequence(), "): not written"));
}

absl::StatusOr<Ack> CoordinatorClient::AwaitAck(uint64_t sequence) {
  v1::BatchAck ack;
  if (impl_->stream_ && impl_->stream_->Read(&ack) && ack.sequence() == sequence) {
    return Ack{ack.sequence(), ack.duplicate(), ack.samples_stored()};
  }
  impl_->ResetStream();
  return absl::UnavailableError(absl::StrCat("StreamResults (batch ", sequence, "): not acknowledged"));
}

absl::StatusOr<uint64_t> CoordinatorClient::CloseRun(const v1::CloseRunRequest& req) {
  if (impl_->stream_) {
    impl_->stream_->WritesDone();
    grpc::Status s = impl_->stream_->Finish();
    impl_->stream_.reset();
    impl_->stream_ctx_.reset();
    if (!s.ok() && !Transient(s)) return FromGrpc(s, IngestCall("StreamResults"));
  }
  v1::CloseRunResponse resp;
  absl::Status s = impl_->Unary(
      IngestCall("CloseRun"), [&](grpc::ClientContext* ctx) { return impl_->ingest_->CloseRun(ctx, req, &resp); });
  PERFGATE_RETURN_IF_ERROR(s);
  return resp.samples();
}

absl::StatusOr<uint32_t> CoordinatorClient::PutCalibration(const v1::PutCalibrationRequest& req) {
  v1::PutCalibrationResponse resp;
  absl::Status s = impl_->Unary(IngestCall("PutCalibration"), [&](grpc::ClientContext* ctx) {
    return impl_->ingest_->PutCalibration(ctx, req, &resp);
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return resp.stored();
}

absl::StatusOr<v1::GateReport> CoordinatorClient::Evaluate(const v1::EvaluateRequest& req) {
  v1::GateReport report;
  absl::Status s = impl_->Unary(
      kEvaluateCall, [&](grpc::ClientContext* ctx) { return impl_->gate_->Evaluate(ctx, req, &report); });
  PERFGATE_RETURN_IF_ERROR(s);
  return report;
}

absl::StatusOr<v1::GateReport> CoordinatorClient::GetReport(int64_t report_id) {
  v1::GetReportRequest req;
  req.set_report_id(report_id);
  v1::GateReport report;
  absl::Status s = impl_->Unary(
      ReadCall("GetReport"), [&](grpc::ClientContext* ctx) { return impl_->gate_->GetReport(ctx, req, &report); });
  PERFGATE_RETURN_IF_ERROR(s);
  return report;
}

absl::StatusOr<v1::ListRunsResponse> CoordinatorClient::ListRuns(const v1::ListRunsRequest& req) {
  v1::ListRunsResponse resp;
  absl::Status s = impl_->Unary(
      ReadCall("ListRuns"), [&](grpc::ClientContext* ctx) { return impl_->query_->ListRuns(ctx, req, &resp); });
  PERFGATE_RETURN_IF_ERROR(s);
  return resp;
}

absl::StatusOr<v1::RunDetail> CoordinatorClient::GetRun(const std::string& run_id) {
  v1::GetRunRequest req;
  req.set_run_id(run_id);
  v1::RunDetail resp;
  absl::Status s = impl_->Unary(
      ReadCall("GetRun"), [&](grpc::ClientContext* ctx) { return impl_->query_->GetRun(ctx, req, &resp); });
  PERFGATE_RETURN_IF_ERROR(s);
  return resp;
}

absl::StatusOr<v1::HistoryResponse> CoordinatorClient::History(const v1::HistoryRequest& req) {
  v1::HistoryResponse resp;
  absl::Status s = impl_->Unary(
      ReadCall("History"), [&](grpc::ClientContext* ctx) { return impl_->query_->History(ctx, req, &resp); });
  PERFGATE_RETURN_IF_ERROR(s);
  return resp;
}

absl::StatusOr<v1::FleetResponse> CoordinatorClient::Fleet(const v1::FleetRequest& req) {
  v1::FleetResponse resp;
  absl::Status s = impl_->Unary(
      ReadCall("Fleet"), [&](grpc::ClientContext* ctx) { return impl_->query_->Fleet(ctx, req, &resp); });
  PERFGATE_RETURN_IF_ERROR(s);
  return resp;
}

absl::StatusOr<v1::ListCalibrationsResponse> CoordinatorClient::ListCalibrations(
    const v1::ListCalibrationsRequest& req) {
  v1::ListCalibrationsResponse resp;
  absl::Status s = impl_->Unary(ReadCall("ListCalibrations"), [&](grpc::ClientContext* ctx) {
    return impl_->query_->ListCalibrations(ctx, req, &resp);
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return resp;
}

absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> CoordinatorClient::Health() {
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  absl::Status s = impl_->Unary(
      kHealthCall, [&](grpc::ClientContext* ctx) { return impl_->health_->Check(ctx, req, &resp); });
  PERFGATE_RETURN_IF_ERROR(s);
  return resp.status();
}

}  // namespace perfgate::client
