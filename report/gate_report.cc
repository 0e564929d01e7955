#include "report/gate_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace perfgate::report {
namespace {

using Row = std::vector<std::string>;

// Commits are shown short, as git does; the full one is in the JSON.
constexpr size_t kShortCommit = 12;

using gate::MetricVerdict;
using gate::Verdict;

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

// "[-1.2, +3.4]" in percent, or "-" when no test gave an interval.
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

// The verdict as a person reads it: spaces, the floor that was missed, and
// whether it counts.
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

// "PASS — ..." or "REGRESSION — 1 of 12 metrics regressed (...)", shared by
// the table and the Markdown.
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

// "run <id> (<branch> @ <commit>) on <sku> vs <baseline branch>, N baseline runs[; image ...]".
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

// Numbers read best right-aligned; names left-aligned.
bool RightAligned(size_t column) { return column >= 2 && column <= 7; }

// Display width, counting UTF-8 continuation bytes as nothing so that a
// non-ASCII benchmark parameter does not shift the columns.
size_t Width(absl::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string EscapeMarkdown(absl::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\n':
      case '\r':
        out += ' ';  // a newline would end the table row
        break;
      case '|':
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '#':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string MarkdownTable(const Row& header, const std::vector<Row>& rows) {
  std::string out = "|";
  for (const std::string& h : header) absl::StrAppend(&out, " ", h, " |");
  out += "\n|";
  for (size_t i = 0; i < header.size(); ++i) out += RightAligned(i) ? "---:|" : "---|";
  out += "\n";
  for (const Row& row : rows) {
    out += "|";
    for (const std::string& cell : row) absl::StrAppend(&out, " ", EscapeMarkdown(cell), " |");
    out += "\n";
  }
  return out;
}

// Escapes text for XML content and attribute values alike. Characters XML
// 1.0 forbids (most control characters) cannot be escaped, so they become '?'.
std::string EscapeXml(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
        out += "&#10;";  // kept through attribute-value normalisation
        break;
      case '\r':
        out += "&#13;";
        break;
      case '\t':
        out += "&#9;";
        break;
      default:
        out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    }
  }
  return out;
}

nlohmann::ordered_json JsonNumber(double value) {
  if (!std::isfinite(value)) return nullptr;
  return value;
}

}  // namespace

std::string VerdictName(gate::Verdict verdict) { return gate::ToString(verdict); }

std::string RenderTable(const gate::GateReport& report) {
  std::vector<Row> rows;
  rows.reserve(report.result.verdicts.size());
  for (const MetricVerdict& v : report.result.verdicts) rows.push_back(Cells(v));
  std::vector<size_t> widths(kColumns.size());
  for (size_t i = 0; i < kColumns.size(); ++i) widths[i] = Width(kColumns[i]);
  for (const Row& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
  }
  auto format_row = [&](const Row& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - Width(row[i]), ' ');
      if (i > 0) line += "  ";
      // The last column is not padded, so lines carry no trailing blanks.
      if (RightAligned(i)) {
        absl::StrAppend(&line, pad, row[i]);
      } else {
        absl::StrAppend(&line, row[i], i + 1 < row.size() ? pad : "");
      }
    }
    return line + "\n";
  };

  std::string out = absl::StrCat("perfgate gate: candidate ", HeaderLine(report), "\n\n");
  if (rows.empty()) {
    out += "(no metrics in the candidate or the baseline)\n";
  } else {
    out += format_row(kColumns);
    for (const Row& row : rows) out += format_row(row);
  }
  // What to do about each failure is in its note; the table has no room for it.
  bool first_note = true;
  for (const MetricVerdict& v : report.result.verdicts) {
    if (!(IsFailure(v.verdict) || (v.gating && IsUndecided(v.verdict))) || v.note.empty()) {
      continue;
    }
    if (first_note) out += "\n";
    first_note = false;
    absl::StrAppend(&out, "  ", v.benchmark, " ", v.metric, ": ", v.note, "\n");
  }
  if (!report.result.invalid_reasons.empty()) {
    out += "\nEnvironment unfit for gating:\n";
    for (const std::string& r : report.result.invalid_reasons) absl::StrAppend(&out, "  - ", r, "\n");
  }
  absl::StrAppend(&out, "\nperfgate gate: ", VerdictLine(report), "\n");
  return out;
}

std::string RenderMarkdown(const gate::GateReport& report) {
  std::string line = VerdictLine(report);
  // The status word leads in bold; everything after it comes from the report
  // and is escaped.
  const size_t dash = line.find(" \u2014 ");
  std::string out =
      absl::StrCat("**perfgate gate: ", line.substr(0, dash), "**",
                   dash == std::string::npos ? "" : EscapeMarkdown(line.substr(dash)), "\n\n",
                   EscapeMarkdown(absl::StrCat("Candidate ", HeaderLine(report), ".")), "\n");
  if (!report.result.summary.empty()) {
    absl::StrAppend(&out, "\n", EscapeMarkdown(report.result.summary), "\n");
  }

  std::vector<Row> failed;
  for (const MetricVerdict& v : report.result.verdicts) {
    if (!IsFailure(v.verdict)) continue;
    Row row = Cells(v);
    row.push_back(v.note);
    failed.push_back(std::move(row));
  }
  if (!report.result.invalid_reasons.empty()) {
    out += "\nThe environment was unfit for gating, so the numbers below say little about the code:\n\n";
    for (const std::string& r : report.result.invalid_reasons) {
      absl::StrAppend(&out, "- ", EscapeMarkdown(r), "\n");
    }
  }
  if (failed.empty()) {
    out += "\nNo metric regressed.\n";
  } else {
    Row header = kColumns;
    header.push_back("note");
    absl::StrAppend(&out, "\n", MarkdownTable(header, failed));
  }

  std::vector<Row> all;
  for (const MetricVerdict& v : report.result.verdicts) all.push_back(Cells(v));
  const size_t total = report.result.verdicts.size();
  // GitHub renders Markdown inside <details> only after a blank line.
  absl::StrAppend(&out, "\n<details><summary>All ", total, total == 1 ? " metric" : " metrics",
                  "</summary>\n\n", MarkdownTable(kColumns, all), "\n</details>\n");
  return out;
}

std::string RenderJUnit(const gate::GateReport& report) {
  int failures = 0, skipped = 0;
  for (const MetricVerdict& v : report.result.verdicts) {
    if (FailsGate(v)) ++failures;
    if (IsUndecided(v.verdict)) ++skipped;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(&out, "<testsuite name=\"perfgate gate\" tests=\"", report.result.verdicts.size(),
                  "\" failures=\"", failures, "\" errors=\"0\" skipped=\"", skipped, "\">\n");
  out += "  <properties>\n";
  auto property = [&](absl::string_view name, absl::string_view value) {
    absl::StrAppend(&out, "    <property name=\"", name, "\" value=\"", EscapeXml(value), "\"/>\n");
  };
  property("candidate_run_id", report.candidate_run_id);
  property("sku", report.sku);
  property("candidate_branch", report.candidate_branch);
  property("candidate_commit", report.candidate_commit);
  property("baseline_branch", report.baseline_branch);
  property("baseline_runs", absl::StrCat(report.baseline_run_ids.size()));
  property("candidate_image_digest", report.candidate_image_digest);
  property("baseline_image_digests", absl::StrJoin(report.baseline_image_digests, ","));
  property("mode", ModeName(report));
  property("outcome", OutcomeName(report));
  property("summary", report.result.summary);
  out += "  </properties>\n";

  for (const MetricVerdict& v : report.result.verdicts) {
    absl::StrAppend(&out, "  <testcase classname=\"", EscapeXml(v.benchmark), "\" name=\"",
                    EscapeXml(v.metric), "\" time=\"0\">\n");
    const std::string numbers =
        absl::StrCat("baseline ", Number(v.baseline_median, v.unit), " over ",
                     v.baseline_runs, " runs, candidate ", Number(v.candidate_median, v.unit),
                     " over ", v.candidate_samples, " samples, change ",
                     SignedPercent(v.change), " % ", Interval(v.change_ci_low, v.change_ci_high),
                     ", p adjusted ", PValue(v.p_adjusted), ", tolerance ",
                     Percent(v.tolerance), " %");
    if (FailsGate(v)) {
      absl::StrAppend(&out, "    <failure type=\"", VerdictName(v.verdict), "\" message=\"",
                      EscapeXml(absl::StrCat(VerdictText(v), ": ", v.note)), "\">",
                      EscapeXml(numbers), "</failure>\n");
    } else if (IsUndecided(v.verdict)) {
      absl::StrAppend(&out, "    <skipped message=\"",
                      EscapeXml(absl::StrCat(VerdictText(v), ": ", v.note)), "\"/>\n");
    } else {
      // Advisory failures and passes still carry their numbers for the CI view.
      absl::StrAppend(&out, "    <system-out>",
                      EscapeXml(absl::StrCat(VerdictText(v), ": ", v.note)), "</system-out>\n");
    }
    out += "  </testcase>\n";
  }
  out += "</testsuite>\n";
  return out;
}

std::string RenderJson(const gate::GateReport& report) {
  nlohmann::ordered_json verdicts = nlohmann::ordered_json::array();
  for (const MetricVerdict& v : report.result.verdicts) {
    verdicts.push_back({
        {"benchmark", v.benchmark},
        {"metric", v.metric},
        {"unit", v.unit},
        {"direction", perfgate::ToString(v.direction)},
        {"baseline_median", JsonNumber(v.baseline_median)},
        {"candidate_median", JsonNumber(v.candidate_median)},
        {"change", JsonNumber(v.change)},
        {"change_ci", {JsonNumber(v.change_ci_low), JsonNumber(v.change_ci_high)}},
        {"p_value", JsonNumber(v.p_value)},
        {"p_adjusted", JsonNumber(v.p_adjusted)},
        {"method", gate::ToString(v.method)},
        {"candidate_noise", JsonNumber(v.candidate_noise)},
        {"baseline_samples", v.baseline_samples},
        {"tolerance", JsonNumber(v.tolerance)},
        {"floor", JsonNumber(v.floor)},
        {"verdict", VerdictName(v.verdict)},
        {"gating", v.gating},
        {"candidate_samples", v.candidate_samples},
        {"baseline_runs", v.baseline_runs},
        {"note", v.note},
    });
  }
  nlohmann::ordered_json out = {
      {"report_id", report.report_id},
      {"candidate_run_id", report.candidate_run_id},
      {"sku", report.sku},
      {"candidate_branch", report.candidate_branch},
      {"candidate_commit", report.candidate_commit},
      {"baseline_branch", report.baseline_branch},
      {"baseline_run_ids", report.baseline_run_ids},
      {"candidate_image_digest", report.candidate_image_digest},
      {"baseline_image_digests", report.baseline_image_digests},
      {"mode", ModeName(report)},
      {"fdr", JsonNumber(report.fdr)},
      {"outcome", OutcomeName(report)},
      {"summary", report.result.summary},
      {"invalid_reasons", report.result.invalid_reasons},
      {"verdicts", std::move(verdicts)},
  };
  // Strings from the wire or a result file should be UTF-8; replace rather than throw if not.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

absl::Status WriteReportFiles(const gate::GateReport& report, const std::string& markdown_file,
                              const std::string& junit_file, const std::string& json_file) {
  const std::pair<const std::string*, std::string (*)(const gate::GateReport&)> files[] = {
      {&markdown_file, RenderMarkdown}, {&junit_file, RenderJUnit}, {&json_file, RenderJson}};
  for (const auto& [path, render] : files) {
    if (path->empty()) continue;
    std::ofstream out(*path);
    out << render(report);
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot write the report to ", *path));
  }
  return absl::OkStatus();
}

int ExitCode(const gate::GateReport& report) {
  if (IsRegression(report)) return 1;
  return IsInconclusive(report) ? 3 : 0;
}

}  // namespace perfgate::report
