#include "client/upload.h"

#include <algorithm>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"

#include "common/status_macros.h"
#include "wire/convert.h"
#include "wire/validate.h"

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

bool Transient(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kCancelled:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<RunUpload> RunUpload::Create(CoordinatorClient& client, const RunMeta& meta,
                                            const std::string& spool_dir) {
  v1::OpenRunRequest open;
  wire::ToProto(meta, &open);
  std::optional<SpooledRun> spool;
  if (!spool_dir.empty()) {
    auto created = SpooledRun::Create(spool_dir, meta);
    PERFGATE_RETURN_IF_ERROR(created);
    spool.emplace(std::move(*created));
  }
  return RunUpload(client, std::move(open), std::move(spool));
}

bool RunUpload::WentOffline(const absl::Status& s) {
  if (!spool_ || !Transient(s)) return false;
  backoff_s_ = std::min(10.0, backoff_s_ == 0 ? 0.5 : 2 * backoff_s_);
  next_try_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                      std::chrono::duration<double>(backoff_s_));
  if (online_ && on_offline_) on_offline_(s);
  online_ = false;
  return true;
}

std::optional<double> RunUpload::ConnectWait() const {
  return spool_ ? std::optional<double>(kProbeSeconds) : std::nullopt;
}

bool RunUpload::Reachable() {
  if (!spool_ || client_->Reachable(kProbeSeconds)) return true;
  WentOffline(absl::UnavailableError(absl::StrCat("coordinator unreachable for ", kProbeSeconds, " s")));
  return false;
}

absl::Status RunUpload::Refused(const absl::Status& s) {
  if (!spool_) {
    ended_ = true;
    return s;
  }
  if (!refused_) refused_ = s;
  return absl::OkStatus();
}

void RunUpload::RemoveSpool() {
  if (spool_) spool_->Remove().ok();
}

absl::Status RunUpload::Register(const std::string& hostname, const std::string& version) {
  hostname_ = hostname;
  version_ = version;
  if (!online_ || !Reachable()) return absl::OkStatus();
  absl::Status s = client_->RegisterAgent(open_.agent_name(), hostname, version);
  registered_ = s.ok();
  if (s.ok() || WentOffline(s)) return absl::OkStatus();
  return Refused(s);
}

absl::Status RunUpload::Open() {
  if (!online_ || refused_ || !Reachable()) return absl::OkStatus();
  absl::Status s = client_->OpenRun(open_);
  if (s.ok() || WentOffline(s)) return absl::OkStatus();
  return Refused(s);
}

bool RunUpload::TryReconnect() {
  if (online_) return true;
  if (refused_ || !spool_ || std::chrono::steady_clock::now() < next_try_) return false;
  if (!Reachable()) return false;  // the back-off grows
  absl::Status s;
  if (!registered_) {
    s = client_->RegisterAgent(open_.agent_name(), hostname_, version_);
    registered_ = s.ok();
  }
  if (s.ok()) {
    s = client_->OpenRun(open_);
    // Closed already (a close that timed out here but went through there):
    // what the spool holds is resent below, and a batch the closed run
    // lacks is refused rather than lost.
    if (s.code() == absl::StatusCode::kAlreadyExists) s = absl::OkStatus();
  }
  auto pending = s.ok() ? spool_->ReadPending() : absl::StatusOr<std::map<uint64_t, v1::ResultBatch>>(s);
  if (!pending.ok() && s.ok()) s = pending.status();
  if (s.ok()) {
    for (const auto& [seq, batch] : *pending) {
      auto ack = client_->SendBatch(batch, ConnectWait());
      if (!ack.ok()) {
        s = ack.status();
        break;
      }
      acknowledged_ = std::max(acknowledged_, ack->sequence);
      s = spool_->Acknowledge(seq);
      if (!s.ok()) break;
    }
  }
  if (s.ok()) {
    online_ = true;
    backoff_s_ = 0;
    if (on_online_) on_online_();
    return true;
  }
  if (!WentOffline(s)) Refused(s).IgnoreError();
  return false;
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
  // A batch the coordinator must refuse is known as such before it is sent.
  if (absl::Status s = wire::ValidateBatch(batch); !s.ok()) {
    return Refused(absl::InvalidArgumentError(absl::StrCat("batch ", sequence_, ": ", s.message())));
  }
  if (refused_) return absl::OkStatus();
  if (!online_) {
    TryReconnect();  // sends this batch too, from the spool
    return absl::OkStatus();
  }
  if (!Reachable()) return absl::OkStatus();
  auto ack = client_->SendBatch(batch, ConnectWait());
  if (!ack.ok()) {
    if (WentOffline(ack.status())) return absl::OkStatus();
    return Refused(ack.status());
  }
  acknowledged_ = std::max(acknowledged_, ack->sequence);
  if (!spool_) return absl::OkStatus();
  absl::Status s = spool_->Acknowledge(ack->sequence);
  if (!s.ok()) Abandon(s);
  return s;
}

absl::Status RunUpload::SendAhead(v1::ResultBatch batch) {
  batch.set_run_id(open_.run_id());
  batch.set_sequence(++sequence_);
  if (absl::Status s = wire::ValidateBatch(batch); !s.ok()) {
    return Refused(absl::InvalidArgumentError(absl::StrCat("batch ", sequence_, ": ", s.message())));
  }
  if (!ahead_broken_) ahead_broken_ = !client_->WriteBatch(batch).ok();
  ahead_.push_back(std::move(batch));
  return AwaitAhead(kBatchesInFlight - 1);
}

absl::Status RunUpload::AwaitAhead(size_t keep) {
  while (ahead_.size() > keep) {
    const v1::ResultBatch& oldest = ahead_.front();
    absl::StatusOr<Ack> ack = absl::UnavailableError("the stream failed");
    if (!ahead_broken_) ack = client_->AwaitAck(oldest.sequence());
    if (!ack.ok()) {
      // The coordinator's answer (a refusal, or the batch stored already:
      // a duplicate) comes on a stream of its own, with SendBatch's retries.
      ahead_broken_ = true;
      ack = client_->SendBatch(oldest, ConnectWait());
      if (!ack.ok()) return Refused(ack.status());
    }
    acknowledged_ = std::max(acknowledged_, ack->sequence);
    ahead_.pop_front();
  }
  return absl::OkStatus();
}

void RunUpload::Abandon(const absl::Status& why) {
  if (ended_) return;
  ended_ = true;
  v1::CloseRunRequest failed = CloseRequest(open_.run_id(), v1::RUN_FAILED, sequence_, std::string(why.message()));
  // Best effort: a failed run is never a baseline. The spool keeps the
  // batches and this close, for Replay.
  if (online_) client_->CloseRun(failed).ok();
  if (spool_) spool_->Close(failed).IgnoreError();
}

absl::Status RunUpload::CloseRefused() {
  const absl::Status why = *refused_;
  ended_ = true;
  // The credential, not the run, was refused (revoked or replaced while the
  // run went on): nothing is wrong with what was measured. The run is left
  // open with its complete close in the spool, for `replay` with a valid
  // credential to finish it whole.
  if (why.code() == absl::StatusCode::kUnauthenticated || why.code() == absl::StatusCode::kPermissionDenied) {
    if (spool_) spool_->Close(close_).IgnoreError();
    return absl::Status(why.code(), absl::StrCat(why.message(), "; the run is left open on the coordinator and every ",
                                                 "batch is kept in ", spool_path(),
                                                 ": `perfgate-agent replay` with a valid credential completes it"));
  }
  close_ = CloseRequest(open_.run_id(), v1::RUN_FAILED, sequence_,
                        absl::StrCat("the coordinator refused the run: ", why.message()));
  // A run the coordinator never opened has nothing to close.
  auto closed = client_->CloseRun(close_);
  if (spool_) spool_->Close(close_).IgnoreError();
  return absl::Status(why.code(), absl::StrCat(why.message(), "; the run ",
                                               closed.ok() ? "is closed as failed"
                                                           : absl::StrCat("could not be closed as failed (",
                                                                          closed.status().message(), ")"),
                                               " and every batch is kept in ", spool_path()));
}

absl::StatusOr<std::optional<uint64_t>> RunUpload::Close(const std::vector<std::string>& invalid_reasons) {
  close_ = CloseRequest(open_.run_id(), v1::RUN_COMPLETE, sequence_, "");
  for (const std::string& reason : invalid_reasons) close_.add_invalid_reasons(reason);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(spool_ ? reconnect_s_ : 0));
  while (!refused_) {
    if (!online_ && !TryReconnect()) {
      if (refused_ || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_until(std::min(next_try_, deadline));  // back-off before the next try
      continue;
    }
    auto closed = client_->CloseRun(close_);
    if (closed.ok()) {
      ended_ = true;
      RemoveSpool();
      return std::optional<uint64_t>(*closed);
    }
    // A close that timed out or failed may pass: the run stays in the spool
    // and the close is tried again (a close already applied is accepted again).
    if (!WentOffline(closed.status())) {
      PERFGATE_RETURN_IF_ERROR(Refused(closed.status()));
    }
  }
  if (refused_) return CloseRefused();
  return std::optional<uint64_t>();
}

absl::Status RunUpload::KeepInSpool() {
  if (!spool_) return absl::FailedPreconditionError("the upload has no spool");
  ended_ = true;
  return spool_->Close(close_);
}

absl::StatusOr<uint64_t> RunUpload::SendWhole(const std::vector<CaseResult>& cases) {
  PERFGATE_RETURN_IF_ERROR(Open());
  // Cases go together until a batch holds kBatchValues sample values or
  // the most cases a batch may carry: one round trip and one transaction
  // for many cases. A case larger than that travels alone.
  // Without a spool, a batch is converted and written while the coordinator
  // stores the one before; a spooled one is kept before it is sent.
  auto send = [&](v1::ResultBatch b) { return spool_ ? SendBatch(std::move(b)) : SendAhead(std::move(b)); };
  v1::ResultBatch batch;
  size_t values = 0;
  for (const CaseResult& c : cases) {
    const size_t n = c.samples.size() * std::max<size_t>(c.metrics.size(), 1);
    // Without a spool the first batch is a quarter of the others: the
    // coordinator stores it while the next one is converted and sent.
    const size_t limit = sequence_ == 0 && !spool_ ? kBatchValues / 4 : kBatchValues;
    if (batch.cases_size() > 0 &&
        (values + n > limit || static_cast<size_t>(batch.cases_size()) >= wire::kMaxCasesPerBatch)) {
      PERFGATE_RETURN_IF_ERROR(send(std::move(batch)));
      batch = v1::ResultBatch();
      values = 0;
    }
    wire::ToProto(c, batch.add_cases());
    values += n;
  }
  if (batch.cases_size() > 0) {
    PERFGATE_RETURN_IF_ERROR(send(std::move(batch)));
  }
  PERFGATE_RETURN_IF_ERROR(AwaitAhead(0));
  auto stored = Close({});
  PERFGATE_RETURN_IF_ERROR(stored);
  if (!stored->has_value()) {
    return absl::UnavailableError("the coordinator went away before the run was closed; it is kept in " +
                                  spool_path());
  }
  return **stored;
}

absl::StatusOr<RunUpload::Replayed> RunUpload::Replay(CoordinatorClient& client, const std::string& run_dir,
                                                      const std::string& hostname, const std::string& version) {
  auto spool = SpooledRun::Open(run_dir);
  PERFGATE_RETURN_IF_ERROR(spool);
  auto open = spool->ReadRun();
  PERFGATE_RETURN_IF_ERROR(open);
  auto pending = spool->ReadPending();
  PERFGATE_RETURN_IF_ERROR(pending);
  auto close = spool->ReadClose();
  PERFGATE_RETURN_IF_ERROR(close);
  if (!close->has_value()) {
    // The agent stopped without ending the run: what it measured is kept,
    // but the run is incomplete and must never serve as a baseline.
    auto last = spool->LastSequence();
    PERFGATE_RETURN_IF_ERROR(last);
    *close = CloseRequest(open->run_id(), v1::RUN_FAILED, *last,
                          "the agent stopped before closing the run; replayed from its spool");
  }
  Replayed done;
  done.run_id = open->run_id();
  PERFGATE_RETURN_IF_ERROR(client.RegisterAgent(open->agent_name(), hostname, version));
  bool closed_there = false;
  if (auto s = client.OpenRun(*open); !s.ok()) {
    if (s.code() != absl::StatusCode::kAlreadyExists) return s;
    closed_there = true;  // closed on the coordinator: it must hold what is left here
  }
  for (const auto& [seq, batch] : *pending) {
    auto ack = client.SendBatch(batch);
    if (!ack.ok()) {
      if (closed_there) {
        return absl::FailedPreconditionError(absl::StrCat(
            "run ", open->run_id(), " is closed on the coordinator without batch ", seq,
            " of the spool (", ack.status().message(), "); the spool is kept"));
      }
      return ack.status();
    }
    PERFGATE_RETURN_IF_ERROR(spool->Acknowledge(seq));
  }
  if (closed_there) {
    done.already_stored = true;
    PERFGATE_RETURN_IF_ERROR(spool->Remove());
    return done;
  }
  auto stored = client.CloseRun(**close);
  if (!stored.ok() && stored.status().code() == absl::StatusCode::kFailedPrecondition &&
      (*close)->status() == v1::RUN_COMPLETE) {
    // A batch is missing (its spool file was corrupt and deleted): the run
    // is closed as failed with what it has, never left open for ever.
    v1::CloseRunRequest failed = **close;
    failed.set_status(v1::RUN_FAILED);
    failed.set_reason(absl::StrCat("replayed without part of the run: ", stored.status().message()));
    stored = client.CloseRun(failed);
  }
  PERFGATE_RETURN_IF_ERROR(stored);
  done.batches = pending->size();
  done.samples_stored = *stored;
  PERFGATE_RETURN_IF_ERROR(spool->Remove());
  return done;
}

}  // namespace perfgate::client
