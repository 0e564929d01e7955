// The API's states on the wire and back: a bisection's states and its
// probes' verdicts (proto/perfgate/v1/bisection.proto), a regression's
// triage states (regression.proto); and measured values: a value not
// measured (NaN) is an unset field, never a number. Each message enum is
// the domain's names with a prefix, in the same order after UNSPECIFIED.
#pragma once

#include <cmath>
#include <optional>

#include "common/bisection_state.h"
#include "common/regression_state.h"
#include "perfgate/v1/bisection.pb.h"
#include "perfgate/v1/regression.pb.h"

namespace perfgate::wire {

v1::BisectionState ToProto(BisectionState state);
/// nullopt for UNSPECIFIED or a number no state has.
std::optional<BisectionState> FromProto(v1::BisectionState state);

v1::ProbeVerdict ToProto(ProbeVerdict verdict);
/// nullopt for UNSPECIFIED or a number no verdict has.
std::optional<ProbeVerdict> FromProto(v1::ProbeVerdict verdict);

v1::RegressionState ToProto(RegressionState state);
/// nullopt for UNSPECIFIED or a number no state has.
std::optional<RegressionState> FromProto(v1::RegressionState state);

/// Calls set(v) for a measured value (finite): an `optional double` field
/// stays unset for one not measured.
template <typename Set>
void SetMeasured(double v, Set set) {
  if (std::isfinite(v)) set(v);
}
/// The same for the setter of field `set` of `m`: SetMeasured(v, &v1::CompareRow::set_change, &row).
template <typename Message>
void SetMeasured(double v, void (Message::*set)(double), Message* m) {
  if (std::isfinite(v)) (m->*set)(v);
}

/// A change's interval; nullopt when either end is not finite (not measured).
std::optional<v1::ChangeInterval> IntervalOf(double low, double high);
/// The ends of `ci`, NaN each when `has` is false.
void GetInterval(bool has, const v1::ChangeInterval& ci, double* low, double* high);

}  // namespace perfgate::wire
