// The gate's domain results on the wire and back: gate::GateReport as
// v1::GateReport, so the coordinator sends what the engine decided and the
// CLI renders what it received with the same renderers (report/) the agent's
// `ab` and the offline `perfgate compare` use on the spot.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gate/gate.h"
#include "gate/report.h"
#include "perfgate/v1/gate.pb.h"

namespace perfgate::wire {

v1::Verdict ToProto(gate::Verdict v);
/// The verdict's name as a report's JSON writes it: "VERDICT_REGRESSION".
std::string VerdictName(gate::Verdict v);
v1::TestMethod ToProto(gate::Method m);
v1::GateOutcome ToProto(gate::Outcome o);
v1::GateMode ToProto(gate::Mode m);
v1::AbStop ToProto(gate::StopReason r);

/// Fills the verdicts, outcome, summary, mode, fdr and invalid reasons of
/// `out` from `result`; run ids, branch and commit are the caller's.
void ToProto(const gate::GateResult& result, double fdr, v1::GateReport* out);

/// Fills every field of `out` from `report`.
void ToProto(const gate::GateReport& report, v1::GateReport* out);

/// The report a coordinator sent (or stored). A report without an outcome
/// (from an older coordinator) is judged from its verdicts: a regression
/// when a gating metric failed, else a pass. A report without a method
/// (stored before methods were recorded) reads as "none"; any mode but A/B
/// as history. An unknown verdict, method or direction is an error naming
/// the field ("verdicts[2].verdict").
absl::StatusOr<gate::GateReport> FromProto(const v1::GateReport& report);

/// The report as the `--json` files of `perfgate gate`, `perfgate compare`
/// and `perfgate-agent ab` write it and the HTTP API answers it: v1::GateReport
/// in the API's JSON (wire/api_json.h), indented. A number the
/// gate could not compute (no baseline, no test) is "NaN", as protobuf's
/// JSON mapping writes a double that is not a number.
std::string GateReportJson(const gate::GateReport& report);

/// A report in that JSON, read back (FromApiJson, then FromProto); errors
/// name `what` (the file) and the field.
absl::StatusOr<gate::GateReport> GateReportFromJson(std::string_view text, std::string_view what);

}  // namespace perfgate::wire
