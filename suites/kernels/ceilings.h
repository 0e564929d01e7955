// The device's own ceilings (docs/measurement.md): the best copy bandwidth and
// the best GEMM TFLOP/s of each dtype measured in this process, kept so the
// kernels/ceiling cases can report them and memory-bound cases can divide by
// the copy roof.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/run_types.h"
#include "suites/state.h"

namespace perfgate::suites::kernels {

/// The case that set a ceiling and its values of the ceiling's metric.
struct CeilingSource {
  std::string key;             // e.g. kernels/device_copy{bytes=1073741824}
  std::vector<double> values;  // its unthrottled samples' values, in order
  double median = 0;
};

/// Ceilings by name ("copy", "gemm_bf16", ...). A ceiling is the case with
/// the best median among those offered: a median, not a maximum sample, so
/// one lucky sample does not set the roof.
class Ceilings {
 public:
  /// The book this process's cases share.
  static Ceilings& Process();
  /// Offers a finished case's values; kept when its median beats the one
  /// held. Empty `values` are ignored.
  void Offer(const std::string& what, const std::string& key, std::vector<double> values);
  /// The best offered so far, if any.
  std::optional<CeilingSource> Best(const std::string& what) const;
  /// Forgets everything (tests; a new run in the same process).
  void Clear();

 private:
  mutable std::mutex mu_;
  std::map<std::string, CeilingSource> best_;
};

/// The values of metric `index` of the samples not marked throttled.
std::vector<double> UnthrottledValues(const std::vector<Sample>& samples, size_t index);

/// Records `source`'s values as the samples of a ceiling case whose only
/// metric is `kind` (kBandwidth or kTflops): each value becomes a sample of
/// one unit of work (1 GB or 1 TFLOP) taking 1/value seconds, so the State
/// derives exactly the value back.
void RecordCeiling(State& state, const CeilingSource& source, MetricKind kind);

/// The metric of ceiling `what`: kBandwidth for "copy", kTflops for
/// "gemm_<dtype>" with a known dtype; nullopt otherwise.
std::optional<MetricKind> CeilingMetric(const std::string& what);

}  // namespace perfgate::suites::kernels
