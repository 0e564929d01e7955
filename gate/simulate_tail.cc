// Heavy-tailed serving runs through the gate (simulate_tail.h).
#include "gate/simulate_tail.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/stats.h"
#include "gate/gate.h"
#include "gate/simulate.h"

namespace perfgate::gate {
namespace {

constexpr char kCase[] = "sim/serve{rate=1}";

// One process: its requests' latencies (ms), the tail scaled by 1 + change;
// returns its p50 and p99.
std::pair<double, double> Process(Machine& m, const TailModel& t, unsigned requests, double change) {
  double level = std::exp(t.tau * m.Normal());
  if (m.Uniform() < t.burst_process) level *= 1 + t.burst_low + (t.burst_high - t.burst_low) * m.Uniform();
  std::vector<double> v(requests);
  for (double& x : v) {
    if (m.Uniform() < t.tail_share) {
      x = level * t.tail_start * std::pow(1.0 - m.Uniform(), -1.0 / t.tail_alpha) * (1 + change);
    } else {
      x = level * std::exp(t.sigma * m.Normal());
    }
  }
  return {stats::Quantile(v, 0.5), stats::Quantile(v, 0.99)};
}

MetricData Metric(const std::string& name, const std::vector<double>& per_process) {
  MetricData m;
  m.summary.benchmark = kCase;
  m.summary.metric = name;
  m.summary.unit = "ms";
  m.summary.direction = Direction::kLowerIsBetter;
  m.samples = per_process;
  m.summary.n = static_cast<uint32_t>(per_process.size());
  m.summary.median = stats::Median(per_process);
  m.summary.mean = stats::Mean(per_process);
  m.summary.min = *std::min_element(per_process.begin(), per_process.end());
  m.summary.max = *std::max_element(per_process.begin(), per_process.end());
  m.summary.noise = stats::Noise(per_process);
  m.summary.status = CaseStatus::kOk;
  m.block_sizes.assign(per_process.size(), 1);  // one value per process
  m.rounds = true;
  return m;
}

struct Verdicts {
  Outcome outcome = Outcome::kPass;
  bool p99 = false, p50 = false;  // judged a regression
};

// One A/B gate: `rounds` rounds, one process a side each.
Verdicts Gate(Machine& m, const TailModel& t, unsigned requests, unsigned rounds, double change,
              const Policy& policy) {
  std::vector<double> b50, b99, c50, c99;
  for (unsigned r = 0; r < rounds; ++r) {
    const auto [bm, bp] = Process(m, t, requests, 0);
    const auto [cm, cp] = Process(m, t, requests, change);
    b50.push_back(bm), b99.push_back(bp), c50.push_back(cm), c99.push_back(cp);
  }
  GateInput in;
  in.mode = Mode::kAb;
  in.sku = "cpu-simulated";
  RunData base;
  base.run_id = "baseline";
  base.metrics = {Metric("ttft_p50", b50), Metric("ttft_p99", b99)};
  in.baselines.push_back(std::move(base));
  in.candidate.run_id = "candidate";
  in.candidate.metrics = {Metric("ttft_p50", c50), Metric("ttft_p99", c99)};
  const GateResult g = EvaluateGate(in, policy);
  Verdicts out;
  out.outcome = g.outcome;
  for (const MetricVerdict& v : g.verdicts) {
    const bool reg = v.verdict == Verdict::kRegression;
    (v.metric == "ttft_p99" ? out.p99 : out.p50) = reg;
  }
  return out;
}

}  // namespace

std::vector<TailSimulationRow> SimulateTail(const TailSimulationOptions& o, const Policy& policy) {
  std::vector<TailSimulationRow> rows;
  uint64_t stream = 0;
  for (unsigned requests : o.requests) {
    for (unsigned rounds : o.rounds) {
      Machine m(NoiseModel{}, o.seed + 0x9e3779b97f4a7c15ull * ++stream);
      TailSimulationRow row;
      row.requests = requests;
      row.rounds = rounds;
      for (unsigned i = 0; i < o.aa_trials; ++i) {
        const Verdicts v = Gate(m, o.model, requests, rounds, 0, policy);
        row.false_alarm += v.outcome == Outcome::kRegression;
        row.inconclusive += v.outcome == Outcome::kInconclusive;
      }
      row.false_alarm /= std::max(1u, o.aa_trials);
      row.inconclusive /= std::max(1u, o.aa_trials);
      for (double change : o.changes) {
        double caught = 0, median = 0;
        for (unsigned i = 0; i < o.power_trials; ++i) {
          const Verdicts v = Gate(m, o.model, requests, rounds, change, policy);
          caught += v.p99;
          median += v.p50;
        }
        row.detection.push_back(caught / std::max(1u, o.power_trials));
        row.median_flagged.push_back(median / std::max(1u, o.power_trials));
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string RenderTailSimulation(const TailSimulationOptions& o, const Policy& policy,
                                 const std::vector<TailSimulationRow>& rows) {
  const TailModel& t = o.model;
  std::string out = absl::StrFormat(
      "A/B gates of ttft_p50 and ttft_p99, each process's percentile one value, rounds paired; tolerance "
      "%.1f %%, Benjamini–Hochberg q %.1f %%. Requests: log-normal body σ %g, %g %% in a Pareto tail "
      "(α %g) from %g × the median; per-process offset τ %g, %g %% of processes slowed 20–60 %%. A change "
      "scales the tail alone. %u A/A gates and %u gates per change a row; seed %#x.\n\n",
      policy.tolerance * 100, policy.fdr * 100, t.sigma, t.tail_share * 100, t.tail_alpha, t.tail_start, t.tau,
      t.burst_process * 100, o.aa_trials, o.power_trials, static_cast<unsigned long long>(o.seed));
  out += "| requests a process | rounds | A/A failed | A/A inconclusive |";
  for (double c : o.changes) absl::StrAppend(&out, absl::StrFormat(" p99 +%g %% caught (p50 flagged) |", c * 100));
  out += "\n|---:|---:|---:|---:|";
  for (size_t i = 0; i < o.changes.size(); ++i) out += "---:|";
  out += "\n";
  for (const TailSimulationRow& r : rows) {
    absl::StrAppend(&out, absl::StrFormat("| %u | %u | %.1f %% | %.1f %% |", r.requests, r.rounds,
                                          r.false_alarm * 100, r.inconclusive * 100));
    for (size_t i = 0; i < r.detection.size(); ++i) {
      absl::StrAppend(&out, absl::StrFormat(" %.1f %% (%.1f %%) |", r.detection[i] * 100, r.median_flagged[i] * 100));
    }
    out += "\n";
  }
  return out;
}

}  // namespace perfgate::gate
