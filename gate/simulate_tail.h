// The tail-latency side of the gate's proof of power (docs/statistics.md,
// "Tail latencies"): synthetic serving runs whose request latencies are
// heavy-tailed, each process reduced to its own p50 and p99 (the process is
// the unit), the two sides paired by round as perfgate-agent ab pairs them,
// and judged by the very EvaluateGate that judges real runs. It measures how
// often an unchanged build fails (false alarms) and how often a change of
// p99 alone — the median untouched — is caught.
//
// A request's latency is  e^{τw} · burst · (e^{σz} with probability 1 - s,
// else c · U^{-1/α})  : a log-normal body around 1, and a share s of
// requests in a Pareto tail from c times the median (α < 2: infinite
// variance, as queueing behind a long prefill gives); w per process, z per
// request standard normal; burst ≥ 1 a one-sided slowdown of a share of
// processes. A change of p99 by Δ multiplies the tail requests alone by
// 1 + Δ: p99 lies in the tail (s > 1 %), the median in the body.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gate/policy.h"

namespace perfgate::gate {

/// The synthetic server (see the file comment).
struct TailModel {
  double sigma = 0.3;           // σ of the body, log scale
  double tail_share = 0.03;     // s
  double tail_alpha = 1.5;      // α
  double tail_start = 3.0;      // c
  double tau = 0.05;            // per-process offset, log scale
  double burst_process = 0.10;  // share of processes slowed as a whole
  double burst_low = 0.20, burst_high = 0.60;
};

/// What one tail simulation runs.
struct TailSimulationOptions {
  TailModel model;
  std::vector<unsigned> requests = {300, 1000};  // per process, one row each
  std::vector<unsigned> rounds = {5, 10, 20};    // A/B rounds, one row each
  std::vector<double> changes = {0.1, 0.2, 0.5, 1.0};  // relative changes of p99
  unsigned aa_trials = 400;
  unsigned power_trials = 200;
  uint64_t seed = 0x5eed;
};

/// One line of the table.
struct TailSimulationRow {
  unsigned requests = 0, rounds = 0;
  double false_alarm = 0;           // share of A/A gates failed
  double inconclusive = 0;          // share of A/A gates inconclusive
  std::vector<double> detection;    // per change: share judging p99 a regression
  std::vector<double> median_flagged;  // per change: share wrongly judging p50 a regression
};

/// Runs every row under `policy`; deterministic for a given seed.
std::vector<TailSimulationRow> SimulateTail(const TailSimulationOptions& options, const Policy& policy);

/// The rows as a Markdown table, with the model that produced them.
std::string RenderTailSimulation(const TailSimulationOptions& options, const Policy& policy,
                                 const std::vector<TailSimulationRow>& rows);

}  // namespace perfgate::gate
