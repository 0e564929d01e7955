// The gate report as a short pull-request comment (RenderPrComment): what
// regressed, what is unconfirmed, and where the whole report is.
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/escape.h"
#include "report/gate_report.h"
#include "report/report_text.h"

namespace perfgate::report {
namespace {

// A comment stays readable: beyond this many rows a table says how many more.
constexpr size_t kMaxRows = 15;

std::string Table(const std::vector<const MetricVerdict*>& rows) {
  std::string out = "| benchmark | metric | baseline | candidate | change | 95 % interval |\n|---|---|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < rows.size() && i < kMaxRows; ++i) {
    const MetricVerdict& v = *rows[i];
    absl::StrAppend(&out, "| ", EscapeMarkdown(v.benchmark), " | ", EscapeMarkdown(v.metric), " | ",
                    EscapeMarkdown(Number(v.baseline_median, v.unit)), " | ",
                    EscapeMarkdown(Number(v.candidate_median, v.unit)), " | ",
                    v.verdict == Verdict::kRegression || v.verdict == Verdict::kUnconfirmed
                        ? EscapeMarkdown(SignedPercent(v.change) + " %")
                        : EscapeMarkdown(VerdictText(v)),
                    " | ", EscapeMarkdown(Interval(v.change_ci_low, v.change_ci_high)), " |\n");
  }
  if (rows.size() > kMaxRows) absl::StrAppend(&out, "\n…and ", rows.size() - kMaxRows, " more.\n");
  return out;
}

}  // namespace

std::string RenderPrComment(const gate::GateReport& report, const std::string& report_url) {
  const std::string line = VerdictLine(report);
  const size_t dash = line.find(" \u2014 ");
  std::string out = absl::StrCat(kPrCommentMarker, "\n**perfgate: ", line.substr(0, dash), "**",
                                 dash == std::string::npos ? "" : EscapeMarkdown(line.substr(dash)), "\n\n",
                                 EscapeMarkdown(absl::StrCat("Candidate ", HeaderLine(report), ".")), "\n");
  std::vector<const MetricVerdict*> failed, unconfirmed;
  std::map<std::string, int> undecided;  // other verdicts nobody could decide, by name
  for (const MetricVerdict& v : report.result.verdicts) {
    if (!v.gating) continue;
    if (IsFailure(v.verdict)) {
      failed.push_back(&v);
    } else if (v.verdict == Verdict::kUnconfirmed) {
      unconfirmed.push_back(&v);
    } else if (IsUndecided(v.verdict)) {
      ++undecided[VerdictName(v.verdict)];
    }
  }
  if (!failed.empty()) absl::StrAppend(&out, "\n**Regressed** (", failed.size(), ")\n\n", Table(failed));
  if (!unconfirmed.empty()) {
    absl::StrAppend(&out, "\n**Unconfirmed** (", unconfirmed.size(),
                    "): one run would regress; another run of this commit decides.\n\n", Table(unconfirmed));
  }
  if (!undecided.empty()) {
    std::vector<std::string> parts;
    for (const auto& [name, n] : undecided) parts.push_back(absl::StrCat(name, " ", n));
    absl::StrAppend(&out, "\nNot judged: ", EscapeMarkdown(absl::StrJoin(parts, ", ")), ".\n");
  }
  if (failed.empty() && unconfirmed.empty()) out += "\nNo gating metric regressed.\n";
  if (!report_url.empty()) {
    absl::StrAppend(&out, "\n[Full report on the dashboard](", report_url, ")\n");
  } else if (report.report_id > 0) {
    absl::StrAppend(&out, "\nFull report: `perfgate report ", report.report_id, "`\n");
  }
  return out;
}

}  // namespace perfgate::report
