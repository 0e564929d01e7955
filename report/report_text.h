// What the formats of a gate report (table_report.cc, markdown_report.cc,
// junit_report.cc) share: how a verdict counts, how numbers
// are written, the verdict line and header line, and the table's columns.
// Internal to report/.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gate/gate.h"
#include "gate/report.h"

namespace perfgate::report {

using gate::MetricVerdict;
using gate::Verdict;

/// The characters of a commit a report shows, as git does; the full hash
/// is in the JSON.
inline constexpr size_t kShortCommit = 12;

/// One row of a table: a cell per column of kColumns.
using Row = std::vector<std::string>;

/// A regression, a floor missed or a metric missing.
bool IsFailure(Verdict v);
/// A failure of a gating metric.
bool FailsGate(const MetricVerdict& v);
/// A verdict the evidence could not decide.
bool IsUndecided(Verdict v);
/// The report's outcome is a regression.
bool IsRegression(const gate::GateReport& report);
/// The report's outcome is inconclusive.
bool IsInconclusive(const gate::GateReport& report);
/// The outcome's lower-case name.
const char* OutcomeName(const gate::GateReport& report);
/// "ab" or "history".
const char* ModeName(const gate::GateReport& report);

/// A p-value at four decimals ("<0.0001" below), "-" when not finite.
std::string PValue(double p);
/// "[-1.2, +3.4]" in percent, or "-" when no test gave an interval.
std::string Interval(double low, double high);
/// Four significant digits and the unit, "-" when not finite.
std::string Number(double value, const std::string& unit);
/// A fraction as a signed percentage at one decimal, "-" when not finite.
std::string SignedPercent(double fraction);
/// A fraction as a percentage at one decimal, "-" when not finite.
std::string Percent(double fraction);

/// The verdict as a person reads it: spaces, the floor that was missed, and
/// whether it counts.
std::string VerdictText(const MetricVerdict& v);
/// What "(advisory)" after a verdict means, said once under a table that
/// has such a row; empty when no verdict is advisory.
std::string AdvisoryLegend(const gate::GateReport& report);
/// "PASS — ..." or "REGRESSION — 1 of 12 metrics regressed (...)", shared by
/// the table and the Markdown.
std::string VerdictLine(const gate::GateReport& report);
/// "run <id> (<branch> @ <commit>) on <sku> vs <baseline branch>, N baseline
/// runs[; image ...]".
std::string HeaderLine(const gate::GateReport& report);

/// The columns of the table and the Markdown.
extern const Row kColumns;
/// A verdict's cells, one per column of kColumns.
Row Cells(const MetricVerdict& v);
/// Numbers read best right-aligned; names left-aligned.
bool RightAligned(size_t column);
/// Display width, counting UTF-8 continuation bytes as nothing so that a
/// non-ASCII benchmark parameter does not shift the columns.
size_t Width(absl::string_view s);

}  // namespace perfgate::report
