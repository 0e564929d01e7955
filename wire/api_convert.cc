#include "wire/api_convert.h"

#include <cmath>
#include <iterator>
#include <limits>

namespace perfgate::wire {
namespace {

// The messages' enums follow the domain's order after UNSPECIFIED.
template <typename Domain, typename Message>
std::optional<Domain> Back(Message m, int count) {
  const int n = static_cast<int>(m) - 1;
  if (n < 0 || n >= count) return std::nullopt;
  return static_cast<Domain>(n);
}

}  // namespace

v1::BisectionState ToProto(BisectionState state) { return static_cast<v1::BisectionState>(static_cast<int>(state) + 1); }

std::optional<BisectionState> FromProto(v1::BisectionState state) {
  return Back<BisectionState>(state, static_cast<int>(std::size(kBisectionStateNames)));
}

v1::ProbeVerdict ToProto(ProbeVerdict verdict) { return static_cast<v1::ProbeVerdict>(static_cast<int>(verdict) + 1); }

std::optional<ProbeVerdict> FromProto(v1::ProbeVerdict verdict) {
  return Back<ProbeVerdict>(verdict, static_cast<int>(std::size(kProbeVerdictNames)));
}

v1::RegressionState ToProto(RegressionState state) {
  return static_cast<v1::RegressionState>(static_cast<int>(state) + 1);
}

std::optional<RegressionState> FromProto(v1::RegressionState state) {
  return Back<RegressionState>(state, static_cast<int>(std::size(kRegressionStateNames)));
}

std::optional<v1::ChangeInterval> IntervalOf(double low, double high) {
  if (!std::isfinite(low) || !std::isfinite(high)) return std::nullopt;
  v1::ChangeInterval ci;
  ci.set_low(low);
  ci.set_high(high);
  return ci;
}

void GetInterval(bool has, const v1::ChangeInterval& ci, double* low, double* high) {
  *low = has ? ci.low() : std::numeric_limits<double>::quiet_NaN();
  *high = has ? ci.high() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace perfgate::wire
