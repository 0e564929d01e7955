// A bisection's states and its probes' verdicts on the wire and back
// (proto/perfgate/v1/bisection.proto), and its measured values: a value not
// measured (NaN) is an unset field, never a number.
#pragma once

#include <optional>

#include "common/bisection_state.h"
#include "perfgate/v1/bisection.pb.h"

namespace perfgate::wire {

v1::BisectionState ToProto(BisectionState state);
/// nullopt for UNSPECIFIED or a number no state has.
std::optional<BisectionState> FromProto(v1::BisectionState state);

v1::ProbeVerdict ToProto(ProbeVerdict verdict);
/// nullopt for UNSPECIFIED or a number no verdict has.
std::optional<ProbeVerdict> FromProto(v1::ProbeVerdict verdict);

/// A change's interval; nullopt when either end is not finite (not measured).
std::optional<v1::ChangeInterval> IntervalOf(double low, double high);
/// The ends of `ci`, NaN each when `has` is false.
void GetInterval(bool has, const v1::ChangeInterval& ci, double* low, double* high);

}  // namespace perfgate::wire
