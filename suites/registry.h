// How a suite declares its cases: name, parameter axes, metrics and a body.
// Registration does no measurement and no device work, so listing cases is
// cheap and safe on any machine.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "suites/state.h"

namespace perfgate::suites {

/// One parameter and the values a case is run at.
struct Axis {
  std::string name;
  std::vector<std::string> values;
};

/// A case as a suite registers it.
struct CaseSpec {
  std::string suite;
  std::string name;
  std::string description;
  std::vector<Axis> axes;
  // Explicit parameter sets (such as GEMM shapes), each combined with every
  // point of the axes; empty means one set with no parameters.
  std::vector<std::map<std::string, std::string>> points;
  // Options: parameters with a default that stays out of the key, so that a
  // series measured before the option existed goes on under its key. Set
  // like an axis (`--set clock=cpu`: kernels/sgemm{clock=cpu,...}); the body
  // reads one with State::ParamOr and the same default.
  std::map<std::string, std::string> options;
  std::vector<MetricKind> metrics;  // what each sample reports, in order
  std::function<void(State&)> body;
  // How many CPUs one process of this point keeps busy, where it runs on
  // the host alone: perfgate-agent ab --pin-cpus auto runs both blocks of a
  // round on that many CPUs. Unset: the point's threads= where it has one
  // and runs on the host (no backend, or backend=host); else none (a GPU
  // case, ranks of a collective), and its blocks run where the scheduler
  // puts them.
  std::function<unsigned(const BenchmarkId&)> host_cpus;
  // Selected only when its suite is named: multi-rank suites need their
  // ranks started together, so a plain `run` leaves them out.
  bool only_when_named = false;
  // Where the metrics depend on the parameters (a ceiling reports GB/s or
  // TFLOP/s by what it bounds): the metrics of one point; unset, `metrics`.
  std::function<std::vector<MetricKind>(const BenchmarkId&)> metrics_for;
  // Why the case would be skipped on this machine, empty when it would run.
  // Must be cheap and do no device work beyond asking for a device count;
  // unset means the case runs everywhere.
  std::function<std::string(const BenchmarkId&)> unavailable;
  // Results drawn from every result of this case in one run (the knee of a
  // rate sweep), in the order they were measured: called once after the
  // run's last case, what it returns handed on like measured results.
  // Unset: nothing is drawn.
  std::function<std::vector<CaseResult>(const std::vector<CaseResult>&)> derive;
};

/// One point of a case's axes: what the runner executes.
struct CaseInstance {
  const CaseSpec* spec = nullptr;
  BenchmarkId id;
  std::vector<MetricKind> metrics;  // what this point reports (see metrics_for)
};

/// Every registered case of every suite.
class Registry {
 public:
  /// Adds a case. Invariants (non-empty names, unique (suite, name), at least
  /// one metric, non-empty axes) are checked and abort: they are bugs.
  void Add(CaseSpec spec);

  /// Suites in registration order, without duplicates.
  std::vector<std::string> Suites() const;

  /// The cases of `suites` (all when empty), expanded over their axes, with
  /// axis values replaced by `overrides` where a case has that axis, and kept
  /// only when their key matches one of `filters` (globs; all when empty; a
  /// glob without '/' matches the key after "suite/").
  /// Each key appears once, in its first position.
  /// `implicit` values apply like overrides where a case has that parameter
  /// and `overrides` does not name it, and are never reported unused (the
  /// agent sets ranks=N from --world-size this way).
  /// INVALID_ARGUMENT for an unknown suite or an override no case uses.
  absl::StatusOr<std::vector<CaseInstance>> Select(
      const std::vector<std::string>& suites, const std::vector<std::string>& filters,
      const std::map<std::string, std::vector<std::string>>& overrides,
      const std::map<std::string, std::vector<std::string>>& implicit = {}) const;

 private:
  std::vector<CaseSpec> cases_;
};

}  // namespace perfgate::suites
