// What an A/B verdict rests on when measuring ended short of a decision
// (docs/statistics.md, "The pass contract"): a case whose minimum rounds
// could not fit its budget, a confirmation cut short, an interval the budget
// left reaching past the tolerance. Each turns into an undecided verdict, or
// a note, that says what more would decide it. Used by MeasureAndDecide.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/ab.h"
#include "gate/gate.h"

namespace perfgate::agent {

/// Every verdict of a case stopped kOverBudget that is not a failure
/// measured without statistics becomes undecided, with the pair's note.
void ApplyOverBudget(const std::vector<CasePair>& pairs, gate::GateResult* gate);

/// The failing gating verdicts of the cases in `cut_short` (key -> the
/// confirmation's rounds) become undecided: their confirmation got fewer
/// than `needed` rounds, so the first measurement's regression stands
/// unconfirmed and no verdict; the note says what budget would confirm it.
void KeepFirstEvidence(const std::map<std::string, const CasePair*>& cut_short, unsigned needed,
                       const AbOptions& options, gate::GateResult* gate);

/// Undecided and too-noisy gating verdicts of cases stopped by their budget
/// or their max_rounds say how many rounds would likely bound the interval
/// within the tolerance, and the flag that gives them.
void SayWhatWouldDecide(const std::vector<CasePair>& pairs, const AbOptions& options, gate::GateResult* gate);

/// The gating verdicts of the cases in `from` (key -> the rounds its
/// measurement ended with, undecided) say that the case measured on, from
/// how many rounds, and with what: `pass` kExtension, a first measurement
/// with the budget a confirmation would have had; kConfirmationExtension, a
/// confirmation with as much time again.
void NoteExtensions(const std::map<std::string, unsigned>& from, MeasurePass pass, gate::GateResult* gate);

/// The notes of the metrics measured again (their first verdict, whether
/// the second held it), the confirmed and unconfirmed keys of `result`, and
/// the summary's sentence about them. Cases in `cut_short` were not judged
/// on their confirmation and are counted apart.
void NoteConfirmations(const gate::GateResult& first, const std::set<std::string>& suspects,
                       const std::map<std::string, const CasePair*>& cut_short, AbResult* result);

}  // namespace perfgate::agent
