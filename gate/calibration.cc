#include "gate/calibration.h"

#include <cmath>
#include <ctime>
#include <limits>

#include "absl/strings/str_cat.h"
#include "gate/inference.h"
#include "common/stats.h"

namespace perfgate::gate {

double LogSpread(std::span<const double> process_medians) {
  if (process_medians.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> logs;
  for (double m : process_medians) {
    if (!(m > 0) || !std::isfinite(m)) return std::numeric_limits<double>::quiet_NaN();
    logs.push_back(std::log(m));
  }
  return stats::Stdev(logs);
}

std::vector<CalibrationEntry> CalibrateProcesses(const std::vector<CaseResult>& processes) {
  std::vector<CalibrationEntry> out;
  if (processes.empty()) return out;
  const CaseResult& first = processes.front();
  for (size_t m = 0; m < first.metrics.size(); ++m) {
    std::vector<double> medians;
    for (const CaseResult& p : processes) {
      // A process with no unthrottled sample of the metric says nothing of it.
      std::vector<double> values;
      for (const Sample& s : p.samples) {
        if (!s.throttled && m < s.values.size()) values.push_back(s.values[m]);
      }
      if (!values.empty()) medians.push_back(stats::Median(values));
    }
    const double spread = LogSpread(medians);
    if (medians.size() < kMinCalibrationProcesses || !std::isfinite(spread)) continue;
    const MetricSpec& spec = first.metrics[m];
    out.push_back({first.benchmark.Key(), spec.name, spec.unit, spec.direction, spread,
                   static_cast<unsigned>(medians.size())});
  }
  return out;
}

double SingleRunHalfWidth(double spread, unsigned processes) {
  if (processes < 2 || !std::isfinite(spread) || spread < 0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return gate::StudentTQuantile(0.975, processes - 1.0) * spread * std::sqrt(2.0);
}

bool FitToGate(double spread, unsigned processes, double tolerance) {
  // A NaN half-width compares false: not fit.
  return SingleRunHalfWidth(spread, processes) <= tolerance;
}

std::string CalibrationSource(const std::string& node, TimePoint measured_at) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(measured_at);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char date[16];
  std::strftime(date, sizeof date, "%Y-%m-%d", &tm);
  return absl::StrCat("node ", node, ", ", date);
}

int64_t AgeDays(TimePoint then, TimePoint now) {
  if (then >= now) return 0;
  return std::chrono::duration_cast<std::chrono::hours>(now - then).count() / 24;
}

std::string CalibrationUnusable(const CalibrationSet& set, const std::string& sku,
                                const std::string& environment_hash, TimePoint now,
                                std::chrono::seconds max_age) {
  if (set.environment.sku != sku) {
    return absl::StrCat("it was measured on ", set.environment.sku, ", the candidate ran on ", sku);
  }
  const std::string hash = set.environment.Hash();
  if (!environment_hash.empty() && hash != environment_hash) {
    return absl::StrCat("it was measured in another environment (hash ", hash.substr(0, 12),
                        ", the candidate's ", environment_hash.substr(0, 12), ")");
  }
  if (now - set.measured_at > max_age) {
    return absl::StrCat("it is stale: measured ", AgeDays(set.measured_at, now),
                        " days ago, the policy's calibration_max_age is ",
                        std::chrono::duration_cast<std::chrono::hours>(max_age).count() / 24.0, " days");
  }
  return "";
}

std::map<std::pair<std::string, std::string>, Calibration> GateCalibrations(const CalibrationSet& set) {
  std::map<std::pair<std::string, std::string>, Calibration> out;
  const std::string source = CalibrationSource(set.node, set.measured_at);
  for (const CalibrationEntry& e : set.entries) {
    out[{e.benchmark, e.metric}] = Calibration{e.spread, e.processes, source};
  }
  return out;
}

}  // namespace perfgate::gate
