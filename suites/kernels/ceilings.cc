#include "suites/kernels/ceilings.h"

#include "measure/engine.h"
#include "common/stats.h"
#include "suites/kernels/numerics.h"

namespace perfgate::suites::kernels {

Ceilings& Ceilings::Process() {
  static Ceilings book;
  return book;
}

void Ceilings::Offer(const std::string& what, const std::string& key, std::vector<double> values) {
  if (values.empty()) return;
  const double median = stats::Median(values);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = best_.find(what);
  if (it != best_.end() && it->second.median >= median) return;
  best_[what] = CeilingSource{key, std::move(values), median};
}

std::optional<CeilingSource> Ceilings::Best(const std::string& what) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = best_.find(what);
  if (it == best_.end()) return std::nullopt;
  return it->second;
}

void Ceilings::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  best_.clear();
}

std::vector<double> UnthrottledValues(const std::vector<Sample>& samples, size_t index) {
  std::vector<double> out;
  for (const Sample& s : samples) {
    if (!s.throttled && index < s.values.size()) out.push_back(s.values[index]);
  }
  return out;
}

void RecordCeiling(State& state, const CeilingSource& source, MetricKind kind) {
  if (kind == MetricKind::kBandwidth) state.SetBytesPerIteration(1e9);
  if (kind == MetricKind::kTflops) state.SetFlopsPerIteration(1e12);
  Measurement m;
  for (double v : source.values) {
    m.sample_s.push_back(1.0 / v);
    m.throttled.push_back(false);
  }
  m.noise = stats::Noise(source.values);
  // The source case met its own stopping rule; these are its samples.
  m.reason = StopReason::kNoiseTarget;
  state.Record(m);
}

std::optional<MetricKind> CeilingMetric(const std::string& what) {
  if (what == "copy") return MetricKind::kBandwidth;
  const std::string prefix = "gemm_";
  if (what.rfind(prefix, 0) == 0 && ParseGemmDtype(what.substr(prefix.size()))) return MetricKind::kTflops;
  return std::nullopt;
}

}  // namespace perfgate::suites::kernels
