#include "report/history.h"

#include <chrono>
#include <cmath>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/report_text.h"

namespace perfgate::report {
namespace {

// Whole seconds since the epoch; 0 (never set) prints as "-".
std::string Time(TimePoint t, const char* format) {
  const std::time_t secs =
      std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  if (secs == 0) return "-";
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string Median(double x, const std::string& unit) {
  std::string text = absl::StrFormat("%.4g", x);
  if (!unit.empty()) absl::StrAppend(&text, " ", unit);
  return text;
}

std::string ChangeText(double change) {
  if (!std::isfinite(change)) return "change unknown";
  return absl::StrFormat("%+.1f %% %s", change * 100.0, change > 0 ? "worse" : "better");
}

}  // namespace

std::string RenderHistory(const HistoryReport& history, const std::string& benchmark,
                          const std::string& metric) {
  const HistorySeries& series = history.series;
  std::string out = absl::StrCat(benchmark, " ", metric, " [", series.unit, "]\n");
  for (const HistoryPoint& p : series.points) {
    absl::StrAppend(&out, absl::StrFormat("%-19s  %-12s  %-20s  %-16s  %12.4g  n=%d\n",
                                          Time(p.finished_at, "%Y-%m-%d %H:%M:%S"),
                                          p.commit.substr(0, kShortCommit), p.branch, p.node,
                                          p.median, p.n));
  }
  if (history.changes.empty()) return out;
  out += "\n";
  for (const HistoryChange& c : history.changes) {
    // The change names the point where its level begins.
    const bool known = c.index < series.points.size();
    const HistoryPoint none;
    const HistoryPoint& at = known ? series.points[c.index] : none;
    const std::string date = known ? Time(at.finished_at, "%Y-%m-%d") : std::string("-");
    absl::StrAppend(&out, "change point at ", at.commit.substr(0, kShortCommit), " (", date, ", run ",
                    at.run_id, "): median ", Median(c.median_before, ""), " → ",
                    Median(c.median_after, series.unit), ", ", ChangeText(c.change),
                    absl::StrFormat(", p %.3g\n", c.p_value));
  }
  return out;
}

}  // namespace perfgate::report
