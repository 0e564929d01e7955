// `perfgate compare A B`: the gate's A/B judgement of two result files without
// a coordinator, or of two stored runs through one. A is the baseline, B the
// candidate. The file side is pure (load, build the gate's input, note how the
// two environments differ) so that it is tested without a server; a
// calibration file, when given and fit for the candidate, is added to the
// input after it is built.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/coordinator_client.h"
#include "formats/result_file.h"
#include "gate/gate.h"
#include "report/gate_report.h"

namespace perfgate::cli {

/// What `perfgate compare` needs. baseline and candidate are both result
/// files or both run ids (UUIDs) stored in the coordinator. Several files a
/// side (one process each, e.g. five runs of a Google Benchmark binary) go
/// in the *_files lists, which then replace baseline and candidate.
struct CompareOptions {
  std::string baseline;
  std::string candidate;
  std::vector<std::string> baseline_files;
  std::vector<std::string> candidate_files;
  std::string policy_file;  // empty: the default policy
  std::string sku;          // overrides the candidate file's SKU
  /// A calibration file (perfgate-agent calibrate --output) of the node the
  /// files were measured on: used for the comparison of result files when
  /// its SKU is the candidate's, its environment the candidate file's (when
  /// the file names one) and it is not older than the policy allows.
  std::string calibration_file;
  std::string format;  // --format: the result files' format (ResultFormatNames); detected when empty
  std::string coordinator = "127.0.0.1:50051";
  double timeout_s = 60;    // the coordinator call's deadline
  client::ClientOptions client;  // token and TLS for run ids (set by ValidateConfig)
  std::string markdown_file, junit_file, json_file;  // extra renderings, when set
  report::PullRequestFiles pr;  // the job summary, pull-request comment and Checks payload, when set
};

/// The A/B gate input of two result sets: the candidate's SKU unless `sku`
/// overrides it, "unknown" when neither names one.
gate::GateInput BuildCompareInput(const ResultSet& baseline, const std::string& baseline_name,
                                  const ResultSet& candidate, const std::string& candidate_name,
                                  const std::string& sku = "");

/// The same with several result files a side, each the output of one
/// process: the gate counts each file's samples of a case as one process.
gate::GateInput BuildCompareInput(const std::vector<ResultSet>& baseline, const std::string& baseline_name,
                                  const std::vector<ResultSet>& candidate, const std::string& candidate_name,
                                  const std::string& sku = "");

/// The Environment::Hash() of the environment a perfgate result file names
/// (its sku and environment fields); empty for other formats, which name none.
std::string FileEnvironmentHash(const ResultSet& set);

/// Context keys whose values differ between the two sets (or that only one
/// has), sorted; keys that describe the run rather than the machine (run.*,
/// date, load average, command line) are left out.
std::vector<std::string> ContextDifferences(const ResultSet& baseline, const ResultSet& candidate);

/// Runs the command: prints the report to `out`, errors and advice to `err`.
/// Returns the exit code: 0 pass, 1 regression, 3 inconclusive (two sides'
/// files with no metric in common among them), 2 on an error (an unreadable
/// file or policy, a file in which nothing was measured, a file compared
/// with a run id, a failed call).
int CompareCommand(const CompareOptions& options, std::ostream& out, std::ostream& err);

}  // namespace perfgate::cli
