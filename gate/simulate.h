// The gate's proof of power (docs/statistics.md, "Simulation"): synthetic
// runs with a known noise and a known slowdown, judged by the very
// EvaluateGate that judges real runs, to measure how often a gate on
// unchanged code fails (false alarms) or cannot decide, and how often a real
// slowdown is caught, in each way the gate is fed.
//
// The noise model is the one a shared CI machine shows: a sample is
//   mu · e^{σz} · e^{τw} · drift(t) · burst
// z per sample and w per process standard normal; σ the within-run noise,
// τ the offset each process draws once (memory placement, clocks, the
// library heuristic it picked); drift(t) = e^{Dσ·sin(2πt/P + φ)} a slow swing
// of the machine's level over the job; burst ≥ 1 one-sided interference: a
// fraction of samples, and a contiguous stretch of a fraction of processes,
// slowed by 20–60 % (a time goes up, its throughput down; never the reverse).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gate/gate.h"
#include "gate/policy.h"

namespace perfgate::gate {

/// How the two sides reach the gate.
enum class SimMode {
  kSingle,   // one run a side (compare a.json b.json, the quickstart's two runs)
  kHistory,  // a candidate run against K runs of the baseline branch; confirmation on:
             // a second candidate run of the cases the first left unconfirmed
  kAb,       // perfgate-agent ab: adaptive rounds, then the confirmation pass
  kAbFixed,  // perfgate-agent ab --rounds 30: no looks, then the confirmation pass
  kFiles,    // compare --baseline F... --candidate F...: N processes a side, unpaired
};
/// "single", "history", "ab", "ab-fixed" or "files".
const char* ToString(SimMode m);
/// Parses a name ToString gives; false for anything else.
bool ParseSimMode(const std::string& text, SimMode* out);

/// The machine the synthetic samples come from (see the file comment).
struct NoiseModel {
  double sigma = 0.01;          // within-run noise, log scale
  double tau = 0.02;            // per-process offset, log scale
  double drift = 0.01;          // amplitude of the slow swing, log scale
  double burst_sample = 0.05;   // share of samples slowed on their own
  double burst_process = 0.10;  // share of processes slowed for a stretch
  double burst_low = 0.20, burst_high = 0.60;  // how much a burst slows
};

/// A source of synthetic processes: one noise model, one seeded stream.
class Machine {
 public:
  /// Same model and seed, same samples.
  Machine(const NoiseModel& model, uint64_t seed);
  /// Starts a job: the drift's cycle lasts `period` (in the caller's unit of
  /// time) and the job starts at a random place on it.
  void StartJob(double period);
  /// One process of `n` samples of a metric whose true level is `mu`,
  /// started at time `t`: its own offset, the drift at `t`, bursts.
  std::vector<double> Process(double mu, unsigned n, double t);
  /// A uniform deviate in [0, 1).
  double Uniform();
  /// A standard normal deviate (Box–Muller over the raw 64-bit stream, so a
  /// seed gives the same numbers with any standard library).
  double Normal();

 private:
  NoiseModel model_;
  std::mt19937_64 rng_;
  double period_ = 1;
  double phase_ = 0;
  bool has_spare_ = false;
  double spare_ = 0;
};

/// What one simulation runs.
struct SimulationOptions {
  std::vector<SimMode> modes = {SimMode::kSingle, SimMode::kHistory, SimMode::kAb,
                                SimMode::kAbFixed, SimMode::kFiles};
  std::vector<double> noise_levels = {0.005, 0.01, 0.02, 0.05};  // σ
  std::vector<double> tau_ratios = {1, 2};                         // τ / σ
  std::vector<double> slowdowns = {0.01, 0.02, 0.03, 0.05, 0.10};
  /// Regressions of these multiples of the tolerance, to count how often
  /// one is called a pass (the pass contract's error rate).
  std::vector<double> false_pass_multiples = {1.5, 2.0};
  std::vector<unsigned> history_runs = {5, 10};  // K, one row each
  unsigned metrics = 20;        // metrics per gate; metric 0 is the slowed one
  bool reciprocal = false;      // metrics come in pairs (time, throughput) sharing samples
  unsigned aa_trials = 500;     // A/A gates per row
  unsigned power_trials = 200;  // gates per slowdown per row
  unsigned run_samples = 10;    // samples of one run or one result file
  unsigned files = 5;           // result files (processes) a side
  // The model's knobs beyond σ and τ, as multiples of σ or shares.
  double drift_ratio = 1;       // drift amplitude / σ
  double burst_sample = 0.05;
  double burst_process = 0.10;
  // A/B as perfgate-agent ab runs it (agent/ab.h, AbOptions).
  unsigned block_samples = 10;  // what --block-time gives a case of 50 ms samples
  double block_wall_s = 0.75;   // one block: 0.5 s of samples plus process start and warm-up
  unsigned min_rounds = 5, max_rounds = 45, fixed_rounds = 30;
  double case_budget_s = 60;
  double drift_period_s = 60;   // A/B: one swing per case budget; runs and files: one over the gate
  bool confirm = true;          // A/B and history: measure suspects again before failing
  /// A/B: one of the node's two CPUs is this much slower (0.25: 25 %, a host
  /// neighbour on one vCPU); 0: both alike.
  double slow_cpu = 0;
  /// A/B: both blocks of a round on one CPU, the other one the next round
  /// (ab's --pin-cpus); false: each block where the scheduler puts it, on
  /// the CPU the previous process did not use three times in four (as
  /// measured on a 2-vCPU VM).
  bool pin_cpus = true;
  uint64_t seed = 0x5eed;
  unsigned threads = 0;         // rows run in parallel; 0: one thread per core
};

/// One line of the table.
struct SimulationRow {
  SimMode mode = SimMode::kAb;
  unsigned history_runs = 0;  // K, history rows only
  double noise = 0, tau = 0;
  double false_alarm = 0;       // share of A/A gates failed (exit 1)
  double first_false_alarm = 0; // A/B and history: share failed (history: unconfirmed) before
                                // the confirmation pass; in history, the share that needs a second run
  double inconclusive = 0;      // share of A/A gates inconclusive (exit 3)
  std::vector<double> detection;  // per slowdown: share of gates judging metric 0 a regression
  std::vector<double> false_pass; // per false_pass_multiples: share of gates judging metric 0 a pass
  double mean_rounds = 0;       // A/B: rounds per case of the first measurement, A/A
};

/// Runs the simulation under `policy` (its tolerance and fdr apply).
/// Deterministic for a given seed; each row draws from its own stream.
std::vector<SimulationRow> Simulate(const SimulationOptions& options, const Policy& policy);

/// The rows as a Markdown table, with the options that produced them.
std::string RenderSimulation(const SimulationOptions& options, const Policy& policy,
                             const std::vector<SimulationRow>& rows);

}  // namespace perfgate::gate
