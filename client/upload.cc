#include "client/upload.h"

#include <algorithm>

#include "wire/convert.h"

namespace perfgate::client {
namespace {

v1::CloseRunRequest CloseRequest(const std::string& run_id, v1::RunStatus status, uint64_t last_sequence,
                                 const std::string& reason) {
  v1::CloseRunRequest r;
  r.set_run_id(run_id);
  r.set_status(status);
  r.set_last_sequence(last_sequence);
  r.set_reason(reason);
  return r;
}

}  // namespace

bool Unreachable(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable || s.code() == absl::StatusCode::kDeadlineExceeded;
}

absl::StatusOr<RunUpload> RunUpload::Create(CoordinatorClient& client, const RunMeta& meta,
                                            const std::string& spool_dir) {
  v1::OpenRunRequest open;
  wire::ToProto(meta, &open);
  std::optional<SpooledRun> spool;
  if (!spool_dir.empty()) {
    auto created = SpooledRun::Create(spool_dir, meta);
    if (!created.ok()) return created.status();
    spool.emplace(std::move(*created));
  }
  return RunUpload(client, std::move(open), std::move(spool));
}

bool RunUpload::WentOffline(const absl::Status& s) {
  if (!spool_ || !Unreachable(s)) return false;
  online_ = false;
  if (on_offline_) on_offline_(s);
  return true;
}

absl::Status RunUpload::Refused(const absl::Status& s) {
  ended_ = true;
  RemoveSpool();  // a refused run would be refused again on replay
  return s;
}

void RunUpload::RemoveSpool() {
  if (spool_) spool_->Remove().ok();
}

absl::Status RunUpload::Register(const std::string& hostname, const std::string& version) {
  if (!online_) return absl::OkStatus();
  absl::Status s = client_->RegisterAgent(open_.agent_name(), hostname, version);
  if (s.ok() || WentOffline(s)) return absl::OkStatus();
  return Refused(s);
}

absl::Status RunUpload::Open() {
  if (!online_) return absl::OkStatus();
  absl::Status s = client_->OpenRun(open_);
  if (s.ok() || WentOffline(s)) return absl::OkStatus();
  return Refused(s);
}

absl::Status RunUpload::Send(const CaseResult& c) {
  v1::ResultBatch batch;
  wire::ToProto(c, batch.add_cases());
  return SendBatch(std::move(batch));
}

absl::Status RunUpload::SendBatch(v1::ResultBatch batch) {
  batch.set_run_id(open_.run_id());
  batch.set_sequence(++sequence_);
  if (spool_) {
    if (absl::Status s = spool_->Append(batch); !s.ok()) {
      Abandon(s);
      return s;
    }
  }
  if (!online_) return absl::OkStatus();
  auto ack = client_->SendBatch(batch);
  if (!ack.ok()) {
    if (WentOffline(ack.status())) return absl::OkStatus();
    Abandon(ack.status());
    return ack.status();
  }
  acknowledged_ = std::max(acknowledged_, ack->sequence);
  if (!spool_) return absl::OkStatus();
  absl::Status s = spool_->Acknowledge(ack->sequence);
  if (!s.ok()) Abandon(s);
  return s;
}

void RunUpload::Abandon(const absl::Status& why) {
  if (ended_) return;
  ended_ = true;
  // Best effort: a failed run is never a baseline.
  if (online_) client_->CloseRun(CloseRequest(open_.run_id(), v1::RUN_FAILED, acknowledged_,
                                              std::string(why.message()))).ok();
  RemoveSpool();
}

absl::StatusOr<std::optional<uint64_t>> RunUpload::Close(const std::vector<std::string>& invalid_reasons) {
  close_ = CloseRequest(open_.run_id(), v1::RUN_COMPLETE, sequence_, "");
  for (const std::string& reason : invalid_reasons) close_.add_invalid_reasons(reason);
  if (!online_) return std::optional<uint64_t>();
  auto closed = client_->CloseRun(close_);
  if (!closed.ok()) {
    if (WentOffline(closed.status())) return std::optional<uint64_t>();
    return Refused(closed.status());
  }
  ended_ = true;
  RemoveSpool();
  return std::optional<uint64_t>(*closed);
}

absl::Status RunUpload::KeepInSpool() {
  if (!spool_) return absl::FailedPreconditionError("the upload has no spool");
  ended_ = true;
  return spool_->Close(close_);
}

absl::StatusOr<uint64_t> RunUpload::SendWhole(const std::vector<CaseResult>& cases) {
  if (absl::Status s = Open(); !s.ok()) return s;
  // Cases go together until a batch holds kBatchValues sample values: one
  // round trip and one transaction for many cases. A case larger than that
  // travels alone.
  v1::ResultBatch batch;
  size_t values = 0;
  for (const CaseResult& c : cases) {
    const size_t n = c.samples.size() * std::max<size_t>(c.metrics.size(), 1);
    if (batch.cases_size() > 0 && values + n > kBatchValues) {
      if (absl::Status s = SendBatch(std::move(batch)); !s.ok()) return s;
      batch = v1::ResultBatch();
      values = 0;
    }
    wire::ToProto(c, batch.add_cases());
    values += n;
  }
  if (batch.cases_size() > 0) {
    if (absl::Status s = SendBatch(std::move(batch)); !s.ok()) return s;
  }
  auto stored = Close({});
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) {
    return absl::UnavailableError("the coordinator went away before the run was closed; it is kept in " +
                                  spool_path());
  }
  return **stored;
}

absl::StatusOr<RunUpload::Replayed> RunUpload::Replay(CoordinatorClient& client, const std::string& run_dir,
                                                      const std::string& hostname, const std::string& version) {
  auto spool = SpooledRun::Open(run_dir);
  if (!spool.ok()) return spool.status();
  auto open = spool->ReadRun();
  if (!open.ok()) return open.status();
  auto pending = spool->ReadPending();
  if (!pending.ok()) return pending.status();
  auto close = spool->ReadClose();
  if (!close.ok()) return close.status();
  if (!close->has_value()) {
    // The agent stopped without ending the run: what it measured is kept,
    // but the run is incomplete and must never serve as a baseline.
    auto last = spool->LastSequence();
    if (!last.ok()) return last.status();
    *close = CloseRequest(open->run_id(), v1::RUN_FAILED, *last,
                          "the agent stopped before closing the run; replayed from its spool");
  }
  Replayed done;
  done.run_id = open->run_id();
  if (auto s = client.RegisterAgent(open->agent_name(), hostname, version); !s.ok()) return s;
  if (auto s = client.OpenRun(*open); !s.ok()) {
    if (s.code() != absl::StatusCode::kAlreadyExists) return s;
    // Closed on the coordinator already: it has the whole run.
    done.already_stored = true;
    if (auto removed = spool->Remove(); !removed.ok()) return removed;
    return done;
  }
  for (const auto& [seq, batch] : *pending) {
    auto ack = client.SendBatch(batch);
    if (!ack.ok()) return ack.status();
    if (auto s = spool->Acknowledge(seq); !s.ok()) return s;
  }
  auto stored = client.CloseRun(**close);
  if (!stored.ok()) return stored.status();
  done.batches = pending->size();
  done.samples_stored = *stored;
  if (auto removed = spool->Remove(); !removed.ok()) return removed;
  return done;
}

}  // namespace perfgate::client
