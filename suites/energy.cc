#include "suites/energy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace perfgate::suites {

MetricSpec PowerMetric() { return {"power", "W", Direction::kLowerIsBetter}; }
MetricSpec EnergyMetric() { return {"energy", "J", Direction::kLowerIsBetter}; }
MetricSpec EnergyPerTflopMetric() { return {"energy_per_tflop", "J/TFLOP", Direction::kLowerIsBetter}; }
MetricSpec EnergyPerTokenMetric() { return {"energy_per_token", "J/token", Direction::kLowerIsBetter}; }

void CaseEnergy::Add(const Measurement& m, double tokens) {
  if (!m.energy_j) {
    if (m.energy_unavailable.empty()) {
      unread_ = true;
    } else if (unavailable_.empty()) {
      unavailable_ = m.energy_unavailable;
    }
    return;
  }
  read_ = true;
  // The counter gives the energy of the whole window; each sample is charged
  // the window's average power for its own time per iteration.
  const double watts = *m.energy_j / m.energy_window_s;
  for (double t : m.sample_s) samples_.push_back({t, watts, tokens});
}

void CaseEnergy::AppendTo(CaseResult& r, double flops_per_iteration, double tokens_per_iteration) const {
  if (!unavailable_.empty() || (read_ && unread_)) {
    const std::string why =
        unavailable_.empty() ? "not every measurement of the case read the counter" : unavailable_;
    absl::StrAppend(&r.reason, r.reason.empty() ? "" : "; ", "energy unavailable: ", why);
    return;
  }
  if (!read_ || samples_.size() != r.samples.size()) return;
  r.metrics.push_back(PowerMetric());
  r.metrics.push_back(EnergyMetric());
  if (flops_per_iteration > 0) r.metrics.push_back(EnergyPerTflopMetric());
  const bool own_tokens =
      std::all_of(samples_.begin(), samples_.end(), [](const PerSample& s) { return s.tokens > 0; });
  const bool per_token = own_tokens || tokens_per_iteration > 0;
  if (per_token) r.metrics.push_back(EnergyPerTokenMetric());
  for (size_t i = 0; i < samples_.size(); ++i) {
    std::vector<double>& v = r.samples[i].values;
    const double joules = samples_[i].watts * samples_[i].seconds;
    v.push_back(samples_[i].watts);
    v.push_back(joules);
    if (flops_per_iteration > 0) v.push_back(joules / (flops_per_iteration / 1e12));
    if (per_token) v.push_back(joules / (own_tokens ? samples_[i].tokens : tokens_per_iteration));
  }
}

}  // namespace perfgate::suites
