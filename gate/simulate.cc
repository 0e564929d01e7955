#include "gate/simulate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <numbers>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/stats.h"

namespace perfgate::gate {

const char* ToString(SimMode m) {
  switch (m) {
    case SimMode::kSingle:
      return "single";
    case SimMode::kHistory:
      return "history";
    case SimMode::kAb:
      return "ab";
    case SimMode::kAbFixed:
      return "ab-fixed";
    case SimMode::kFiles:
      return "files";
  }
  return "ab";
}

bool ParseSimMode(const std::string& text, SimMode* out) {
  for (SimMode m : {SimMode::kSingle, SimMode::kHistory, SimMode::kAb, SimMode::kAbFixed,
                    SimMode::kFiles}) {
    if (text == ToString(m)) {
      *out = m;
      return true;
    }
  }
  return false;
}

Machine::Machine(const NoiseModel& model, uint64_t seed) : model_(model), rng_(seed) {}

void Machine::StartJob(double period) {
  period_ = period > 0 ? period : 1;
  phase_ = 2 * std::numbers::pi * Uniform();
}

double Machine::Uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

double Machine::Normal() {
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

std::vector<double> Machine::Process(double mu, unsigned n, double t) {
  const double level = std::log(mu) + model_.tau * Normal() +
                       model_.drift * std::sin(2 * std::numbers::pi * t / period_ + phase_);
  auto slowdown = [&] { return 1 + model_.burst_low + (model_.burst_high - model_.burst_low) * Uniform(); };
  // A neighbour's burst covers a stretch of anything from one sample to the
  // whole process: a long one moves the process median, a short one does not.
  unsigned from = n, to = n;
  double stretch = 1;
  if (n > 0 && Uniform() < model_.burst_process) {
    const unsigned length = 1 + static_cast<unsigned>(Uniform() * n);
    from = static_cast<unsigned>(Uniform() * (n - std::min(length, n) + 1));
    to = from + length;
    stretch = slowdown();
  }
  std::vector<double> out(n);
  for (unsigned i = 0; i < n; ++i) {
    double x = std::exp(level + model_.sigma * Normal());
    if (Uniform() < model_.burst_sample) x *= slowdown();
    if (i >= from && i < to) x *= stretch;
    out[i] = x;
  }
  return out;
}

namespace {

// splitmix64: one well-mixed seed per row from the user's seed and the row.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string CaseName(unsigned c) { return absl::StrCat("sim/case{i=", c, "}"); }

// What the gate reads of a metric, without the rest of Summarize (MAD,
// quantiles, the interval of the median): the gate never looks at them, and
// the simulation builds millions of metrics.
MetricData Metric(unsigned c, bool throughput, const std::vector<double>& times) {
  MetricData m;
  m.summary.benchmark = CaseName(c);
  m.summary.metric = throughput ? "throughput" : "time";
  m.summary.unit = throughput ? "1/s" : "ms";
  m.summary.direction = throughput ? Direction::kHigherIsBetter : Direction::kLowerIsBetter;
  // A throughput is the reciprocal of its case's time, sample by sample.
  m.samples = times;
  if (throughput) {
    for (double& x : m.samples) x = 1000.0 / x;
  }
  m.summary.n = static_cast<uint32_t>(m.samples.size());
  m.summary.median = stats::Median(m.samples);
  m.summary.mean = stats::Mean(m.samples);
  if (!m.samples.empty()) {  // the best sample, which history confirmation reads
    const auto [lo, hi] = std::minmax_element(m.samples.begin(), m.samples.end());
    m.summary.min = *lo;
    m.summary.max = *hi;
  }
  m.summary.noise = stats::Noise(m.samples);
  m.summary.status = CaseStatus::kOk;
  return m;
}

// Appends case c's metrics, its samples taken by processes of `sizes`.
void AddCase(RunData& run, unsigned c, const std::vector<double>& times,
             const std::vector<unsigned>& sizes, bool rounds, bool reciprocal) {
  for (bool throughput : {false, true}) {
    if (throughput && !reciprocal) break;
    MetricData m = Metric(c, throughput, times);
    if (sizes.size() > 1) m.block_sizes = sizes;
    m.rounds = rounds;
    run.metrics.push_back(std::move(m));
  }
}

// What one simulated gate ended as.
struct GateOutcome {
  Outcome outcome = Outcome::kPass;
  Outcome first = Outcome::kPass;  // before the confirmation pass (A/B, history)
  bool caught = false;             // metric 0 judged a regression
  bool passed = false;             // metric 0 judged a pass
  unsigned rounds = 0;             // A/B: first measurement, all cases
};

// The verdict of metric 0, the one a slowdown is planted in.
Verdict Planted(const GateResult& r) {
  for (const MetricVerdict& v : r.verdicts) {
    if (v.benchmark == CaseName(0) && v.metric == "time") return v.verdict;
  }
  return Verdict::kMissing;
}

void Judge(const GateResult& r, GateOutcome* out) {
  out->outcome = r.outcome;
  out->caught = Planted(r) == Verdict::kRegression;
  out->passed = Planted(r) == Verdict::kPass;
}

// Everything one row's gates share.
struct Row {
  const SimulationOptions& o;
  const Policy& policy;
  SimMode mode;
  unsigned history_runs;
  Machine machine;
  unsigned cases;
  unsigned last_cpu = 0;  // A/B: the CPU the last block ran on
};

// How often a 2-vCPU VM's scheduler put a process on the CPU its
// predecessor did not use: 3 in 4 of 64 successive A/B blocks.
constexpr double kCpuAlternation = 0.75;

// How much slower than the fast CPU the block of round `round` runs: both
// blocks of a round on one CPU when pinned, else where the scheduler
// alternates them.
double CpuFactor(Row& row, unsigned round) {
  if (row.o.slow_cpu <= 0) return 1;
  unsigned cpu = round % 2;
  if (!row.o.pin_cpus) {
    if (row.machine.Uniform() < kCpuAlternation) row.last_cpu ^= 1;
    cpu = row.last_cpu;
  }
  return cpu == 1 ? 1 + row.o.slow_cpu : 1;
}

// single, history and files: whole runs, each case of a run measured by one
// process of `run_samples` samples. The baseline's processes run first, one
// after the other, then the candidate's (as one runs five files of each);
// the drift makes one swing over them. History, confirmation on: every case
// the gate calls unconfirmed is measured once more, a second candidate run
// after the first (same machine, same bursts), and the gate is taken again
// over both runs, as `perfgate gate` does over every run of the commit.
GateOutcome RunsGate(Row& row, double slowdown) {
  const SimulationOptions& o = row.o;
  const unsigned per_side = row.mode == SimMode::kFiles ? o.files : 1;
  const unsigned base_runs = row.mode == SimMode::kHistory ? row.history_runs : 1;
  const unsigned slots = base_runs * per_side + per_side;
  row.machine.StartJob(slots);
  GateInput in;
  in.mode = row.mode == SimMode::kHistory ? Mode::kHistory : Mode::kAb;
  in.sku = "cpu-simulated";
  in.baselines.resize(base_runs);
  for (unsigned k = 0; k < base_runs; ++k) in.baselines[k].run_id = absl::StrCat("baseline-", k);
  in.candidate.run_id = "candidate";
  const std::vector<unsigned> sizes(per_side, o.run_samples);
  const std::function<double(unsigned)> mu = [&](unsigned c) { return c == 0 ? 1.0 + slowdown : 1.0; };
  for (unsigned c = 0; c < row.cases; ++c) {
    unsigned slot = 0;
    auto side = [&](double level) {
      std::vector<double> times;
      for (unsigned p = 0; p < per_side; ++p) {
        const std::vector<double> s = row.machine.Process(level, o.run_samples, slot++);
        times.insert(times.end(), s.begin(), s.end());
      }
      return times;
    };
    for (unsigned k = 0; k < base_runs; ++k) {
      AddCase(in.baselines[k], c, side(1.0), sizes, false, o.reciprocal);
    }
    AddCase(in.candidate, c, side(mu(c)), sizes, false, o.reciprocal);
  }
  GateOutcome out;
  GateResult r = EvaluateGate(in, row.policy);
  out.first = r.outcome;
  std::set<std::string> suspects;
  for (const MetricVerdict& v : r.verdicts) {
    if (v.gating && v.verdict == Verdict::kUnconfirmed) suspects.insert(v.benchmark);
  }
  if (!suspects.empty()) out.first = Outcome::kRegression;  // what one run alone would have said
  if (o.confirm && !suspects.empty()) {
    RunData again;
    again.run_id = "candidate-again";
    for (unsigned c = 0; c < row.cases; ++c) {
      if (suspects.count(CaseName(c)) == 0) continue;
      AddCase(again, c, row.machine.Process(mu(c), o.run_samples, slots), {o.run_samples}, false,
              o.reciprocal);
    }
    in.candidate_repeats.push_back(std::move(again));
    r = EvaluateGate(in, row.policy);
  }
  Judge(r, &out);
  return out;
}

// One case measured on both sides in rounds, as agent::MeasurePair does.
struct Pair {
  std::vector<double> base, cand;
  unsigned rounds = 0;
  double seconds = 0;  // pilot included
};

GateInput AbInput(const std::vector<Pair>& pairs, unsigned first_case, bool reciprocal) {
  GateInput in;
  in.mode = Mode::kAb;
  in.sku = "cpu-simulated";
  RunData base;
  base.run_id = "baseline";
  in.candidate.run_id = "candidate";
  for (size_t i = 0; i < pairs.size(); ++i) {
    const unsigned c = first_case + static_cast<unsigned>(i);
    const Pair& p = pairs[i];
    const std::vector<unsigned> sizes(p.rounds, static_cast<unsigned>(p.base.size() / p.rounds));
    AddCase(base, c, p.base, sizes, true, reciprocal);
    AddCase(in.candidate, c, p.cand, sizes, true, reciprocal);
  }
  in.baselines.push_back(std::move(base));
  return in;
}

// agent::MeasurePair over synthetic processes: a pilot block (not kept),
// then rounds whose order is a coin per round (agent::BlockOrder), the
// drift advancing with the clock; from
// min_rounds on it stops when agent::CaseDecided would (the case judged
// alone at fdr / cases / looks, no metric gate::Undecided), or when another round
// would overrun the budget. Fixed rounds: exactly that many, no looks.
// Given a pair measured before (`pair`), it goes on from its rounds, as
// agent::MeasureRounds resumes an undecided case: no pilot, the same looks.
Pair MeasureCase(Row& row, unsigned c, double mu, double budget_s, bool fixed, double* clock, Pair pair = {}) {
  const SimulationOptions& o = row.o;
  const Policy strict = LookPolicy(row.policy, row.cases, StopRuleLooks(o.min_rounds, o.max_rounds));
  const double start = *clock;
  const unsigned resumed = pair.rounds;
  if (resumed == 0) *clock += o.block_wall_s;  // the pilot block
  const unsigned max_rounds = fixed ? o.fixed_rounds : o.max_rounds;
  const double rounds_start = *clock;  // the budget counts rounds, not the pilot
  for (unsigned round = resumed; round < max_rounds; ++round) {
    const bool base_first = row.machine.Uniform() < 0.5;
    for (int b = 0; b < 2; ++b) {
      const bool is_base = (b == 0) == base_first;
      const double level = (is_base ? 1.0 : mu) * CpuFactor(row, round);
      const std::vector<double> s = row.machine.Process(level, o.block_samples, *clock);
      *clock += o.block_wall_s;
      std::vector<double>& side = is_base ? pair.base : pair.cand;
      side.insert(side.end(), s.begin(), s.end());
    }
    pair.rounds = round + 1;
    if (fixed) continue;
    const unsigned here = pair.rounds - resumed;
    // As agent::NextRound: min_rounds must fit the budget at the first round's pace.
    if (pair.rounds == 1 && budget_s > 0 && o.min_rounds * (*clock - rounds_start) * 1.2 > budget_s) break;
    if (StopRuleLooksAt(pair.rounds, o.min_rounds, o.max_rounds)) {
      const GateResult r = EvaluateGate(AbInput({pair}, c, o.reciprocal), strict);
      if (std::none_of(r.verdicts.begin(), r.verdicts.end(), Undecided)) break;
    }
    const double spent = *clock - rounds_start;
    if (budget_s > 0 && spent + spent / here > budget_s) break;
  }
  pair.seconds += *clock - start;
  return pair;
}

// The case's gating verdicts (its failing ones only, with `only_failing`)
// as the agent leaves them when a case could not get the rounds a look at
// its interval needs (over its budget; a confirmation cut short): undecided.
void Undecide(GateResult& gate, const std::set<std::string>& cases, bool only_failing, const Policy& policy) {
  if (cases.empty()) return;
  for (MetricVerdict& v : gate.verdicts) {
    if (cases.count(v.benchmark) == 0 || !v.gating || (only_failing && !Fails(v.verdict))) continue;
    v.verdict = Verdict::kUndecided;
  }
  SumUp(gate, "cpu-simulated", policy);
}

// Measures on, from its rounds and under the same looks, each case of
// `which` that `gate` left undecided (gate::Undecided) short of its
// max_rounds, with the seconds `budget` gives its pair (none: 0). Returns
// whether any did.
bool MeasureOnUndecided(Row& row, const GateResult& gate, const std::set<std::string>& which,
                        const std::function<double(const Pair&)>& budget, const std::function<double(unsigned)>& mu,
                        std::vector<Pair>* pairs, double* clock) {
  std::set<std::string> undecided;
  for (const MetricVerdict& v : gate.verdicts) {
    if (Undecided(v)) undecided.insert(v.benchmark);
  }
  bool any = false;
  for (unsigned c = 0; c < row.cases; ++c) {
    Pair& p = (*pairs)[c];
    if (which.count(CaseName(c)) == 0 || undecided.count(CaseName(c)) == 0 || p.rounds >= row.o.max_rounds) continue;
    const double seconds = budget(p);
    if (seconds <= 0) continue;
    p = MeasureCase(row, c, mu(c), seconds, false, clock, std::move(p));
    any = true;
  }
  return any;
}

// As agent::MeasureAndDecide: a case whose first measurement ended
// undecided for want of budget, none of its gating metrics a suspect,
// measures on with what its case budget has left (gate::ExtensionBudget).
bool ExtendUndecided(Row& row, const GateResult& gate, const std::set<std::string>& short_cases,
                     const std::function<double(unsigned)>& mu, std::vector<Pair>* pairs, double* clock) {
  std::set<std::string> suspect, which;
  for (const MetricVerdict& v : gate.verdicts) {
    if (v.gating && Fails(v.verdict)) suspect.insert(v.benchmark);
  }
  for (unsigned c = 0; c < row.cases; ++c) {
    if (suspect.count(CaseName(c)) == 0 && short_cases.count(CaseName(c)) == 0) which.insert(CaseName(c));
  }
  const SimulationOptions& o = row.o;
  return MeasureOnUndecided(
      row, gate, which,
      [&](const Pair& p) { return ExtensionBudget(o.case_budget_s, p.seconds, p.rounds, o.min_rounds, o.max_rounds); },
      mu, pairs, clock);
}

// agent::RunAb over synthetic processes: every case measured, the gate taken
// over all of them, and every case with a gating metric judged a regression
// (or below its floor) measured again and judged on that second measurement
// alone, which may take as many rounds as the first did (ConfirmationBudget)
// and, still undecided at that budget, measures on with as much time again
// (ConfirmationExtensionBudget); a measurement too short for a look leaves
// its case undecided.
GateOutcome AbGate(Row& row, double slowdown) {
  const SimulationOptions& o = row.o;
  const bool fixed = row.mode == SimMode::kAbFixed;
  const unsigned look = fixed ? o.fixed_rounds : o.min_rounds;
  row.machine.StartJob(o.drift_period_s);
  double clock = 0;
  const double first_budget = o.confirm ? o.case_budget_s * kFirstMeasurementShare : o.case_budget_s;
  const std::function<double(unsigned)> mu = [&](unsigned c) { return c == 0 ? 1.0 + slowdown : 1.0; };
  GateOutcome out;
  std::vector<Pair> pairs;
  std::set<std::string> short_cases;
  for (unsigned c = 0; c < row.cases; ++c) {
    pairs.push_back(MeasureCase(row, c, mu(c), first_budget, fixed, &clock));
    out.rounds += pairs.back().rounds;
    if (pairs.back().rounds < look) short_cases.insert(CaseName(c));
  }
  GateResult gate = EvaluateGate(AbInput(pairs, 0, o.reciprocal), row.policy);
  Undecide(gate, short_cases, false, row.policy);
  if (o.confirm && !fixed && ExtendUndecided(row, gate, short_cases, mu, &pairs, &clock)) {
    gate = EvaluateGate(AbInput(pairs, 0, o.reciprocal), row.policy);
    Undecide(gate, short_cases, false, row.policy);
  }
  out.first = gate.outcome;
  std::set<std::string> suspects, cut;
  for (const MetricVerdict& v : gate.verdicts) {
    if (o.confirm && v.gating && (v.verdict == Verdict::kRegression || v.verdict == Verdict::kBelowFloor)) {
      suspects.insert(v.benchmark);
    }
  }
  for (unsigned c = 0; c < row.cases; ++c) {
    if (suspects.count(CaseName(c)) == 0) continue;
    const Pair& first = pairs[c];
    const double budget = ConfirmationBudget(o.case_budget_s, first.seconds, first.rounds, o.min_rounds);
    Pair again = MeasureCase(row, c, mu(c), budget, fixed, &clock);
    if (again.rounds < look) {
      cut.insert(CaseName(c));
    } else {
      pairs[c] = std::move(again);
    }
  }
  if (!suspects.empty()) {
    gate = EvaluateGate(AbInput(pairs, 0, o.reciprocal), row.policy);
    // A confirmation undecided at its budget measures on with as much time
    // again (gate::ConfirmationExtensionBudget), as the agent does.
    std::set<std::string> confirmed;
    for (const std::string& name : suspects) {
      if (cut.count(name) == 0) confirmed.insert(name);
    }
    const auto again = [&](const Pair& p) {
      return ConfirmationExtensionBudget(p.seconds, p.rounds, o.min_rounds, o.max_rounds);
    };
    if (!fixed && MeasureOnUndecided(row, gate, confirmed, again, mu, &pairs, &clock)) {
      gate = EvaluateGate(AbInput(pairs, 0, o.reciprocal), row.policy);
    }
    Undecide(gate, short_cases, false, row.policy);
    Undecide(gate, cut, true, row.policy);
  }
  Judge(gate, &out);
  return out;
}

GateOutcome OneGate(Row& row, double slowdown) {
  if (row.mode == SimMode::kAb || row.mode == SimMode::kAbFixed) return AbGate(row, slowdown);
  return RunsGate(row, slowdown);
}

SimulationRow RunRow(const SimulationOptions& o, const Policy& policy, SimMode mode, unsigned k,
                     double sigma, double ratio) {
  NoiseModel model;
  model.sigma = sigma;
  model.tau = ratio * sigma;
  model.drift = o.drift_ratio * sigma;
  model.burst_sample = o.burst_sample;
  model.burst_process = o.burst_process;
  // Each row its own stream, keyed by what the row is: adding a noise level
  // or a mode leaves the other rows as they were.
  uint64_t key = Mix(o.seed);
  for (uint64_t part : {static_cast<uint64_t>(mode), static_cast<uint64_t>(k),
                        static_cast<uint64_t>(std::llround(sigma * 1e6)),
                        static_cast<uint64_t>(std::llround(ratio * 1e3))}) {
    key = Mix(key ^ part);
  }
  const unsigned cases = o.reciprocal ? (o.metrics + 1) / 2 : o.metrics;
  Row row{o, policy, mode, k, Machine(model, key), std::max(cases, 1u)};
  SimulationRow r;
  r.mode = mode;
  r.history_runs = k;
  r.noise = sigma;
  r.tau = ratio;
  unsigned failed = 0, first_failed = 0, inconclusive = 0;
  uint64_t rounds = 0;
  for (unsigned t = 0; t < o.aa_trials; ++t) {
    const GateOutcome g = OneGate(row, 0.0);
    failed += g.outcome == Outcome::kRegression;
    first_failed += g.first == Outcome::kRegression;
    inconclusive += g.outcome == Outcome::kInconclusive;
    rounds += g.rounds;
  }
  const double aa = std::max(o.aa_trials, 1u);
  r.false_alarm = failed / aa;
  r.first_false_alarm = first_failed / aa;
  r.inconclusive = inconclusive / aa;
  r.mean_rounds = static_cast<double>(rounds) / (aa * row.cases);
  for (double slowdown : o.slowdowns) {
    unsigned caught = 0;
    for (unsigned t = 0; t < o.power_trials; ++t) caught += OneGate(row, slowdown).caught;
    r.detection.push_back(caught / static_cast<double>(std::max(o.power_trials, 1u)));
  }
  // The pass contract's own error: a regression beyond the tolerance called a pass.
  const double tol = policy.Resolve("cpu-simulated", CaseName(0), "time",
                                    mode == SimMode::kHistory ? Mode::kHistory : Mode::kAb).tolerance;
  for (double times : o.false_pass_multiples) {
    unsigned passed = 0;
    for (unsigned t = 0; t < o.power_trials; ++t) passed += OneGate(row, times * tol).passed;
    r.false_pass.push_back(passed / static_cast<double>(std::max(o.power_trials, 1u)));
  }
  return r;
}

std::string RowName(const SimulationRow& r, const SimulationOptions& o) {
  switch (r.mode) {
    case SimMode::kHistory:
      return absl::StrCat("history K=", r.history_runs);
    case SimMode::kFiles:
      return absl::StrCat("files ", o.files, "+", o.files);
    case SimMode::kAbFixed:
      return absl::StrCat("ab fixed ", o.fixed_rounds);
    case SimMode::kAb:
      return "ab adaptive";
    case SimMode::kSingle:
      return "single 1+1";
  }
  return ToString(r.mode);
}

}  // namespace

std::vector<SimulationRow> Simulate(const SimulationOptions& options, const Policy& policy) {
  struct Spec {
    SimMode mode;
    unsigned k;
    double sigma, ratio;
  };
  std::vector<Spec> specs;
  for (SimMode mode : options.modes) {
    std::vector<unsigned> ks = {0};
    if (mode == SimMode::kHistory) ks = options.history_runs;
    for (unsigned k : ks) {
      for (double sigma : options.noise_levels) {
        for (double ratio : options.tau_ratios) specs.push_back({mode, k, sigma, ratio});
      }
    }
  }
  // Rows draw from their own streams, so they can run on any thread in any
  // order and still give the same table.
  std::vector<SimulationRow> rows(specs.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < specs.size(); i = next++) {
      rows[i] = RunRow(options, policy, specs[i].mode, specs[i].k, specs[i].sigma, specs[i].ratio);
    }
  };
  const unsigned threads =
      std::max(1u, options.threads > 0 ? options.threads : std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(threads, specs.size()); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return rows;
}

std::string RenderSimulation(const SimulationOptions& o, const Policy& policy,
                             const std::vector<SimulationRow>& rows) {
  std::string out = absl::StrFormat(
      "Gates of %u metrics%s; tolerance %.1f %%, Benjamini–Hochberg q %.1f %%. Noise: within-run "
      "σ, per-process offset τ, drift ±%g σ, %g %% of samples and %g %% of processes slowed "
      "20–60 %%. Runs and files: %u samples a process; files: %u a side. A/B: blocks of %u "
      "samples, %.2f s each, rounds %u–%u within %g s a case%s. %u A/A gates and %u gates per "
      "slowdown a row; seed %#x.\n\n",
      o.metrics, o.reciprocal ? " (time and throughput of each case, sharing samples)" : "",
      policy.tolerance * 100, policy.fdr * 100, o.drift_ratio, o.burst_sample * 100,
      o.burst_process * 100, o.run_samples, o.files, o.block_samples, o.block_wall_s,
      o.min_rounds, o.max_rounds, o.case_budget_s,
      absl::StrCat(o.confirm ? ", confirmation on (A/B and history)" : "",
                   o.slow_cpu > 0 ? absl::StrFormat("; one of two CPUs %g %% slower, %s", o.slow_cpu * 100,
                                                    o.pin_cpus ? "both blocks of a round on one CPU"
                                                               : "blocks where the scheduler alternates them")
                                  : ""),
      o.aa_trials, o.power_trials, static_cast<unsigned long long>(o.seed));
  out += "| mode | σ | τ | A/A failed | A/A failed before confirmation | A/A inconclusive |";
  for (double s : o.slowdowns) absl::StrAppend(&out, absl::StrFormat(" caught %g %% |", s * 100));
  for (double m : o.false_pass_multiples) absl::StrAppend(&out, absl::StrFormat(" %g× tolerance passed |", m));
  out += " rounds a case |\n|---|---:|---:|---:|---:|---:|";
  for (size_t i = 0; i <= o.slowdowns.size() + o.false_pass_multiples.size(); ++i) out += "---:|";
  out += "\n";
  for (const SimulationRow& r : rows) {
    const bool ab = r.mode == SimMode::kAb || r.mode == SimMode::kAbFixed;
    const bool confirmed = ab || r.mode == SimMode::kHistory;
    absl::StrAppend(&out, absl::StrFormat("| %s | %g %% | %gσ | %.1f %% | %s | %.1f %% |",
                                          RowName(r, o), r.noise * 100, r.tau, r.false_alarm * 100,
                                          confirmed ? absl::StrFormat("%.1f %%", r.first_false_alarm * 100)
                                             : std::string("–"),
                                          r.inconclusive * 100));
    for (double d : r.detection) absl::StrAppend(&out, absl::StrFormat(" %.1f %% |", d * 100));
    for (double d : r.false_pass) absl::StrAppend(&out, absl::StrFormat(" %.1f %% |", d * 100));
    absl::StrAppend(&out, ab ? absl::StrFormat(" %.1f |", r.mean_rounds) : std::string(" – |"));
    out += "\n";
  }
  return out;
}

}  // namespace perfgate::gate
