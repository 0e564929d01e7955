#include "cli/compare.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/coordinator_client.h"
#include "formats/calibration_file.h"
#include "formats/case_evidence.h"
#include "common/exit_codes.h"
#include "common/identity.h"
#include "gate/calibration.h"
#include "gate/policy.h"
#include "gate/report.h"
#include "wire/convert.h"
#include "wire/gate_convert.h"
#include "report/gate_report.h"

namespace perfgate::cli {
namespace {

// Context keys that change from one run to the next on the same machine, so a
// difference in them says nothing about whether two runs are comparable.
bool Volatile(const std::string& key) {
  static const std::set<std::string> kVolatile = {"date", "load_avg", "executable", "argv"};
  return absl::StartsWith(key, kRunContextPrefix) || kVolatile.count(key) > 0;
}

std::vector<std::string> Differences(const std::map<std::string, std::string>& a,
                                     const std::map<std::string, std::string>& b) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) keys.insert(k);
  }
  for (const auto& [k, v] : b) {
    if (!a.contains(k)) keys.insert(k);
  }
  std::vector<std::string> out;
  for (const std::string& k : keys) {
    if (!Volatile(k)) out.push_back(k);
  }
  return out;
}

void PrintDifferences(const std::vector<std::string>& keys, std::ostream& out) {
  if (keys.empty()) return;
  out << "note: the two sides' environments differ in " << absl::StrJoin(keys, ", ")
      << "; the change may come from the machines as well as the code\n";
}

// Prints the report as `perfgate gate` does, under its own name, and returns its exit code.
int Print(const CompareOptions& o, const gate::GateReport& report, std::ostream& out, std::ostream& err) {
  out << report::RenderTable(report, "perfgate compare");
  absl::Status written = report::WriteReportFiles(report, o.markdown_file, o.junit_file, o.json_file,
                                                         wire::GateReportJson);
  if (written.ok()) written = report::WritePullRequestFiles(report, o.pr);
  if (!written.ok()) {
    err << "perfgate: " << written.message() << "\n";
    return kExitError;
  }
  return report::ExitCode(report);
}

std::string ContextValue(const ResultSet& set, const std::string& key) {
  auto it = set.context.find(absl::StrCat(kRunContextPrefix, key));
  return it == set.context.end() ? std::string() : it->second;
}

// Adds the calibration file's spreads to `input` when it may stand for the
// candidate's node; a note on `out` says why when it may not. False (after
// a message on `err`) when the file cannot be read.
bool AddCalibration(const CompareOptions& o, const gate::Policy& policy, const ResultSet& candidate,
                    gate::GateInput* input, std::ostream& out, std::ostream& err) {
  if (o.calibration_file.empty()) return true;
  auto set = ReadCalibrationFile(o.calibration_file);
  if (!set.ok()) {
    err << "perfgate: " << set.status().message() << "\n";
    return false;
  }
  const std::string why =
      gate::CalibrationUnusable(*set, input->sku, FileEnvironmentHash(candidate),
                                std::chrono::system_clock::now(), policy.calibration_max_age);
  if (!why.empty()) {
    out << "note: calibration " << o.calibration_file << " not used: " << why << "\n";
    return true;
  }
  input->calibrations = gate::GateCalibrations(*set);
  return true;
}

// Reads every file of both sides, as `format` when one is named; false (after
// a message on `err`) when one cannot be read. The readers' notes go to `out`.
bool ReadSides(const std::vector<std::string>& base_files, const std::vector<std::string>& cand_files,
               const std::string& format, std::vector<ResultSet>* baselines, std::vector<ResultSet>* candidates,
               std::ostream& out, std::ostream& err) {
  for (const auto& [files, sets, what] :
       {std::tuple(&base_files, baselines, "baseline"), std::tuple(&cand_files, candidates, "candidate")}) {
    for (const std::string& f : *files) {
      auto set = ReadResultFile(f, format);
      if (!set.ok()) {
        err << "perfgate: " << what << ": " << set.status().message() << "\n";
        return false;
      }
      for (const std::string& note : set->notes) out << "note: " << f << ": " << note << "\n";
      sets->push_back(std::move(*set));
    }
  }
  return true;
}

// "case metric" of every judgeable metric of a side.
std::set<std::string> MetricKeys(const std::vector<ResultSet>& sets) {
  std::set<std::string> keys;
  for (const ResultSet& set : sets) {
    for (const CaseResult& c : set.cases) {
      if (!Judgeable(c)) continue;
      for (const MetricSpec& m : c.metrics) keys.insert(absl::StrCat(c.benchmark.Key(), " ", m.name));
    }
  }
  return keys;
}

// A gate of nothing would read as a pass. Exit 2 (after naming the files and
// what they held) when a file gives the gate nothing to judge, 3 when the
// two sides have no metric in common; kComparable when they can be judged.
constexpr int kComparable = -1;
int CheckComparable(const std::vector<std::string>& base_files, const std::vector<ResultSet>& baselines,
                    const std::vector<std::string>& cand_files, const std::vector<ResultSet>& candidates,
                    std::ostream& err) {
  bool empty = false;
  for (const auto& [files, sets, what] :
       {std::tuple(&base_files, &baselines, "baseline"), std::tuple(&cand_files, &candidates, "candidate")}) {
    for (size_t i = 0; i < sets->size(); ++i) {
      const ResultSet& set = (*sets)[i];
      if (std::any_of(set.cases.begin(), set.cases.end(), Judgeable)) continue;
      err << "perfgate: compare: nothing to compare in the " << what << " file " << (*files)[i] << ": "
          << WithoutSamples(set) << (set.notes.empty() ? "" : "; the reader's notes are above") << "\n";
      empty = true;
    }
  }
  if (empty) {
    err << "perfgate: compare: every file must hold measured cases (a Google Benchmark run with "
           "--benchmark_repetitions and without --benchmark_report_aggregates_only, for instance)\n";
    return kExitError;
  }
  const std::set<std::string> base_keys = MetricKeys(baselines), cand_keys = MetricKeys(candidates);
  if (std::any_of(cand_keys.begin(), cand_keys.end(), [&](const std::string& k) { return base_keys.contains(k); })) {
    return kComparable;
  }
  err << "perfgate: compare: INCONCLUSIVE — the two sides have no metric in common, so nothing was judged: "
      << "the baseline (" << absl::StrJoin(base_files, ",") << ") reports " << base_keys.size() << " ("
      << FewNames({base_keys.begin(), base_keys.end()}) << "), the candidate (" << absl::StrJoin(cand_files, ",")
      << ") " << cand_keys.size() << " (" << FewNames({cand_keys.begin(), cand_keys.end()})
      << "); compare results of the same cases (a case renamed, another filter or another program?)\n";
  return kExitInconclusive;
}

int CompareFiles(const CompareOptions& o, std::ostream& out, std::ostream& err) {
  auto policy_file = gate::ReadPolicyFile(o.policy_file);
  if (!policy_file.ok()) {
    err << "perfgate: " << policy_file.status().message() << "\n";
    return kExitError;
  }
  const gate::Policy& policy = policy_file->policy;
  const std::vector<std::string> base_files =
      o.baseline_files.empty() ? std::vector<std::string>{o.baseline} : o.baseline_files;
  const std::vector<std::string> cand_files =
      o.candidate_files.empty() ? std::vector<std::string>{o.candidate} : o.candidate_files;
  std::vector<ResultSet> baselines, candidates;
  if (!ReadSides(base_files, cand_files, o.format, &baselines, &candidates, out, err)) return kExitError;
  if (int code = CheckComparable(base_files, baselines, cand_files, candidates, err); code != kComparable) {
    return code;
  }
  const std::string base_name = absl::StrJoin(base_files, ",");
  const std::string cand_name = absl::StrJoin(cand_files, ",");
  gate::GateInput input = BuildCompareInput(baselines, base_name, candidates, cand_name, o.sku);
  if (!AddCalibration(o, policy, candidates.front(), &input, out, err)) return kExitError;
  const ResultSet* baseline = &baselines.front();
  const ResultSet* candidate = &candidates.front();

  gate::GateReport report;
  report.candidate_run_id = cand_name;
  report.sku = input.sku;
  report.candidate_branch = ContextValue(*candidate, "branch");
  report.candidate_commit = ContextValue(*candidate, "commit");
  const std::string baseline_branch = ContextValue(*baseline, "branch");
  report.baseline_branch = baseline_branch.empty() ? std::string("(A/B baseline side)") : baseline_branch;
  report.baseline_run_ids = base_files;
  report.fdr = policy.fdr;
  report.result = gate::EvaluateGate(input, policy);
  PrintDifferences(ContextDifferences(*baseline, *candidate), out);
  return Print(o, report, out, err);
}

int RpcError(const absl::Status& s, const CompareOptions& o, std::ostream& err) {
  err << "perfgate: compare failed: " << s.message();
  if (s.code() == absl::StatusCode::kUnavailable) {
    err << " (is a coordinator listening on " << o.coordinator
        << "? set --coordinator or PERFGATE_COORDINATOR)";
  }
  err << "\n";
  return kExitError;
}

// The environment fields of a stored run; empty when it cannot be read, since
// the note it feeds is advisory.
std::map<std::string, std::string> RunEnvironment(client::CoordinatorClient& coordinator,
                                                  const std::string& run_id) {
  auto detail = coordinator.GetRun(run_id);
  if (!detail.ok()) return {};
  const auto& fields = detail->environment().fields();
  return {fields.begin(), fields.end()};
}

int CompareRuns(const CompareOptions& o, std::ostream& out, std::ostream& err) {
  if (!o.calibration_file.empty()) {
    err << "perfgate: --calibration applies to result files; for stored runs the coordinator uses "
           "the calibrations it stores (`perfgate calibrations` lists them)\n";
    return kExitError;
  }
  auto policy = gate::ReadPolicyFile(o.policy_file);
  if (!policy.ok()) {
    err << "perfgate: " << policy.status().message() << "\n";
    return kExitError;
  }
  client::ClientOptions options = o.client;  // the token and TLS
  options.address = o.coordinator;
  options.timeout_s = o.timeout_s;
  client::CoordinatorClient coordinator(options);
  v1::EvaluateRequest req;
  req.set_mode(v1::GATE_MODE_AB);
  req.set_baseline_run_id(o.baseline);
  req.set_candidate_run_id(o.candidate);
  req.set_policy_yaml(policy->text);
  req.set_policy_name(o.policy_file.empty() ? std::string("(default policy)") : o.policy_file);
  auto sent = coordinator.Evaluate(req);
  if (!sent.ok()) return RpcError(sent.status(), o, err);
  auto report = wire::FromProto(*sent);
  if (!report.ok()) {
    err << "perfgate: compare: the coordinator's report cannot be read: " << report.status().message() << "\n";
    return kExitError;
  }

  const auto base_env = RunEnvironment(coordinator, o.baseline);
  const auto cand_env = RunEnvironment(coordinator, o.candidate);
  if (!base_env.empty() && !cand_env.empty()) PrintDifferences(Differences(base_env, cand_env), out);
  const int code = Print(o, *report, out, err);
  if (report->report_id > 0) {
    out << "report " << report->report_id << " stored; `perfgate report " << report->report_id
        << "` shows it again\n";
  }
  return code;
}

}  // namespace

gate::GateInput BuildCompareInput(const ResultSet& baseline, const std::string& baseline_name,
                                  const ResultSet& candidate, const std::string& candidate_name,
                                  const std::string& sku) {
  return BuildCompareInput(std::vector<ResultSet>{baseline}, baseline_name,
                           std::vector<ResultSet>{candidate}, candidate_name, sku);
}

namespace {

// One side's files as the gate sees them: every file's cases in file order,
// and per case the samples each file (one process) contributed.
gate::RunData SideOf(const std::vector<ResultSet>& files, const std::string& name) {
  std::vector<CaseResult> cases;
  std::map<std::string, gate::CaseBlocks> blocks;
  for (const ResultSet& file : files) {
    std::map<std::string, unsigned> in_file;
    for (const CaseResult& c : file.cases) {
      cases.push_back(c);
      in_file[c.benchmark.Key()] += static_cast<unsigned>(c.samples.size());
    }
    for (const auto& [key, n] : in_file) {
      if (n > 0) blocks[key].sizes.push_back(n);
    }
  }
  return gate::RunDataFromCases(name, cases, blocks);
}

}  // namespace

gate::GateInput BuildCompareInput(const std::vector<ResultSet>& baseline, const std::string& baseline_name,
                                  const std::vector<ResultSet>& candidate, const std::string& candidate_name,
                                  const std::string& sku) {
  gate::GateInput input;
  input.mode = gate::Mode::kAb;
  const std::string file_sku = candidate.empty() ? std::string() : candidate.front().sku;
  input.sku = !sku.empty() ? sku : !file_sku.empty() ? file_sku : std::string("unknown");
  input.candidate = SideOf(candidate, candidate_name);
  input.baselines.push_back(SideOf(baseline, baseline_name));
  return input;
}

std::string FileEnvironmentHash(const ResultSet& set) {
  if (set.format != kFormatPerfgate || set.sku.empty()) return "";
  Environment env;
  env.sku = set.sku;
  for (const auto& [k, v] : set.context) {
    if (!absl::StartsWith(k, kRunContextPrefix)) env.fields[k] = v;
  }
  return env.Hash();
}

std::vector<std::string> ContextDifferences(const ResultSet& baseline, const ResultSet& candidate) {
  return Differences(baseline.context, candidate.context);
}

int CompareCommand(const CompareOptions& options, std::ostream& out, std::ostream& err) {
  const bool baseline_is_run = IsUuid(options.baseline);
  const bool candidate_is_run = IsUuid(options.candidate);
  if (baseline_is_run != candidate_is_run) {
    err << "perfgate: compare needs two result files or two run ids, but '"
        << (baseline_is_run ? options.baseline : options.candidate) << "' is a run id and '"
        << (baseline_is_run ? options.candidate : options.baseline)
        << "' is not; `perfgate ingest` stores a file as a run\n";
    return kExitError;
  }
  return baseline_is_run ? CompareRuns(options, out, err) : CompareFiles(options, out, err);
}

}  // namespace perfgate::cli
