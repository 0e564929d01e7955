// The gate report as JUnit XML for a CI test view (RenderJUnit).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/escape.h"
#include "report/gate_report.h"
#include "report/report_text.h"

namespace perfgate::report {

using gate::MetricVerdict;

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

}  // namespace perfgate::report
