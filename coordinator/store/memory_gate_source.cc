#include "coordinator/store/memory_gate_source.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "common/row_limits.h"
#include "common/status_macros.h"

namespace perfgate::coordinator::store {
namespace {

// The key calibrations are kept by, and ordered by before their age.
std::tuple<std::string, std::string, std::string, std::string, std::string> KeyOf(const CalibrationRecord& c) {
  return {c.sku, c.node, c.entry.benchmark, c.entry.metric, c.environment_hash};
}

}  // namespace

void InMemoryGateSource::PutRun(RunRecord run, std::vector<StoredSummary> summaries, RunSamples samples) {
  std::sort(summaries.begin(), summaries.end(), [](const StoredSummary& a, const StoredSummary& b) {
    return std::tie(a.summary.benchmark, a.summary.metric) < std::tie(b.summary.benchmark, b.summary.metric);
  });
  std::string id = absl::AsciiStrToLower(run.meta.run_id);
  std::lock_guard<std::mutex> lock(mu_);
  runs_[std::move(id)] = {std::move(run), std::move(summaries), std::move(samples)};
}

void InMemoryGateSource::PutCalibration(CalibrationRecord calibration) {
  std::lock_guard<std::mutex> lock(mu_);
  for (CalibrationRecord& kept : calibrations_) {
    if (KeyOf(kept) != KeyOf(calibration)) continue;
    if (calibration.measured_at > kept.measured_at) kept = std::move(calibration);
    return;
  }
  calibrations_.push_back(std::move(calibration));
}

absl::StatusOr<const InMemoryGateSource::Stored*> InMemoryGateSource::Find(const std::string& run_id) const {
  PERFGATE_ASSIGN_OR_RETURN(const std::string id, NormalizeRunId(run_id));
  auto it = runs_.find(id);
  if (it == runs_.end()) return absl::NotFoundError(absl::StrCat("run ", id, " does not exist"));
  return &it->second;
}

absl::StatusOr<RunRecord> InMemoryGateSource::GetRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  PERFGATE_ASSIGN_OR_RETURN(const Stored* s, Find(run_id));
  return s->run;
}

absl::StatusOr<std::vector<RunRecord>> InMemoryGateSource::FindBaselineRuns(const BaselineQuery& q) {
  if (q.branch.empty() || q.sku.empty()) {
    return absl::InvalidArgumentError("a baseline query needs a branch and a SKU");
  }
  const std::string exclude = absl::AsciiStrToLower(q.exclude_run_id);
  std::vector<RunRecord> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, s] : runs_) {
      const RunRecord& r = s.run;
      const bool commit_ok = q.allowed_commits.empty() || std::find(q.allowed_commits.begin(), q.allowed_commits.end(),
                                                                    r.meta.commit) != q.allowed_commits.end();
      if (r.status == RunStatus::kComplete && r.meta.branch == q.branch && r.meta.environment.sku == q.sku &&
          id != exclude && commit_ok) {
        out.push_back(r);
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const RunRecord& a, const RunRecord& b) {
    const TimePoint ta = a.finished_at.value_or(TimePoint{}), tb = b.finished_at.value_or(TimePoint{});
    return ta != tb ? ta > tb : absl::AsciiStrToLower(a.meta.run_id) < absl::AsciiStrToLower(b.meta.run_id);
  });
  if (out.size() > ClampRows(kBaselineRunRows, q.limit)) out.resize(ClampRows(kBaselineRunRows, q.limit));
  return out;
}

absl::StatusOr<std::vector<StoredSummary>> InMemoryGateSource::GetGateSummaries(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  PERFGATE_ASSIGN_OR_RETURN(const Stored* s, Find(run_id));
  return s->summaries;
}

absl::StatusOr<RunSamples> InMemoryGateSource::GetSamples(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  PERFGATE_ASSIGN_OR_RETURN(const Stored* s, Find(run_id));
  return s->samples;
}

absl::StatusOr<std::vector<CalibrationRecord>> InMemoryGateSource::GetCalibrations(
    const std::string& sku, const std::string& node, const std::string& environment_hash,
    std::optional<std::chrono::seconds> max_age) {
  const TimePoint cutoff = max_age ? std::chrono::system_clock::now() - *max_age : TimePoint{};
  std::vector<CalibrationRecord> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const CalibrationRecord& c : calibrations_) {
      if ((sku.empty() || c.sku == sku) && (node.empty() || c.node == node) &&
          (environment_hash.empty() || c.environment_hash == environment_hash) &&
          (!max_age || c.measured_at >= cutoff)) {
        out.push_back(c);
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const CalibrationRecord& a, const CalibrationRecord& b) {
    const auto ka = std::tie(a.sku, a.node, a.entry.benchmark, a.entry.metric);
    const auto kb = std::tie(b.sku, b.node, b.entry.benchmark, b.entry.metric);
    return ka != kb ? ka < kb : a.measured_at > b.measured_at;
  });
  return out;
}

}  // namespace perfgate::coordinator::store
