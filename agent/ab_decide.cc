// How an A/B job decides: the gate over the pairs, the stop rule's look
// at one case, and the passes after the first measurement (measuring on,
// the confirmation, a confirmation measuring on) with the notes they leave.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agent/ab.h"
#include "agent/ab_evidence.h"
#include "gate/gate.h"

namespace perfgate::agent {

std::pair<gate::RunData, gate::RunData> SidesOf(const std::vector<CasePair>& pairs) {
  std::vector<CaseResult> base, cand;
  std::map<std::string, gate::CaseBlocks> base_blocks, cand_blocks;
  for (const CasePair& p : pairs) {
    // A case that cannot run here says nothing about either build.
    if (p.candidate.status == CaseStatus::kSkipped) continue;
    base.push_back(p.baseline);
    cand.push_back(p.candidate);
    base_blocks[p.key] = {p.baseline_blocks, true};
    cand_blocks[p.key] = {p.candidate_blocks, true};
  }
  return {gate::RunDataFromCases("baseline", base, base_blocks),
          gate::RunDataFromCases("candidate", cand, cand_blocks)};
}

namespace {

gate::GateResult Decide(const std::vector<CasePair>& pairs, const gate::Policy& policy,
                        const std::string& sku) {
  auto [base, cand] = SidesOf(pairs);
  gate::GateInput input;
  input.mode = gate::Mode::kAb;
  input.sku = sku;
  input.candidate = std::move(cand);
  input.baselines.push_back(std::move(base));
  return gate::EvaluateGate(input, policy);
}

bool Suspect(const gate::MetricVerdict& v) {
  return v.gating && (v.verdict == gate::Verdict::kRegression || v.verdict == gate::Verdict::kBelowFloor);
}

}  // namespace

bool CaseDecided(const CasePair& pair, const gate::Policy& policy, const std::string& sku,
                 size_t cases, unsigned looks) {
  // Judged alone, at what the whole gate can afford per case and per look.
  const gate::GateResult r = Decide({pair}, gate::LookPolicy(policy, cases, looks), sku);
  return std::none_of(r.verdicts.begin(), r.verdicts.end(), gate::Undecided);
}

namespace {

// The rounds a confirmation needs before its interval says anything: the
// first look of the stop rule, or the fixed rounds asked for.
unsigned RoundsForALook(const AbOptions& options) {
  return options.fixed_rounds > 0 ? options.fixed_rounds : options.min_rounds;
}

// The notes and verdicts that measuring short of a decision leaves, then
// the outcome and summary again from the verdicts as they now stand.
void ExplainShortfalls(AbResult* result, const AbOptions& options, const gate::Policy& policy,
                       const std::string& sku) {
  ApplyOverBudget(result->pairs, &result->gate);
  SayWhatWouldDecide(result->pairs, options, &result->gate);
  gate::SumUp(result->gate, sku, policy);
}

// Measures on the cases `which` of `result` (their pairs `earlier`) in a
// pass that resumes them; each that got more rounds replaces its pair, and
// `from` gets the rounds it went on from. Returns false when an error ended
// the pass: the pairs stand as they were, the error said.
bool GoOn(const std::vector<size_t>& which, const std::vector<CasePair>& earlier, MeasurePass pass,
          const MeasureCasesFn& measure, AbResult* result, std::map<std::string, unsigned>* from) {
  if (which.empty()) return true;
  MeasuredCases more = measure(which, &earlier, pass);
  if (!more.error.empty()) {
    result->error = std::move(more.error);
    return false;
  }
  for (size_t k = 0; k < which.size(); ++k) {
    if (more.pairs[k].rounds > earlier[k].rounds) (*from)[earlier[k].key] = earlier[k].rounds;
    result->pairs[which[k]] = std::move(more.pairs[k]);
  }
  return true;
}

// The share of the case budget a first measurement kept for a confirmation
// goes, for a case it left undecided with no gating metric suspected, to
// measuring on (MeasurePass::kExtension): from its rounds, under the same
// looks, so the case is judged as one measurement of the whole budget
// would judge it. `from` gets each case that measured on, with the rounds
// it went on from. Returns false when an error ended that pass: the first
// measurement stands, the error said.
bool MeasureOn(const AbOptions& options, const gate::Policy& policy, const std::string& sku,
               const MeasureCasesFn& measure, AbResult* result, std::map<std::string, unsigned>* from) {
  if (options.fixed_rounds > 0 || options.case_budget_s <= 0) return true;
  std::set<std::string> undecided, suspects;
  for (const gate::MetricVerdict& v : result->gate.verdicts) {
    if (gate::Undecided(v)) undecided.insert(v.benchmark);
    if (Suspect(v)) suspects.insert(v.benchmark);
  }
  std::vector<size_t> which;
  std::vector<CasePair> earlier;
  for (size_t i = 0; i < result->pairs.size(); ++i) {
    const CasePair& p = result->pairs[i];
    if (p.stopped == StopReason::kBudget && p.rounds < options.max_rounds && undecided.count(p.key) != 0 &&
        suspects.count(p.key) == 0) {
      which.push_back(i);
      earlier.push_back(p);
    }
  }
  if (!GoOn(which, earlier, MeasurePass::kExtension, measure, result, from)) return false;
  if (from->empty()) return true;
  result->gate = Decide(result->pairs, policy, sku);
  ExplainShortfalls(result, options, policy, sku);
  NoteExtensions(*from, MeasurePass::kExtension, &result->gate);
  return true;
}

// A confirmation (of the cases `again`, not `cut_short`) that ended at its
// budget with a gating metric still undecided measures on from its rounds,
// under the same looks, with as much time again
// (MeasurePass::kConfirmationExtension, gate::ConfirmationExtensionBudget):
// it is judged as one confirmation of that length would be, still on its
// own processes. `from` gets each case that measured on, with the rounds
// it went on from; `result->gate` is decided again when any did. An error
// leaves the confirmations as they were, the error said.
void ConfirmOn(const AbOptions& options, const gate::Policy& policy, const std::string& sku,
               const MeasureCasesFn& measure, const std::vector<size_t>& again,
               const std::map<std::string, const CasePair*>& cut_short, AbResult* result,
               std::map<std::string, unsigned>* from) {
  if (options.fixed_rounds > 0 || options.case_budget_s <= 0) return;
  std::set<std::string> undecided;
  for (const gate::MetricVerdict& v : result->gate.verdicts) {
    if (gate::Undecided(v)) undecided.insert(v.benchmark);
  }
  std::vector<size_t> which;
  std::vector<CasePair> earlier;
  for (size_t i : again) {
    const CasePair& p = result->pairs[i];
    if (cut_short.count(p.key) == 0 && p.stopped == StopReason::kBudget && p.rounds < options.max_rounds &&
        undecided.count(p.key) != 0) {
      which.push_back(i);
      earlier.push_back(p);
    }
  }
  if (GoOn(which, earlier, MeasurePass::kConfirmationExtension, measure, result, from) && !from->empty()) {
    result->gate = Decide(result->pairs, policy, sku);
  }
}

}  // namespace

AbResult MeasureAndDecide(const std::vector<AbCase>& cases, const gate::Policy& policy, const std::string& sku,
                          const AbOptions& options, const MeasureCasesFn& measure) {
  AbResult result;
  std::vector<size_t> all(cases.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  MeasuredCases first_pass = measure(all, nullptr, MeasurePass::kFirst);
  result.pairs = std::move(first_pass.pairs);
  result.error = std::move(first_pass.error);
  result.gate = Decide(result.pairs, policy, sku);
  ExplainShortfalls(&result, options, policy, sku);
  // A side that stopped working leaves nothing to confirm with.
  if (!options.confirm || !result.error.empty()) return result;
  std::map<std::string, unsigned> measured_on;
  if (!MeasureOn(options, policy, sku, measure, &result, &measured_on)) return result;
  std::set<std::string> suspects;
  for (const gate::MetricVerdict& v : result.gate.verdicts) {
    if (Suspect(v)) suspects.insert(v.benchmark);
  }
  if (suspects.empty()) return result;
  std::vector<size_t> again;
  std::vector<CasePair> earlier;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (suspects.count(result.pairs[i].key) != 0) {
      again.push_back(i);
      earlier.push_back(result.pairs[i]);
    }
  }
  MeasuredCases second = measure(again, &earlier, MeasurePass::kConfirmation);
  if (!second.error.empty()) {
    // The first measurement stands; the report says why it was not confirmed.
    result.error = std::move(second.error);
    return result;
  }
  const gate::GateResult first = std::move(result.gate);
  // A confirmation too short for a look at its interval adds no verdict:
  // the case keeps its first measurement, undecided.
  std::vector<CasePair> confirmations = std::move(second.pairs);
  std::map<std::string, const CasePair*> cut_short;
  for (size_t k = 0; k < again.size(); ++k) {
    const CasePair& c = confirmations[k];
    if (c.stopped != StopReason::kFailed && c.rounds < RoundsForALook(options)) {
      cut_short[c.key] = &c;
    } else {
      result.pairs[again[k]] = c;
    }
  }
  result.gate = Decide(result.pairs, policy, sku);
  std::map<std::string, unsigned> confirmed_on;
  ConfirmOn(options, policy, sku, measure, again, cut_short, &result, &confirmed_on);
  KeepFirstEvidence(cut_short, RoundsForALook(options), options, &result.gate);
  ExplainShortfalls(&result, options, policy, sku);
  NoteExtensions(confirmed_on, MeasurePass::kConfirmationExtension, &result.gate);
  NoteConfirmations(first, suspects, cut_short, &result);
  // A case judged on its confirmation no longer rests on what it measured on.
  for (const std::string& key : suspects) {
    if (cut_short.count(key) == 0) measured_on.erase(key);
  }
  NoteExtensions(measured_on, MeasurePass::kExtension, &result.gate);
  return result;
}

}  // namespace perfgate::agent
