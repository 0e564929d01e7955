// Energy as metrics of a device case (docs/measurement.md, "Energy"): the
// engine reads the device's energy counter just before the first timed
// sample and just after the last, and a case's samples then report, beside
// the metrics the case declares, the average power over those samples and
// what it costs in joules per iteration, per TFLOP and per token. All are
// lower-is-better and gate like any other metric. Where the device or the
// driver has no counter they are left out and the case's reason says why:
// an energy of zero is never reported.
#pragma once

#include <string>
#include <vector>

#include "common/run_types.h"
#include "measure/engine.h"

namespace perfgate::suites {

/// "power" (W), "energy" (J per iteration), "energy_per_tflop" (J/TFLOP),
/// "energy_per_token" (J/token): the names and units a result file carries.
MetricSpec PowerMetric();
MetricSpec EnergyMetric();
MetricSpec EnergyPerTflopMetric();
MetricSpec EnergyPerTokenMetric();

/// The energy side of one case's measurements, sample by sample.
class CaseEnergy {
 public:
  /// Takes in a measurement's samples, in the order the case records them;
  /// `tokens`, when positive, is what each of them produced (else the
  /// case's tokens per iteration count).
  void Add(const Measurement& m, double tokens = 0);
  /// Appends the energy metrics to `r`, whose samples are those added, in
  /// order: power and energy always, J/TFLOP when an iteration has FLOPs,
  /// J/token when it has tokens (every sample its own, or per iteration).
  /// Where a measurement read no counter, or a device measurement read none,
  /// appends no metric and says why in the reason.
  void AppendTo(CaseResult& r, double flops_per_iteration, double tokens_per_iteration) const;

 private:
  struct PerSample {
    double seconds = 0;  // time per iteration
    double watts = 0;    // average over the measurement's samples
    double tokens = 0;   // the sample's own token count; 0: tokens per iteration
  };
  std::vector<PerSample> samples_;
  std::string unavailable_;  // the first reason a measurement gave
  bool read_ = false;        // some measurement read the counter
  bool unread_ = false;      // some measurement had no device source at all
};

}  // namespace perfgate::suites
