// The gate's proof of power (docs/statistics.md): synthetic runs with a known
// noise and a known slowdown, judged by the very EvaluateGate that judges
// real runs, to measure how often an A/A gate fails (false alarms) and how
// often a real slowdown is caught (detection), in both modes.
//
// The noise model, stated once: a sample is mu * exp(sigma * z) * exp(tau * w)
// with z, w standard normal; sigma is the noise level (the coefficient of
// variation of one sample), w is drawn once per process (a run, or one block
// of an A/B round) and tau = sigma / 2: each process lands a little off,
// which is what makes run-to-run noise larger than within-run noise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gate/gate.h"
#include "gate/policy.h"

namespace perfgate::gate {

/// What one simulation runs.
struct SimulationOptions {
  std::vector<double> noise_levels = {0.005, 0.01, 0.02, 0.05};
  std::vector<double> slowdowns = {0.01, 0.02, 0.03, 0.05, 0.10};
  unsigned metrics = 100;       // metrics per gate (the family of one gate)
  unsigned aa_trials = 1000;    // A/A gates per noise level and mode
  unsigned power_trials = 200;  // gates per slowdown, noise level and mode
  // A/B defaults: rounds of interleaved blocks, samples per block.
  unsigned ab_rounds = 20;
  unsigned ab_block_samples = 5;
  // History defaults: K baseline runs, samples per run.
  unsigned history_runs = 5;
  unsigned run_samples = 10;
  double process_noise_ratio = 0.5;  // tau / sigma
  unsigned bootstrap_resamples = 200;
  uint64_t seed = 0x5eed;
};

/// One line of the table.
struct SimulationRow {
  Mode mode = Mode::kAb;
  double noise = 0;
  double false_alarm = 0;            // fraction of A/A gates that failed
  std::vector<double> detection;     // per slowdown: fraction of gates failing on it
  double too_noisy = 0;              // fraction of A/A metrics judged too noisy
};

/// Runs the simulation under `policy` (its tolerance, fdr and modes apply).
/// Deterministic for a given seed.
std::vector<SimulationRow> Simulate(const SimulationOptions& options, const Policy& policy);

/// The rows as a Markdown table, with the options that produced them.
std::string RenderSimulation(const SimulationOptions& options, const Policy& policy,
                             const std::vector<SimulationRow>& rows);

}  // namespace perfgate::gate
