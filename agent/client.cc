#include "agent/client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "perfgate/v1/ingest.grpc.pb.h"
#include "proto/convert.h"

namespace perfgate::agent {
namespace {

absl::Status FromGrpc(const grpc::Status& s, const std::string& call) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(call, ": ", s.error_message()));
}

// A connection that broke (or a transaction that lost a race) is worth
// another try; a deadline already spent waiting for the coordinator is not.
bool Retryable(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::ABORTED;
}

}  // namespace

class CoordinatorClient::Impl {
 public:
  explicit Impl(ClientOptions o) : options_(std::move(o)) {
    grpc::ChannelArguments args;
    // Reconnect within seconds once a restarted coordinator is back, rather
    // than after gRPC's default backoff of up to two minutes.
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
    channel_ = grpc::CreateCustomChannel(options_.address, grpc::InsecureChannelCredentials(), args);
    stub_ = v1::Ingest::NewStub(channel_);
  }

  std::chrono::system_clock::time_point Deadline(double seconds) const {
    return std::chrono::system_clock::now() +
           std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  }

  void Prepare(grpc::ClientContext* ctx, double timeout_s) const {
    ctx->set_deadline(Deadline(timeout_s));
    if (!options_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + options_.token);
  }

  // Runs a unary call with retries on transient failures, backing off.
  template <typename Call>
  absl::Status Unary(const std::string& name, Call call) {
    grpc::Status s;
    for (int attempt = 1; attempt <= options_.attempts; ++attempt) {
      grpc::ClientContext ctx;
      Prepare(&ctx, options_.rpc_timeout_s);
      ctx.set_wait_for_ready(true);
      s = call(&ctx);
      if (s.ok() || !Retryable(s)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200 << attempt));
    }
    return FromGrpc(s, name);
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
  std::unique_ptr<v1::Ingest::Stub> stub_;
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
  return impl_->Unary("RegisterAgent", [&](grpc::ClientContext* ctx) {
    return impl_->stub_->RegisterAgent(ctx, req, &resp);
  });
}

absl::Status CoordinatorClient::OpenRun(const v1::OpenRunRequest& req) {
  v1::OpenRunResponse resp;
  return impl_->Unary("OpenRun",
                      [&](grpc::ClientContext* ctx) { return impl_->stub_->OpenRun(ctx, req, &resp); });
}

absl::StatusOr<uint32_t> CoordinatorClient::PutCalibration(const v1::PutCalibrationRequest& req) {
  v1::PutCalibrationResponse resp;
  absl::Status s = impl_->Unary("PutCalibration", [&](grpc::ClientContext* ctx) {
    return impl_->stub_->PutCalibration(ctx, req, &resp);
  });
  if (!s.ok()) return s;
  return resp.stored();
}

absl::StatusOr<Ack> CoordinatorClient::SendBatch(const v1::ResultBatch& batch) {
  const uint64_t sequence = batch.sequence();
  grpc::Status last;
  for (int attempt = 1; attempt <= impl_->options_.attempts; ++attempt) {
    if (!impl_->stream_) {
      // Wait a bounded time for the coordinator (it may be restarting); the
      // stream itself lives as long as the run.
      if (!impl_->channel_->WaitForConnected(impl_->Deadline(impl_->options_.rpc_timeout_s))) {
        last = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            absl::StrCat("coordinator at ", impl_->options_.address,
                                         " unreachable for ", impl_->options_.rpc_timeout_s, " s"));
        break;  // it already had the whole timeout to come back
      }
      impl_->stream_ctx_ = std::make_unique<grpc::ClientContext>();
      impl_->Prepare(impl_->stream_ctx_.get(), impl_->options_.stream_timeout_s);
      impl_->stream_ = impl_->stub_->StreamResults(impl_->stream_ctx_.get());
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
    if (!Retryable(last) && last.error_code() != grpc::StatusCode::OK) break;
    if (attempt < impl_->options_.attempts) {
      std::cerr << "perfgate-agent: batch " << sequence << " not acknowledged ("
                << (last.ok() ? "stream closed" : last.error_message()) << "); resending in "
                << (200 << attempt) << " ms\n";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200 << attempt));
  }
  return FromGrpc(last.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream closed without an acknowledgement") : last,
                  absl::StrCat("StreamResults (batch ", sequence, ")"));
}

absl::StatusOr<uint64_t> CoordinatorClient::CloseRun(const v1::CloseRunRequest& req) {
  if (impl_->stream_) {
    impl_->stream_->WritesDone();
    grpc::Status s = impl_->stream_->Finish();
    impl_->stream_.reset();
    impl_->stream_ctx_.reset();
    if (!s.ok() && !Retryable(s)) return FromGrpc(s, "StreamResults");
  }
  v1::CloseRunResponse resp;
  absl::Status s = impl_->Unary(
      "CloseRun", [&](grpc::ClientContext* ctx) { return impl_->stub_->CloseRun(ctx, req, &resp); });
  if (!s.ok()) return s;
  return resp.samples();
}

absl::StatusOr<uint64_t> SendCompleteRun(CoordinatorClient& client, const RunMeta& meta,
                                         const std::vector<CaseResult>& cases) {
  v1::OpenRunRequest open;
  wire::ToProto(meta, &open);
  if (auto s = client.OpenRun(open); !s.ok()) return s;
  uint64_t sequence = 0;
  v1::CloseRunRequest close;
  close.set_run_id(meta.run_id);
  for (const CaseResult& c : cases) {
    v1::ResultBatch batch;
    batch.set_run_id(meta.run_id);
    batch.set_sequence(++sequence);
    wire::ToProto(c, batch.add_cases());
    auto ack = client.SendBatch(batch);
    if (!ack.ok()) {
      close.set_status(v1::RUN_FAILED);
      close.set_last_sequence(sequence - 1);
      close.set_reason(std::string(ack.status().message()));
      client.CloseRun(close).ok();  // best effort: a failed run is never a baseline
      return ack.status();
    }
  }
  close.set_status(v1::RUN_COMPLETE);
  close.set_last_sequence(sequence);
  return client.CloseRun(close);
}

}  // namespace perfgate::agent
