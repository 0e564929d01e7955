// The gate's domain result as the wire's GateReport, so the coordinator, the
// offline `perfgate compare` and `perfgate-agent ab` render one report type.
#pragma once

#include "gate/gate.h"
#include "perfgate/v1/gate.pb.h"

namespace perfgate::wire {

v1::Verdict ToProto(gate::Verdict v);
v1::TestMethod ToProto(gate::Method m);
v1::GateOutcome ToProto(gate::Outcome o);
v1::GateMode ToProto(gate::Mode m);

/// Fills the verdicts, outcome, summary, mode, fdr and invalid reasons of
/// `out` from `result`; run ids, branch and commit are the caller's.
void ToProto(const gate::GateResult& result, double fdr, v1::GateReport* out);

}  // namespace perfgate::wire
