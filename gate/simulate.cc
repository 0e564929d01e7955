#include "gate/simulate.h"

#include <cmath>
#include <numbers>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/stats.h"

namespace perfgate::gate {
namespace {

// Normal deviates from the raw 64-bit stream (Box–Muller), so that a seed
// gives the same table with any standard library.
class Normal {
 public:
  explicit Normal(uint64_t seed) : rng_(seed) {}
  double operator()() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = 0;
    while (u1 <= 0) u1 = Uniform();
    const double u2 = Uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2 * std::numbers::pi * u2);
    has_spare_ = true;
    return r * std::cos(2 * std::numbers::pi * u2);
  }

 private:
  double Uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
  std::mt19937_64 rng_;
  bool has_spare_ = false;
  double spare_ = 0;
};

// One process's samples: its own offset, then within-process noise.
void AppendProcess(Normal& normal, double mu, double sigma, double tau, unsigned n,
                   std::vector<double>* out) {
  const double offset = std::exp(tau * normal());
  for (unsigned i = 0; i < n; ++i) out->push_back(mu * offset * std::exp(sigma * normal()));
}

// What the gate reads of a metric, without Summarize's bootstrap of the
// median: the gate never looks at that interval, and the simulation builds
// hundreds of thousands of metrics.
MetricData Metric(unsigned index, std::vector<double> samples) {
  MetricData m;
  m.summary.benchmark = absl::StrCat("sim/case{i=", index, "}");
  m.summary.metric = "time";
  m.summary.unit = "ms";
  m.summary.direction = Direction::kLowerIsBetter;
  m.summary.n = static_cast<uint32_t>(samples.size());
  m.summary.median = stats::Median(samples);
  m.summary.mean = stats::Mean(samples);
  m.summary.noise = stats::Noise(samples);
  m.summary.status = CaseStatus::kOk;
  m.samples = std::move(samples);
  return m;
}

// One gate's input: metric 0 of the candidate slowed by `slowdown`.
GateInput MakeGate(Mode mode, double sigma, double slowdown, const SimulationOptions& o,
                   Normal& normal) {
  const double tau = sigma * o.process_noise_ratio;
  GateInput in;
  in.mode = mode;
  in.sku = "cpu-simulated";
  in.candidate.run_id = "candidate";
  if (mode == Mode::kAb) {
    RunData base;
    base.run_id = "baseline";
    for (unsigned m = 0; m < o.metrics; ++m) {
      std::vector<double> a, b;
      const double mu = m == 0 ? 1.0 + slowdown : 1.0;
      // ABAB...: each round runs one block of each side, each its own process.
      for (unsigned r = 0; r < o.ab_rounds; ++r) {
        AppendProcess(normal, 1.0, sigma, tau, o.ab_block_samples, &a);
        AppendProcess(normal, mu, sigma, tau, o.ab_block_samples, &b);
      }
      base.metrics.push_back(Metric(m, std::move(a)));
      in.candidate.metrics.push_back(Metric(m, std::move(b)));
      base.metrics.back().blocks = o.ab_rounds;
      in.candidate.metrics.back().blocks = o.ab_rounds;
      base.metrics.back().rounds = true;
      in.candidate.metrics.back().rounds = true;
    }
    in.baselines.push_back(std::move(base));
    return in;
  }
  for (unsigned k = 0; k < o.history_runs; ++k) {
    RunData run;
    run.run_id = absl::StrCat("history-", k);
    // One process per run: every metric of a run shares nothing but the
    // process, so each gets its own offset draw.
    for (unsigned m = 0; m < o.metrics; ++m) {
      std::vector<double> s;
      AppendProcess(normal, 1.0, sigma, tau, o.run_samples, &s);
      run.metrics.push_back(Metric(m, std::move(s)));
    }
    in.baselines.push_back(std::move(run));
  }
  for (unsigned m = 0; m < o.metrics; ++m) {
    std::vector<double> s;
    AppendProcess(normal, m == 0 ? 1.0 + slowdown : 1.0, sigma, tau, o.run_samples, &s);
    in.candidate.metrics.push_back(Metric(m, std::move(s)));
  }
  return in;
}

bool SlowedMetricRegressed(const GateResult& r) {
  for (const MetricVerdict& v : r.verdicts) {
    if (v.benchmark == "sim/case{i=0}") return v.verdict == Verdict::kRegression;
  }
  return false;
}

}  // namespace

std::vector<SimulationRow> Simulate(const SimulationOptions& options, const Policy& policy) {
  std::vector<SimulationRow> rows;
  uint64_t stream = 0;
  for (Mode mode : {Mode::kAb, Mode::kHistory}) {
    for (double sigma : options.noise_levels) {
      SimulationRow row;
      row.mode = mode;
      row.noise = sigma;
      // Each cell its own stream: adding a noise level leaves the others alone.
      Normal normal(options.seed + 0x9e3779b97f4a7c15ULL * ++stream);
      unsigned failed = 0;
      uint64_t noisy = 0, judged = 0;
      for (unsigned t = 0; t < options.aa_trials; ++t) {
        const GateResult r = EvaluateGate(MakeGate(mode, sigma, 0.0, options, normal), policy);
        if (r.outcome == Outcome::kRegression) ++failed;
        for (const MetricVerdict& v : r.verdicts) {
          ++judged;
          if (v.verdict == Verdict::kTooNoisy) ++noisy;
        }
      }
      row.false_alarm = options.aa_trials > 0 ? static_cast<double>(failed) / options.aa_trials : 0;
      row.too_noisy = judged > 0 ? static_cast<double>(noisy) / static_cast<double>(judged) : 0;
      for (double slowdown : options.slowdowns) {
        unsigned caught = 0;
        for (unsigned t = 0; t < options.power_trials; ++t) {
          if (SlowedMetricRegressed(
                  EvaluateGate(MakeGate(mode, sigma, slowdown, options, normal), policy))) {
            ++caught;
          }
        }
        row.detection.push_back(
            options.power_trials > 0 ? static_cast<double>(caught) / options.power_trials : 0);
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string RenderSimulation(const SimulationOptions& o, const Policy& policy,
                             const std::vector<SimulationRow>& rows) {
  std::string out = absl::StrFormat(
      "Gates of %u metrics; tolerance %.1f %%, Benjamini–Hochberg q %.1f %%. A/B: %u rounds x "
      "%u samples per side. History: K = %u runs of %u samples. Process offset sd = %.2f x "
      "noise. %u A/A gates and %u gates per slowdown per cell; seed %#x.\n\n",
      o.metrics, policy.tolerance * 100, policy.fdr * 100, o.ab_rounds, o.ab_block_samples,
      o.history_runs, o.run_samples, o.process_noise_ratio, o.aa_trials, o.power_trials,
      static_cast<unsigned long long>(o.seed));
  out += "| mode | noise | A/A gates failed | A/A metrics too noisy |";
  for (double s : o.slowdowns) absl::StrAppend(&out, absl::StrFormat(" caught %g %% |", s * 100));
  out += "\n|---|---:|---:|---:|";
  for (size_t i = 0; i < o.slowdowns.size(); ++i) out += "---:|";
  out += "\n";
  for (const SimulationRow& r : rows) {
    absl::StrAppend(&out, absl::StrFormat("| %s | %g %% | %.1f %% | %.1f %% |",
                                          r.mode == Mode::kAb ? "A/B" : "history", r.noise * 100,
                                          r.false_alarm * 100, r.too_noisy * 100));
    for (double d : r.detection) absl::StrAppend(&out, absl::StrFormat(" %.1f %% |", d * 100));
    out += "\n";
  }
  return out;
}

}  // namespace perfgate::gate
