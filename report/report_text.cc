#include "report/report_text.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/gate_report.h"

namespace perfgate::report {
namespace {

// The worst failing metric in a few words, for the verdict line.
std::string Worst(const MetricVerdict& v) {
  std::string text = absl::StrCat(v.benchmark, " ", v.metric, " ");
  switch (v.verdict) {
    case Verdict::kRegression:
      absl::StrAppend(&text, SignedPercent(v.change), " %");
      break;
    case Verdict::kBelowFloor:
      absl::StrAppend(&text, Number(v.candidate_median, v.unit),
                      v.direction == Direction::kLowerIsBetter ? " above ceiling " : " below floor ",
                      Number(v.floor, v.unit));
      break;
    default:
      absl::StrAppend(&text, "missing");
      break;
  }
  return text;
}

std::string Candidate(const gate::GateReport& report) {
  std::string text = report.candidate_run_id.empty() ? "(unnamed)" : report.candidate_run_id;
  if (!report.candidate_branch.empty() || !report.candidate_commit.empty()) {
    absl::StrAppend(&text, " (", report.candidate_branch,
                    report.candidate_commit.empty() ? "" : " @ ",
                    report.candidate_commit.substr(0, kShortCommit), ")");
  }
  return text;
}

// "; image D" (the baselines' the same) or "; image D vs baseline image(s) E, F";
// "" when no side ran from an image.
std::string Images(const gate::GateReport& report) {
  const std::vector<std::string>& base = report.baseline_image_digests;
  if (report.candidate_image_digest.empty() && base.empty()) return "";
  auto name = [](const std::string& d) { return d.empty() ? std::string("(none)") : d; };
  std::string text = absl::StrCat("; image ", name(report.candidate_image_digest));
  if (base.empty() || (base.size() == 1 && base[0] == report.candidate_image_digest)) return text;
  std::vector<std::string> names;
  for (const std::string& d : base) names.push_back(name(d));
  return absl::StrCat(text, " vs baseline ", base.size() == 1 ? "image " : "images ", absl::StrJoin(names, ", "));
}

}  // namespace

bool IsFailure(Verdict v) { return gate::Fails(v); }

bool FailsGate(const MetricVerdict& v) { return v.gating && IsFailure(v.verdict); }

bool IsUndecided(Verdict v) { return gate::Inconclusive(v); }

bool IsRegression(const gate::GateReport& report) {
  return report.result.outcome == gate::Outcome::kRegression;
}

bool IsInconclusive(const gate::GateReport& report) {
  return report.result.outcome == gate::Outcome::kInconclusive;
}

const char* OutcomeName(const gate::GateReport& report) { return gate::ToString(report.result.outcome); }

const char* ModeName(const gate::GateReport& report) {
  return report.result.mode == gate::Mode::kAb ? "ab" : "history";
}

std::string PValue(double p) {
  if (!std::isfinite(p)) return "-";
  return p < 1e-4 ? std::string("<0.0001") : absl::StrFormat("%.4f", p);
}

std::string Interval(double low, double high) {
  if (!std::isfinite(low) || !std::isfinite(high)) return "-";
  return absl::StrFormat("[%+.1f, %+.1f]", low * 100.0, high * 100.0);
}

std::string Number(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "-";
  std::string text = absl::StrFormat("%.4g", value);
  if (!unit.empty()) absl::StrAppend(&text, " ", unit);
  return text;
}

std::string SignedPercent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  return absl::StrFormat("%+.1f", fraction * 100.0);
}

std::string Percent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  return absl::StrFormat("%.1f", fraction * 100.0);
}

std::string VerdictText(const MetricVerdict& v) {
  std::string text = VerdictName(v.verdict);
  std::replace(text.begin(), text.end(), '_', ' ');
  if (v.verdict == Verdict::kBelowFloor) {
    text = v.direction == Direction::kLowerIsBetter ? "above ceiling" : "below floor";
    absl::StrAppend(&text, " ", Number(v.floor, v.unit));
  }
  if (!v.gating) absl::StrAppend(&text, " (advisory)");
  return text;
}

std::string AdvisoryLegend(const gate::GateReport& report) {
  for (const MetricVerdict& v : report.result.verdicts) {
    if (!v.gating) {
      return "(advisory): a metric the policy does not gate on: it is shown but never fails the gate";
    }
  }
  return "";
}

std::string VerdictLine(const gate::GateReport& report) {
  const MetricVerdict* worst = nullptr;
  int failing = 0, advisory = 0;
  for (const MetricVerdict& v : report.result.verdicts) {
    if (!IsFailure(v.verdict)) continue;
    if (!v.gating) {
      ++advisory;
      continue;
    }
    ++failing;
    if (worst == nullptr) worst = &v;  // the coordinator lists the worst first
  }
  const size_t total = report.result.verdicts.size();
  const std::string metrics = absl::StrCat(total, total == 1 ? " metric" : " metrics");
  std::string line;
  int undecided = 0;
  const MetricVerdict* first_undecided = nullptr;
  for (const MetricVerdict& v : report.result.verdicts) {
    if (!v.gating || !IsUndecided(v.verdict)) continue;
    ++undecided;
    if (first_undecided == nullptr) first_undecided = &v;
  }
  if (IsRegression(report)) {
    if (failing > 0) {
      line = absl::StrCat("REGRESSION \u2014 ", failing, " of ", metrics, " regressed");
      if (worst != nullptr) absl::StrAppend(&line, " (", Worst(*worst), ")");
    } else {
      line = absl::StrCat("REGRESSION \u2014 ", undecided, " of ", metrics,
                          " could not be judged and the policy fails them");
    }
  } else if (IsInconclusive(report)) {
    line = absl::StrCat("INCONCLUSIVE \u2014 ", undecided, " of ", metrics,
                        " could not be judged");
    if (first_undecided != nullptr) {
      absl::StrAppend(&line, " (", first_undecided->benchmark, " ", first_undecided->metric,
                      " ", VerdictName(first_undecided->verdict), ")");
    }
  } else {
    line = absl::StrCat("PASS \u2014 no gating metric regressed (", metrics, ")");
  }
  if (advisory > 0) {
    absl::StrAppend(&line, "; ", advisory, " advisory ", advisory == 1 ? "metric" : "metrics",
                    " regressed without failing the gate");
  }
  return line;
}

std::string HeaderLine(const gate::GateReport& report) {
  const size_t runs = report.baseline_run_ids.size();
  if (report.result.mode == gate::Mode::kAb) {
    return absl::StrCat("run ", Candidate(report), " on ",
                        report.sku.empty() ? "(unknown SKU)" : report.sku,
                        " vs its A/B baseline side ",
                        runs > 0 ? report.baseline_run_ids[0] : std::string("(none)"), Images(report));
  }
  return absl::StrCat("run ", Candidate(report), " on ",
                      report.sku.empty() ? "(unknown SKU)" : report.sku, " vs ",
                      report.baseline_branch.empty() ? "(no branch)" : report.baseline_branch,
                      ", ", runs, runs == 1 ? " baseline run" : " baseline runs", Images(report));
}

Row Cells(const MetricVerdict& v) {
  return {v.benchmark,
          v.metric,
          Number(v.baseline_median, v.unit),
          Number(v.candidate_median, v.unit),
          SignedPercent(v.change),
          Interval(v.change_ci_low, v.change_ci_high),
          PValue(v.p_adjusted),
          Percent(v.tolerance),
          VerdictText(v)};
}

const Row kColumns = {"benchmark", "metric", "baseline",    "candidate", "change %",
                      "95% CI %",  "p adj",  "tolerance %", "verdict"};

bool RightAligned(size_t column) { return column >= 2 && column <= 7; }

size_t Width(absl::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace perfgate::report
