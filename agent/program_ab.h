// A/B of any benchmark program (docs/existing-benchmarks.md): the baseline
// and the candidate are commands, a Google Benchmark binary, a hyperfine
// or pytest-benchmark invocation, anything that writes a result file
// perfgate reads (formats/result_file.h). Each block runs one side's
// command once, as one process, and every case in its result file is one
// block of that side; rounds interleave the sides (a coin for each round's order) and stop by
// the rule of perfgate-agent's own A/B (ab.h), so a team's benchmarks are
// gated with the same statistics as perfgate's suites.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/ab.h"
#include "common/placeholders.h"
#include "formats/result_file.h"
#include "gate/policy.h"

namespace perfgate::agent {

// A side's command names {out} (common/placeholders.h) for the result file
// the block writes; without it the result is read from the command's
// stdout. {samples} is the repetitions each case of a block should make
// (--benchmark_repetitions={samples}, hyperfine --runs {samples}); without
// it the program decides, and blocks are not sized.

/// One side of a program A/B.
class Program {
 public:
  virtual ~Program() = default;
  /// Runs the program once, as one process, asking for `samples`
  /// repetitions of each case where it takes them, and returns the cases
  /// of its result file. An error says what became of the command.
  virtual absl::StatusOr<ResultSet> Run(unsigned samples) = 0;
  /// Whether Run's `samples` reaches the program.
  virtual bool TakesSamples() const = 0;
};

/// A program run from an argument vector (never through a shell) holding
/// the placeholders above, anywhere inside its words
/// (--benchmark_out={out}). {out} is a fresh file in `work_dir` for each
/// block, removed once read. A block is killed after `timeout_s` seconds.
class CommandProgram final : public Program {
 public:
  CommandProgram(std::vector<std::string> argv, double timeout_s, std::string work_dir);
  absl::StatusOr<ResultSet> Run(unsigned samples) override;
  bool TakesSamples() const override;

 private:
  std::vector<std::string> argv_;
  double timeout_s_;
  std::string work_dir_;
  unsigned blocks_ = 0;
};

/// The command of a side with its {out} and {samples} replaced.
std::vector<std::string> ExpandSideCommand(const std::vector<std::string>& argv, const std::string& out,
                                           unsigned samples);

/// Measures every case the baseline's pilot block reports, on both
/// programs interleaved, and gates the candidate in A/B mode. The pilot
/// (not kept) finds the cases and, where the programs take {samples},
/// sizes blocks so that each case's samples last about
/// options.block_seconds. Rounds end when every case's gating metrics are
/// decided, at options.max_rounds, or when another round would overrun the
/// budget: options.job_budget_s when set, else options.case_budget_s per
/// case (two thirds for the first measurement when confirming). A case a
/// block lacks or reports as failed or skipped is failed (or skipped) with
/// the side's reason; a program that exits non-zero, times out or writes
/// no readable file ends measuring with AbResult::error naming the side,
/// its command and what became of it, the blocks before kept.
AbResult RunProgramAb(Program& baseline, Program& candidate, const gate::Policy& policy, const std::string& sku,
                      const AbOptions& options, std::ostream& log);

}  // namespace perfgate::agent
