#include "agent/runner.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/identity.h"
#include "common/stats.h"
#include "common/status_macros.h"

namespace perfgate::agent {

absl::StatusOr<Injection> ParseInjection(const std::string& flag, const std::string& spec) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " '", spec, "': expected CASE=PCT, e.g. 'kernels/triad*=25'"));
  }
  double pct = 0;
  std::string num = spec.substr(eq + 1);
  if (!num.empty() && num.back() == '%') num.pop_back();
  if (!absl::SimpleAtod(num, &pct) || !std::isfinite(pct) || pct <= 0 || pct > 1000) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " '", spec, "': PCT '",
                                                   spec.substr(eq + 1),
                                                   "' must be a number in (0, 1000]"));
  }
  return Injection{spec.substr(0, eq), pct / 100.0};
}

namespace {

bool ParseSize(std::string s, uint64_t* out) {
  uint64_t scale = 1;
  if (!s.empty()) {
    switch (s.back()) {
      case 'K': scale = uint64_t{1} << 10; break;
      case 'M': scale = uint64_t{1} << 20; break;
      case 'G': scale = uint64_t{1} << 30; break;
      default: break;
    }
    if (scale != 1) s.pop_back();
  }
  uint64_t v = 0;
  if (!absl::SimpleAtoi(s, &v) || v == 0 || v > (uint64_t{1} << 50) / scale) return false;
  *out = v * scale;
  return true;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandSetValues(const std::string& values) {
  const size_t dots = values.find("..");
  if (dots == std::string::npos) return std::vector<std::string>(absl::StrSplit(values, ',', absl::SkipEmpty()));
  std::string max_part = values.substr(dots + 2);
  uint64_t factor = 2;
  if (const size_t star = max_part.find('*'); star != std::string::npos) {
    if (!absl::SimpleAtoi(max_part.substr(star + 1), &factor) || factor < 2) {
      return absl::InvalidArgumentError(absl::StrCat("--set range '", values, "': the factor after '*' must be an integer >= 2"));
    }
    max_part = max_part.substr(0, star);
  }
  uint64_t lo = 0, hi = 0;
  if (!ParseSize(values.substr(0, dots), &lo) || !ParseSize(max_part, &hi) || lo > hi) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--set range '", values, "': expected MIN..MAX[*F] with 0 < MIN <= MAX, e.g. 8..1G or 1K..64M*4"));
  }
  std::vector<std::string> out;
  for (uint64_t v = lo; v <= hi; v *= factor) {
    out.push_back(std::to_string(v));
    if (v > hi / factor) break;
  }
  return out;
}

absl::StatusOr<double> ParseDuration(const std::string& text) {
  std::string num = text;
  double unit = 1;
  if (!num.empty()) {
    switch (num.back()) {
      case 's': unit = 1; num.pop_back(); break;
      case 'm': unit = 60; num.pop_back(); break;
      case 'h': unit = 3600; num.pop_back(); break;
      default: break;
    }
  }
  double value = 0;
  if (num.empty() || !absl::SimpleAtod(num, &value) || !std::isfinite(value) || value <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "duration '", text, "': expected a positive number of seconds, optionally with s, m or h "
        "(e.g. 90, 60s, 2m)"));
  }
  return value * unit;
}

double BudgetedTimeout(double case_timeout_s, double budget_s, double elapsed_s, size_t cases_left) {
  if (budget_s <= 0 || cases_left == 0) return case_timeout_s;
  const double share = (budget_s - elapsed_s) / static_cast<double>(cases_left);
  return std::max(0.0, std::min(case_timeout_s, share));
}

namespace {

// The fraction of the last injection whose pattern matches `key`; 0 if none.
double InjectedFor(const std::vector<Injection>& injections, const std::string& key) {
  double fraction = 0;
  for (const Injection& s : injections) {
    if (GlobMatch(s.pattern, key)) fraction = s.fraction;
  }
  return fraction;
}

}  // namespace

CaseResult RunCase(const suites::CaseInstance& instance, const RunnerOptions& options) {
  const std::string key = instance.id.Key();
  const double fraction = InjectedFor(options.slowdowns, key);
  suites::State state(instance.id, instance.metrics, options.engine, fraction);
  state.set_throttle_source(options.throttle);
  state.set_work_fraction(InjectedFor(options.added_work, key));
  try {
    instance.spec->body(state);
  } catch (const std::exception& e) {
    state.Fail(absl::StrCat("the case threw: ", e.what()));
  } catch (...) {
    state.Fail("the case threw a non-standard exception");
  }
  if (state.work_fraction() > 0 && state.added_work().empty() && !state.failed() && !state.skipped()) {
    state.Fail(absl::StrCat("--inject-work: ", key, " cannot add to its own work (the host kernels/copy, "
                            "kernels/triad and kernels/sgemm can); use --inject-slowdown for a slowdown sized by time"));
  }
  CaseResult r = state.TakeResult();
  if (fraction > 0) absl::StrAppend(&r.reason, r.reason.empty() ? "" : "; ", "injected slowdown ", fraction * 100, " %");
  if (!state.added_work().empty()) absl::StrAppend(&r.reason, r.reason.empty() ? "" : "; ", state.added_work());
  return r;
}

absl::Status RunCases(const std::vector<suites::CaseInstance>& cases, const RunnerOptions& options,
                      const std::function<absl::Status(CaseResult)>& sink, Clock& clock) {
  const double start = clock.Now();
  // The results of cases that draw more from them (CaseSpec::derive).
  std::map<const suites::CaseSpec*, std::vector<CaseResult>> drawn_from;
  std::vector<const suites::CaseSpec*> derived_order;
  for (size_t i = 0; i < cases.size(); ++i) {
    const suites::CaseInstance& c = cases[i];
    RunnerOptions case_options = options;
    CaseResult result;
    const double elapsed = clock.Now() - start;
    if (options.time_budget_s > 0 && elapsed >= options.time_budget_s) {
      suites::State skipped(c.id, c.metrics, options.engine, 0);
      skipped.Skip(absl::StrFormat("the run's time budget of %g s was spent before the case started",
                                   options.time_budget_s));
      result = skipped.TakeResult();
    } else {
      case_options.engine.timeout_s = BudgetedTimeout(options.engine.timeout_s, options.time_budget_s,
                                                      elapsed, cases.size() - i);
      result = RunCase(c, case_options);
    }
    if (c.spec->derive) {
      auto& seen = drawn_from[c.spec];
      if (seen.empty()) derived_order.push_back(c.spec);
      seen.push_back(result);
    }
    absl::Status s = sink(std::move(result));
    PERFGATE_RETURN_IF_ERROR(s);
  }
  for (const suites::CaseSpec* spec : derived_order) {
    for (CaseResult& r : spec->derive(drawn_from[spec])) PERFGATE_RETURN_IF_ERROR(sink(std::move(r)));
  }
  return absl::OkStatus();
}

std::string FormatCaseList(const std::vector<suites::CaseInstance>& cases) {
  std::string out;
  for (const suites::CaseInstance& c : cases) {
    const std::string why = c.spec->unavailable ? c.spec->unavailable(c.id) : "";
    absl::StrAppend(&out, c.id.Key(), why.empty() ? "  [runs here]" : absl::StrCat("  [skips here: ", why, "]"), "\n");
    for (suites::MetricKind k : c.metrics) {
      const MetricSpec m = suites::SpecOf(k);
      absl::StrAppend(&out, "    ", m.name, " [", m.unit, "] ", ToString(m.direction), "\n");
    }
  }
  return out;
}

std::string FormatSummaryTable(const std::vector<CaseResult>& cases) {
  size_t width = 9;
  for (const CaseResult& c : cases) width = std::max(width, c.benchmark.Key().size());
  std::string out = absl::StrFormat("%-*s  %-10s  %14s %-8s %7s %6s  %s\n", static_cast<int>(width),
                                    "benchmark", "metric", "median", "unit", "noise", "n", "status");
  for (const CaseResult& c : cases) {
    for (size_t m = 0; m < c.metrics.size(); ++m) {
      std::vector<double> v;
      for (const Sample& s : c.samples) {
        if (!s.throttled) v.push_back(s.values[m]);
      }
      const double median = stats::Median(v);
      absl::StrAppendFormat(&out, "%-*s  %-10s  %14.4g %-8s %6.2f%% %6zu  %s\n",
                            static_cast<int>(width), m == 0 ? c.benchmark.Key() : "",
                            c.metrics[m].name, median, c.metrics[m].unit,
                            stats::Noise(v) * 100, v.size(), m == 0 ? ToString(c.status) : "");
    }
  }
  return out;
}

}  // namespace perfgate::agent
