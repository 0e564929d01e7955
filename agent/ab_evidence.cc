#include "agent/ab_evidence.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace perfgate::agent {
namespace {

using Key = std::pair<std::string, std::string>;

std::string Percent(double change) { return absl::StrFormat("%+.2f %%", change * 100); }

std::map<std::string, const CasePair*> ByKey(const std::vector<CasePair>& pairs) {
  std::map<std::string, const CasePair*> out;
  for (const CasePair& p : pairs) out[p.key] = &p;
  return out;
}

// Rounds that would likely bring the worse end of the interval within the
// tolerance, if the change stays where it is: the half-width shrinks as
// one over the square root of the rounds. 0 when no count would (the
// change itself is at or beyond the tolerance) or nothing is known.
unsigned RoundsToBound(const gate::MetricVerdict& v, unsigned rounds) {
  const double half = (v.change_ci_high - v.change_ci_low) / 2;
  const double room = v.tolerance - v.change;
  if (!std::isfinite(half) || !(room > 0) || rounds == 0) return 0;
  const double r = std::ceil(rounds * (half / room) * (half / room));
  return static_cast<unsigned>(std::clamp(r, double(rounds + 1), 10000.0));
}

}  // namespace

void ApplyOverBudget(const std::vector<CasePair>& pairs, gate::GateResult* gate) {
  const auto by_key = ByKey(pairs);
  for (gate::MetricVerdict& v : gate->verdicts) {
    const auto it = by_key.find(v.benchmark);
    if (it == by_key.end() || it->second->stopped != StopReason::kOverBudget) continue;
    // A floor missed or a metric missing needs no rounds; anything that
    // needs a test was not given the rounds for one.
    if (gate::Fails(v.verdict) && v.verdict != gate::Verdict::kRegression) continue;
    v.verdict = gate::Verdict::kUndecided;
    v.note = it->second->note;
  }
}

void KeepFirstEvidence(const std::map<std::string, const CasePair*>& cut_short, unsigned needed,
                       const AbOptions& options, gate::GateResult* gate) {
  for (gate::MetricVerdict& v : gate->verdicts) {
    const auto it = cut_short.find(v.benchmark);
    if (it == cut_short.end() || !v.gating || !gate::Fails(v.verdict)) continue;
    const CasePair& again = *it->second;
    const double pace = again.rounds > 0 ? again.seconds / again.rounds : 0;
    v.note = absl::StrCat(
        "not confirmed: the confirming measurement got ", again.rounds, " of the ", needed,
        " rounds a look at its interval needs within its budget, so it adds no verdict and the first "
        "measurement's ", gate::ToString(v.verdict), " stands unconfirmed. First measurement: ", v.note,
        pace > 0 ? absl::StrFormat(". A confirmation needs about %.0f s: give the job that much more "
                                   "(--time-budget%s)",
                                   needed * pace, options.job_budget_s > 0 ? "" : ", --case-budget")
                 : std::string());
    v.verdict = gate::Verdict::kUndecided;
  }
}

void SayWhatWouldDecide(const std::vector<CasePair>& pairs, const AbOptions& options, gate::GateResult* gate) {
  const auto by_key = ByKey(pairs);
  for (gate::MetricVerdict& v : gate->verdicts) {
    if (!v.gating || (v.verdict != gate::Verdict::kUndecided && v.verdict != gate::Verdict::kTooNoisy)) continue;
    const auto it = by_key.find(v.benchmark);
    if (it == by_key.end()) continue;
    const CasePair& p = *it->second;
    if (p.stopped != StopReason::kBudget && p.stopped != StopReason::kMaxRounds) continue;
    const unsigned more = RoundsToBound(v, p.rounds);
    const char* limit = p.stopped == StopReason::kBudget ? "budget" : "--max-rounds";
    std::string what =
        absl::StrFormat(" Measuring stopped at its %s after %u rounds in %.0f s", limit, p.rounds, p.seconds);
    // The case budget is asked for from the pace these rounds kept, which
    // --case-budget auto or a confirmation's minimum may have stretched
    // past the budget given.
    const double pace = p.rounds > 0 ? p.seconds / p.rounds : 0;
    if (more == 0) {
      absl::StrAppend(&what, "; the change itself is at or beyond the tolerance, so more rounds decide "
                             "whether it is a regression: rerun with ",
                      p.stopped == StopReason::kBudget
                          ? absl::StrFormat("twice the budget (--case-budget %.0f)",
                                            std::ceil(2 * CaseBudgetFor(p.seconds, options)))
                          : absl::StrFormat("twice the rounds (--max-rounds %u)", 2 * p.rounds));
    } else if (p.stopped == StopReason::kBudget) {
      absl::StrAppend(&what, absl::StrFormat("; about %u rounds would bound the interval within the tolerance: "
                                             "rerun with --case-budget %.0f, or larger blocks (--block-time)",
                                             more, std::ceil(CaseBudgetFor(pace * more * 1.1, options))));
    } else {
      absl::StrAppend(&what, absl::StrFormat("; about %u rounds would bound the interval within the tolerance: "
                                             "rerun with --max-rounds %u",
                                             more, more));
    }
    absl::StrAppend(&v.note, ".", what);
  }
}

void NoteExtensions(const std::map<std::string, unsigned>& from, MeasurePass pass, gate::GateResult* gate) {
  const bool confirmation = pass == MeasurePass::kConfirmationExtension;
  for (gate::MetricVerdict& v : gate->verdicts) {
    const auto it = from.find(v.benchmark);
    if (it == from.end() || !v.gating) continue;
    v.note = absl::StrCat(confirmation ? "the confirmation was undecided after " : "undecided after ", it->second,
                          confirmation ? " rounds and measured on with as much time again"
                                       : " rounds, measured on with the budget kept for a confirmation",
                          v.note.empty() ? "" : "; ", v.note);
  }
}

void NoteConfirmations(const gate::GateResult& first, const std::set<std::string>& suspects,
                       const std::map<std::string, const CasePair*>& cut_short, AbResult* result) {
  // The first verdict of each re-measured metric, for the notes.
  std::map<Key, const gate::MetricVerdict*> before;
  for (const gate::MetricVerdict& v : first.verdicts) before[{v.benchmark, v.metric}] = &v;
  std::set<std::string> held;
  for (gate::MetricVerdict& v : result->gate.verdicts) {
    if (suspects.count(v.benchmark) == 0 || cut_short.count(v.benchmark) != 0) continue;
    const auto it = before.find({v.benchmark, v.metric});
    const std::string earlier =
        it == before.end()
            ? std::string("absent")
            : absl::StrCat(gate::ToString(it->second->verdict), " at ", Percent(it->second->change));
    if (v.gating && gate::Fails(v.verdict)) {
      held.insert(v.benchmark);
      v.note = absl::StrCat("confirmed by a second interleaved measurement (first: ", earlier, "); ", v.note);
    } else {
      v.note = absl::StrCat("judged on a second interleaved measurement (first: ", earlier, "); ", v.note);
    }
  }
  for (const std::string& key : suspects) {
    if (cut_short.count(key) != 0) {
      result->cut_short.push_back(key);
    } else {
      (held.count(key) != 0 ? result->confirmed : result->unconfirmed).push_back(key);
    }
  }
  auto listed = [](const std::vector<std::string>& keys) {
    return keys.empty() ? std::string() : absl::StrCat(" (", absl::StrJoin(keys, ", "), ")");
  };
  absl::StrAppend(&result->gate.summary, " Re-measured before blocking: ", result->confirmed.size(),
                  " confirmed", listed(result->confirmed), ", ", result->unconfirmed.size(), " not confirmed",
                  listed(result->unconfirmed));
  if (!result->cut_short.empty()) {
    absl::StrAppend(&result->gate.summary, ", ", result->cut_short.size(),
                    " left undecided by a confirmation cut short", listed(result->cut_short));
  }
  absl::StrAppend(&result->gate.summary, ".");
}

}  // namespace perfgate::agent
