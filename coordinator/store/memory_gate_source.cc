#include "coordinator/store/memory_gate_source.h"

#include <algorithm>
#include <cmath>
#include <optional>
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
  // Kept in the lower-case form PostgreSQL answers ids in.
  run.meta.run_id = absl::AsciiStrToLower(run.meta.run_id);
  std::string id = run.meta.run_id;
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

namespace {

// A kept run's point of the series of (benchmark, metric), as CloseRun
// writes it: a complete run with a median over at least one sample.
std::optional<SeriesPoint> PointOf(const RunRecord& run, const MetricSummary& m) {
  if (run.status != RunStatus::kComplete || m.n == 0 || !std::isfinite(m.median) || !run.finished_at) {
    return std::nullopt;
  }
  SeriesPoint p;
  p.point = {absl::AsciiStrToLower(run.meta.run_id), run.meta.commit, run.meta.branch, run.meta.node,
             *run.finished_at, m.median, m.n};
  p.p5 = m.p5;
  p.p95 = m.p95;
  p.n_throttled = m.n_throttled;
  p.invalid_reasons = run.invalid_reasons;
  return p;
}

bool Wanted(const SeriesQuery& q, const RunRecord& run, const SeriesPoint& p) {
  return (q.sku.empty() || run.meta.environment.sku == q.sku) && (q.branch.empty() || p.point.branch == q.branch) &&
         (q.node.empty() || p.point.node == q.node) && (!q.from || p.point.finished_at >= *q.from) &&
         (!q.to || p.point.finished_at < *q.to);
}

}  // namespace

absl::StatusOr<Series> InMemoryGateSource::GetSeries(const SeriesQuery& q) {
  if (q.benchmark.empty()) return absl::InvalidArgumentError("benchmark: must not be empty");
  if (q.metric.empty()) return absl::InvalidArgumentError("metric: must not be empty");
  PERFGATE_ASSIGN_OR_RETURN(const uint32_t limit, RowsFor(kSeriesPointRows, q.limit));
  if (q.from && q.to && *q.to <= *q.from) return absl::InvalidArgumentError("to: must be later than from");
  Series series;
  bool defined = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, stored] : runs_) {
      for (const StoredSummary& s : stored.summaries) {
        if (s.summary.benchmark != q.benchmark || s.summary.metric != q.metric) continue;
        if (!defined) series.unit = s.summary.unit, series.direction = s.summary.direction;
        defined = true;
        std::optional<SeriesPoint> p = PointOf(stored.run, s.summary);
        if (p && Wanted(q, stored.run, *p)) series.points.push_back(*std::move(p));
      }
    }
  }
  if (!defined) {
    return absl::NotFoundError(
        absl::StrCat("no results stored for benchmark ", q.benchmark, " metric '", q.metric, "'"));
  }
  // The newest `limit`, oldest first.
  auto newer = [](const SeriesPoint& a, const SeriesPoint& b) {
    return a.point.finished_at != b.point.finished_at ? a.point.finished_at > b.point.finished_at
                                                      : a.point.run_id < b.point.run_id;
  };
  std::sort(series.points.begin(), series.points.end(), newer);
  if (series.points.size() > limit) series.points.resize(limit);
  std::sort(series.points.begin(), series.points.end(), [](const SeriesPoint& a, const SeriesPoint& b) {
    return std::tie(a.point.finished_at, a.point.run_id) < std::tie(b.point.finished_at, b.point.run_id);
  });
  return series;
}

}  // namespace perfgate::coordinator::store
