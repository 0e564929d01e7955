#include "cli/history.h"

#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace perfgate::cli {
namespace {

// Commits are shown short, as git does; the full one is in the JSON.
constexpr size_t kShortCommit = 12;

std::string Time(const google::protobuf::Timestamp& t, const char* format) {
  if (t.seconds() == 0) return "-";
  std::time_t secs = t.seconds();
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

nlohmann::json Number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

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

std::string RenderHistory(const v1::HistoryResponse& history, const std::string& benchmark,
                          const std::string& metric) {
  std::string out = absl::StrCat(benchmark, " ", metric, " [", history.unit(), "]\n");
  for (const v1::HistoryPoint& p : history.points()) {
    absl::StrAppend(&out, absl::StrFormat("%-19s  %-12s  %-20s  %-16s  %12.4g  n=%d\n",
                                          Time(p.finished_at(), "%Y-%m-%d %H:%M:%S"),
                                          p.commit().substr(0, kShortCommit), p.branch(), p.node(),
                                          p.median(), p.n()));
  }
  if (history.change_points().empty()) return out;
  out += "\n";
  for (const v1::ChangePoint& c : history.change_points()) {
    const std::string date = static_cast<int>(c.index()) < history.points_size()
                                 ? Time(history.points(static_cast<int>(c.index())).finished_at(), "%Y-%m-%d")
                                 : std::string("-");
    absl::StrAppend(&out, "change point at ", c.commit().substr(0, kShortCommit), " (", date, ", run ",
                    c.run_id(), "): median ", Median(c.median_before(), ""), " → ",
                    Median(c.median_after(), history.unit()), ", ", ChangeText(c.change()),
                    absl::StrFormat(", p %.3g\n", c.p_value()));
  }
  return out;
}

std::string RenderHistoryJson(const v1::HistoryResponse& history, const std::string& benchmark,
                              const std::string& metric) {
  nlohmann::json points = nlohmann::json::array();
  for (const v1::HistoryPoint& p : history.points()) {
    points.push_back({{"run_id", p.run_id()},
                      {"commit", p.commit()},
                      {"branch", p.branch()},
                      {"node", p.node()},
                      {"finished_at", Time(p.finished_at(), "%Y-%m-%dT%H:%M:%SZ")},
                      {"median", Number(p.median())},
                      {"n", p.n()}});
  }
  nlohmann::json changes = nlohmann::json::array();
  for (const v1::ChangePoint& c : history.change_points()) {
    changes.push_back({{"index", c.index()},
                       {"commit", c.commit()},
                       {"run_id", c.run_id()},
                       {"median_before", Number(c.median_before())},
                       {"median_after", Number(c.median_after())},
                       {"change", Number(c.change())},
                       {"statistic", Number(c.statistic())},
                       {"p_value", Number(c.p_value())}});
  }
  const nlohmann::json root = {{"benchmark", benchmark},
                               {"metric", metric},
                               {"unit", history.unit()},
                               {"direction", history.direction() == v1::HIGHER_IS_BETTER
                                                 ? "higher_is_better"
                                                 : "lower_is_better"},
                               {"points", points},
                               {"change_points", changes}};
  return root.dump(2) + "\n";
}

}  // namespace perfgate::cli
