#include "suites/registry.h"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/identity.h"

namespace perfgate::suites {

MetricSpec SpecOf(MetricKind kind) {
  switch (kind) {
    case MetricKind::kTime: return {"time", "ms", Direction::kLowerIsBetter};
    case MetricKind::kBandwidth: return {"bandwidth", "GB/s", Direction::kHigherIsBetter};
    case MetricKind::kThroughput: return {"throughput", "GFLOP/s", Direction::kHigherIsBetter};
    case MetricKind::kTflops: return {"tflops", "TFLOP/s", Direction::kHigherIsBetter};
    case MetricKind::kAlgBandwidth: return {"algbw", "GB/s", Direction::kHigherIsBetter};
    case MetricKind::kBusBandwidth: return {"busbw", "GB/s", Direction::kHigherIsBetter};
    case MetricKind::kRoofFraction: return {"roof_fraction", "ratio", Direction::kHigherIsBetter};
    case MetricKind::kTokensPerSecond: return {"tokens_per_s", "tokens/s", Direction::kHigherIsBetter};
    case MetricKind::kMfu: return {"mfu", "ratio", Direction::kHigherIsBetter};
    case MetricKind::kScalingEfficiency:
      return {"scaling_efficiency", "ratio", Direction::kHigherIsBetter};
    case MetricKind::kRequestsPerSecond: return {"requests_per_s", "requests/s", Direction::kHigherIsBetter};
    case MetricKind::kOutputTokensPerSecond:
      return {"output_tokens_per_s", "tokens/s", Direction::kHigherIsBetter};
    case MetricKind::kGoodput: return {"goodput", "requests/s", Direction::kHigherIsBetter};
    case MetricKind::kTtftP50: return {"ttft_p50", "ms", Direction::kLowerIsBetter};
    case MetricKind::kTtftP90: return {"ttft_p90", "ms", Direction::kLowerIsBetter};
    case MetricKind::kTtftP99: return {"ttft_p99", "ms", Direction::kLowerIsBetter};
    case MetricKind::kTpotP50: return {"tpot_p50", "ms", Direction::kLowerIsBetter};
    case MetricKind::kTpotP90: return {"tpot_p90", "ms", Direction::kLowerIsBetter};
    case MetricKind::kTpotP99: return {"tpot_p99", "ms", Direction::kLowerIsBetter};
    case MetricKind::kQueueP99: return {"queue_p99", "ms", Direction::kLowerIsBetter};
    case MetricKind::kE2eP99: return {"e2e_p99", "ms", Direction::kLowerIsBetter};
    case MetricKind::kPreemptions: return {"preemptions", "count", Direction::kLowerIsBetter};
    case MetricKind::kKvOccupancy: return {"kv_occupancy", "ratio", Direction::kLowerIsBetter};
    case MetricKind::kKneeRate: return {"knee_rate", "requests/s", Direction::kHigherIsBetter};
  }
  std::abort();
}

bool IsValueKind(MetricKind kind) { return kind > MetricKind::kScalingEfficiency; }

State::State(BenchmarkId id, std::vector<MetricKind> metrics, EngineOptions options,
             double inject_fraction)
    : id_(std::move(id)),
      metrics_(std::move(metrics)),
      options_(options),
      inject_fraction_(inject_fraction) {}

const std::string& State::Param(const std::string& name) const {
  auto it = id_.params.find(name);
  if (it == id_.params.end()) {
    std::fprintf(stderr, "perfgate: case %s reads undeclared parameter '%s'\n", id_.Key().c_str(),
                 name.c_str());
    std::abort();
  }
  return it->second;
}

std::string State::ParamOr(const std::string& name, const std::string& fallback) const {
  auto it = id_.params.find(name);
  return it == id_.params.end() ? fallback : it->second;
}

bool State::CpuClock(int64_t threads) {
  const std::string clock = ParamOr("clock", kWallClock);
  if (clock != kWallClock && clock != "cpu") {
    Fail(absl::StrCat("clock '", clock, "': expected wall or cpu"));
  } else if (clock == "cpu" && threads != 1) {
    Fail("clock=cpu times the calling thread alone: set threads=1 (BLAS threads would be left out)");
  }
  return clock == "cpu";
}

int64_t State::IntParam(const std::string& name) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(Param(name), &v)) {
    Fail(absl::StrCat("parameter ", name, "='", Param(name), "' is not an integer"));
    return 0;
  }
  return v;
}

size_t State::AddWork(size_t units, const char* what) {
  if (work_fraction_ <= 0) return units;
  const auto extra = static_cast<size_t>(std::llround(static_cast<double>(units) * work_fraction_));
  added_work_ = absl::StrCat("injected work +", work_fraction_ * 100, " % (", extra, " more ", what, " than its ",
                             units, ")");
  return units + extra;
}

void State::MeasureHost(const std::function<void()>& iteration, Clock& clock) {
  Record(perfgate::MeasureHost(iteration, options_, inject_fraction_, clock));
}

void State::MeasureSamples(const std::function<void()>& warmup,
                           const std::function<double()>& sample) {
  Record(perfgate::MeasureSamples(warmup, sample, options_, SteadyClock(), throttle_));
}

void State::Record(const Measurement& m) {
  for (size_t i = 0; i < m.sample_s.size(); ++i) {
    Sample s;
    s.index = static_cast<uint32_t>(samples_.size());
    s.throttled = m.throttled[i];
    const double t = m.sample_s[i];
    for (MetricKind k : metrics_) {
      switch (k) {
        case MetricKind::kTime: s.values.push_back(t * 1e3); break;
        case MetricKind::kBandwidth: s.values.push_back(bytes_ / t / 1e9); break;
        case MetricKind::kThroughput: s.values.push_back(flops_ / t / 1e9); break;
        case MetricKind::kTflops: s.values.push_back(flops_ / t / 1e12); break;
        case MetricKind::kAlgBandwidth: s.values.push_back(alg_bytes_ / t / 1e9); break;
        case MetricKind::kBusBandwidth:
          s.values.push_back(alg_bytes_ / t / 1e9 * bus_factor_);
          break;
        case MetricKind::kRoofFraction:
          // No roof measured is a zero fraction, never a division by zero.
          s.values.push_back(roof_ > 0 ? bytes_ / t / 1e9 / roof_ : 0.0);
          break;
        case MetricKind::kTokensPerSecond: s.values.push_back(tokens_ / t); break;
        case MetricKind::kMfu: s.values.push_back(peak_flops_ > 0 ? flops_ / t / peak_flops_ : 0.0); break;
        case MetricKind::kScalingEfficiency: s.values.push_back(reference_s_ / t); break;
        default: s.values.push_back(0.0); break;  // value kinds come from RecordValues
      }
    }
    samples_.push_back(std::move(s));
  }
  energy_.Add(m);
  noise_ = m.noise;
  sampling_s_ += m.sampling_s;
  if (status_ == CaseStatus::kUnspecified) {
    if (m.reason == StopReason::kTimeout) {
      status_ = CaseStatus::kTimedOut;
      reason_ = absl::StrFormat("per-case timeout of %g s reached at noise %.2f %% (target %.2f %%)",
                                options_.timeout_s, noise_ * 100, options_.max_noise * 100);
    } else {
      status_ = CaseStatus::kOk;
      reason_ = ToString(m.reason);
    }
  }
}

void State::RecordValues(const std::vector<double>& values, double seconds) {
  if (values.size() != metrics_.size() || !std::all_of(metrics_.begin(), metrics_.end(), IsValueKind)) {
    Fail(absl::StrFormat("a value sample has %zu values for %zu metrics that must all be values", values.size(),
                         metrics_.size()));
    return;
  }
  samples_.push_back({static_cast<uint32_t>(samples_.size()), values, false});
  sampling_s_ += seconds;
  if (status_ == CaseStatus::kUnspecified) {
    status_ = CaseStatus::kOk;
    reason_ = "value samples";
  }
}

void State::RecordValues(const std::vector<double>& values, const Measurement& around, double tokens) {
  const size_t before = samples_.size();
  RecordValues(values, around.sample_s.empty() ? 0.0 : around.sample_s[0]);
  if (samples_.size() == before) return;  // refused: the case failed
  samples_.back().throttled = !around.throttled.empty() && around.throttled[0];
  energy_.Add(around, tokens);
}

void State::AddNote(const std::string& note) {
  if (!notes_.empty()) notes_ += "; ";
  notes_ += note;
}

void State::Skip(std::string reason) {
  status_ = CaseStatus::kSkipped;
  reason_ = std::move(reason);
}

void State::Fail(std::string reason) {
  if (status_ == CaseStatus::kFailed) return;  // keep the first cause
  status_ = CaseStatus::kFailed;
  reason_ = std::move(reason);
}

void State::TimeOut(std::string reason) {
  if (status_ == CaseStatus::kFailed || status_ == CaseStatus::kSkipped) return;
  status_ = CaseStatus::kTimedOut;
  reason_ = std::move(reason);
}

CaseResult State::TakeResult() {
  CaseResult r;
  r.benchmark = id_;
  for (MetricKind k : metrics_) r.metrics.push_back(SpecOf(k));
  r.samples = std::move(samples_);
  if (status_ == CaseStatus::kUnspecified) {
    status_ = CaseStatus::kFailed;
    reason_ = "the case neither recorded samples nor skipped";
  }
  r.status = status_;
  r.reason = reason_;
  if (!notes_.empty() && r.status != CaseStatus::kSkipped && r.status != CaseStatus::kFailed) {
    r.reason = absl::StrCat(r.reason, "; ", notes_);
  }
  r.noise = noise_;
  r.sample_seconds = sampling_s_;
  if (r.status == CaseStatus::kOk || r.status == CaseStatus::kTimedOut) energy_.AppendTo(r, flops_, tokens_);
  return r;
}

void Registry::Add(CaseSpec spec) {
  auto bug = [&](const char* what) {
    std::fprintf(stderr, "perfgate: bad registration of %s/%s: %s\n", spec.suite.c_str(),
                 spec.name.c_str(), what);
    std::abort();
  };
  if (spec.suite.empty() || spec.name.empty()) bug("empty suite or name");
  if (spec.metrics.empty() && !spec.metrics_for) bug("no metrics");
  if (!spec.body) bug("no body");
  for (const Axis& a : spec.axes) {
    if (a.name.empty() || a.values.empty()) bug("axis without name or values");
  }
  for (const CaseSpec& c : cases_) {
    if (c.suite == spec.suite && c.name == spec.name) bug("registered twice");
  }
  cases_.push_back(std::move(spec));
}

std::vector<std::string> Registry::Suites() const {
  std::vector<std::string> out;
  for (const CaseSpec& c : cases_) {
    if (std::find(out.begin(), out.end(), c.suite) == out.end()) out.push_back(c.suite);
  }
  return out;
}

absl::StatusOr<std::vector<CaseInstance>> Registry::Select(
    const std::vector<std::string>& suites, const std::vector<std::string>& filters,
    const std::map<std::string, std::vector<std::string>>& explicit_overrides,
    const std::map<std::string, std::vector<std::string>>& implicit) const {
  std::map<std::string, std::vector<std::string>> overrides = explicit_overrides;
  overrides.insert(implicit.begin(), implicit.end());  // an explicit value wins
  const std::vector<std::string> known = Suites();
  for (const std::string& s : suites) {
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown suite '", s, "' (known: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  std::set<std::string> used_overrides;
  // Overriding a shape's parameters can make points equal (every GEMM shape
  // set to m=n=k=1024): a key is run once.
  std::set<std::string> selected;
  std::vector<CaseInstance> out;
  for (const CaseSpec& spec : cases_) {
    if (suites.empty() ? spec.only_when_named
                       : std::find(suites.begin(), suites.end(), spec.suite) == suites.end()) {
      continue;
    }
    // Explicit points, with overridden parameters replaced.
    std::vector<std::map<std::string, std::string>> points = spec.points;
    if (points.empty()) points.emplace_back();
    for (auto& p : points) {
      for (auto& [name, value] : p) {
        auto it = overrides.find(name);
        if (it == overrides.end()) continue;
        used_overrides.insert(name);
        if (it->second.size() != 1) {
          return absl::InvalidArgumentError(absl::StrCat(
              "--set ", name, ": parameter of ", spec.suite, "/", spec.name,
              " is part of a fixed shape and takes a single value"));
        }
        value = it->second.front();
      }
    }
    // Cartesian product of the points and the axes (options last, an
    // option at its default left out of the key), last axis fastest.
    std::vector<Axis> axes = spec.axes;
    for (const auto& [name, fallback] : spec.options) axes.push_back({name, {fallback}});
    std::vector<std::vector<std::string>> values;
    for (const Axis& a : axes) {
      auto it = overrides.find(a.name);
      if (it != overrides.end()) used_overrides.insert(a.name);
      values.push_back(it != overrides.end() ? it->second : a.values);
    }
    size_t total = 1;
    for (const auto& v : values) total *= v.size();
    for (const auto& point : points) {
      for (size_t n = 0; n < total; ++n) {
        CaseInstance inst{&spec, BenchmarkId{spec.suite, spec.name, point}};
        size_t rem = n;  // mixed-radix digits of n
        for (size_t i = values.size(); i-- > 0;) {
          const std::string& value = values[i][rem % values[i].size()];
          const auto option = spec.options.find(axes[i].name);
          if (option == spec.options.end() || option->second != value) inst.id.params[axes[i].name] = value;
          rem /= values[i].size();
        }
        inst.metrics = spec.metrics_for ? spec.metrics_for(inst.id) : spec.metrics;
        const std::string key = inst.id.Key();
        bool keep = filters.empty();
        // A filter without a '/' is read within the suite: 'gemm*' selects
        // kernels/gemm{...} as 'kernels/gemm*' would.
        const std::string in_suite = key.substr(spec.suite.size() + 1);
        for (const std::string& f : filters) {
          keep = keep || GlobMatch(f, key) ||
                 (f.find('/') == std::string::npos && GlobMatch(f, in_suite));
        }
        if (keep && selected.insert(key).second) out.push_back(std::move(inst));
      }
    }
  }
  for (const auto& [name, vals] : explicit_overrides) {
    if (!used_overrides.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--set ", name, "=...: no selected case has a parameter '", name, "'"));
    }
  }
  return out;
}

}  // namespace perfgate::suites
