// A gate's result as a report: the engine's GateResult with the facts that
// name what was judged (candidate run, SKU, branches, the baseline's runs)
// and where it is stored. The coordinator sends it over the wire, the agent's
// `ab` and the offline `perfgate compare` build it on the spot, and the
// renderers of report/ show it. Pure domain: no wire, no formatting.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gate/gate.h"

namespace perfgate::gate {

/// Why measuring one case of an A/B stopped. kNone: it has not (yet).
enum class StopReason {
  kNone,
  kDecided,     // the stop rule decided every gating metric
  kRounds,      // the fixed number of rounds (--rounds) ran
  kBudget,      // another round would not fit the case budget
  kMaxRounds,   // --max-rounds ran
  kOverBudget,  // min_rounds could not fit the budget at the first round's pace
  kFailed,      // a side failed or skipped the case
  kError,       // a side stopped working for every case
  kCounted,     // counted, not timed in rounds
};
/// The name output shows: "decided", "rounds", "budget", "max_rounds",
/// "over_budget", "failed", "error", "counted"; "" for kNone.
const char* ToString(StopReason reason);

/// How many rounds an A/B measurement gave one case, and why it stopped.
struct CaseRounds {
  std::string benchmark;  // the case's key, as the verdicts name it
  unsigned rounds = 0;
  StopReason stopped = StopReason::kNone;
};

/// One gate's report.
struct GateReport {
  int64_t report_id = 0;         // id under which the coordinator stored it; 0 when not stored
  std::string candidate_run_id;  // the run (or, offline, the files) under test
  std::string sku;
  std::string candidate_branch, candidate_commit;
  std::string baseline_branch;
  std::vector<std::string> baseline_run_ids;  // same node first, newest first
  double fdr = std::numeric_limits<double>::quiet_NaN();  // Benjamini–Hochberg q applied
  std::string candidate_image_digest;                 // the candidate's image_digest; "" on a host
  std::vector<std::string> baseline_image_digests;    // distinct image_digest values of the baselines
  GateResult result;             // verdicts (worst first), outcome, summary, mode
  std::vector<CaseRounds> case_rounds;  // an A/B measurement's, one per case; empty for any other gate
};

}  // namespace perfgate::gate
