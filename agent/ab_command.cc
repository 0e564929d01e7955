// `perfgate-agent ab`: a baseline and a candidate build measured interleaved
// on this node (ab.h), gated in A/B mode, both sides uploaded whole
// (client/upload.h) unless offline.
#include <algorithm>
#include <functional>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/ab.h"
#include "agent/agent.h"
#include "agent/command_support.h"
#include "agent/counted.h"
#include "agent/image.h"
#include "agent/probe.h"
#include "common/process.h"
#include "agent/program_ab.h"
#include "client/upload.h"
#include "common/identity.h"
#include "gate/counts.h"
#include "gate/report.h"
#include "report/gate_report.h"
#include "wire/gate_convert.h"

namespace perfgate::agent {
namespace {

// "n1,n2,...": the unthrottled samples of each block of a pooled side.
std::string UnthrottledPerBlock(const CaseResult& side, const std::vector<unsigned>& blocks) {
  std::vector<std::string> counts;
  size_t at = 0;
  for (unsigned n : blocks) {
    unsigned kept = 0;
    for (unsigned i = 0; i < n && at < side.samples.size(); ++i, ++at) {
      if (!side.samples[at].throttled) ++kept;
    }
    counts.push_back(std::to_string(kept));
  }
  return absl::StrJoin(counts, ",");
}

AbOptions AbOptionsOf(const AgentConfig& config) {
  AbOptions options;
  options.fixed_rounds = config.ab_rounds;
  options.fixed_block_samples = config.ab_block_samples;
  options.block_seconds = config.ab_block_seconds;
  options.max_rounds = config.ab_max_rounds;
  options.case_budget_s = config.ab_case_budget_s;
  options.auto_budget = config.ab_case_budget_auto;
  options.confirm = config.ab_confirm;
  options.pin_cpus = config.ab_pin_cpus;
  if (config.time_budget_s) options.job_budget_s = *config.time_budget_s;
  return options;
}

void PrintHeader(const ProbeResult& probe, const std::string& cases, const AbOptions& options) {
  std::cout << "perfgate-agent ab: sku " << probe.environment.sku << ", " << cases << ", "
            << (options.fixed_rounds > 0 ? absl::StrCat(options.fixed_rounds, " rounds")
                                         : absl::StrCat("adaptive rounds (", options.min_rounds, " to ",
                                                        options.max_rounds, ", ", options.case_budget_s,
                                                        options.auto_budget ? " s a case or what its pace needs)"
                                                                            : " s a case)"))
            << " of "
            << (options.fixed_block_samples > 0 ? absl::StrCat(options.fixed_block_samples, " samples")
                                                : absl::StrCat(options.block_seconds, " s"))
            << " per block, confirm " << (options.confirm ? "on" : "off") << ", CPUs per round "
            << (options.pin_cpus < 0 ? std::string("auto") : options.pin_cpus == 0 ? std::string("off")
                                                                                    : std::to_string(options.pin_cpus))
            << "\n"
            << std::flush;
}

// The two runs of a job, each naming the other.
struct SideRuns {
  RunMeta baseline, candidate;
};

// What a side ran: its command, or its image, whose digest (checked at
// start) is then the side's image_digest, as a run inside it records.
void SetSide(RunMeta& run, const std::string& command, const std::string& image) {
  if (image.empty()) {
    run.details["ab_command"] = command;
    return;
  }
  run.details["ab_image"] = image;
  if (auto digest = DigestOfReference(image); digest.ok()) run.environment.fields["image_digest"] = *digest;
}

SideRuns RunsOf(const AgentConfig& config, const ProbeResult& probe, const AbResult& ab) {
  SideRuns runs;
  RunMeta& meta = runs.candidate;
  meta = RunMetaOf(config, probe);
  // The baseline side gets a branch of its own so that it never joins the
  // history of the candidate's branch.
  RunMeta& base = runs.baseline;
  base = meta;
  base.run_id = NewUuid();
  base.branch = meta.branch + "~ab-baseline";
  base.parent_commits.clear();
  base.details["ab_role"] = "baseline";
  base.details["ab_pair"] = meta.run_id;
  meta.details["ab_role"] = "candidate";
  meta.details["ab_pair"] = base.run_id;
  SetSide(base, config.ab_programs ? config.ab_baseline_cmd : config.ab_baseline, config.ab_baseline_image);
  SetSide(meta, config.ab_programs ? config.ab_candidate_cmd : config.ab_candidate, config.ab_candidate_image);
  // Each side's samples came in blocks, one process each, in round order:
  // the coordinator's A/B gate tests them by block, as this command does.
  // Per case, the unthrottled samples of each block (the samples a gate reads).
  for (const CasePair& p : ab.pairs) {
    if (p.baseline.status == CaseStatus::kSkipped || p.baseline_blocks.empty()) continue;
    base.details["ab_blocks:" + p.key] = UnthrottledPerBlock(p.baseline, p.baseline_blocks);
    meta.details["ab_blocks:" + p.key] = UnthrottledPerBlock(p.candidate, p.candidate_blocks);
  }
  return runs;
}

std::string ImageDigestOf(const RunMeta& run) {
  auto it = run.environment.fields.find("image_digest");
  return it == run.environment.fields.end() ? std::string() : it->second;
}

gate::GateReport ReportOf(const SideRuns& runs, const gate::Policy& policy, const AbResult& ab) {
  gate::GateReport report;
  report.candidate_run_id = runs.candidate.run_id;
  report.sku = runs.candidate.environment.sku;
  report.candidate_branch = runs.candidate.branch;
  report.candidate_commit = runs.candidate.commit;
  report.baseline_branch = runs.baseline.branch;
  report.baseline_run_ids = {runs.baseline.run_id};
  report.fdr = policy.fdr;
  report.candidate_image_digest = ImageDigestOf(runs.candidate);
  if (const std::string base = ImageDigestOf(runs.baseline); !base.empty() || !report.candidate_image_digest.empty()) {
    report.baseline_image_digests = {base};
  }
  report.result = ab.gate;
  for (const CasePair& p : ab.pairs) report.case_rounds.push_back({p.key, p.rounds, p.stopped});
  return report;
}

// Both sides as complete runs; nothing is spooled: an unreachable
// coordinator is an error (exit 2) after the report.
int SendSides(const AgentConfig& config, const ProbeResult& probe, const SideRuns& runs, const AbResult& ab) {
  std::vector<CaseResult> base_cases, cand_cases;
  for (const CasePair& p : ab.pairs) {
    base_cases.push_back(p.baseline);
    cand_cases.push_back(p.candidate);
  }
  // The counts of a job that timed too, each a further part of its timed case.
  for (const CasePair& c : ab.counted) {
    const auto timed = std::find_if(ab.pairs.begin(), ab.pairs.end(), [&](const CasePair& p) { return p.key == c.key; });
    if (timed == ab.pairs.end() || c.baseline.status != CaseStatus::kOk || c.candidate.status != CaseStatus::kOk ||
        c.baseline.samples.empty() || c.candidate.samples.empty()) {
      continue;
    }
    base_cases.push_back(CountPart(timed->baseline, c.baseline));
    cand_cases.push_back(CountPart(timed->candidate, c.candidate));
  }
  client::CoordinatorClient client(config.client);
  auto baseline = client::RunUpload::Create(client, runs.baseline);
  auto candidate = client::RunUpload::Create(client, runs.candidate);
  if (!baseline.ok() || !candidate.ok()) {
    return Fail(baseline.ok() ? candidate.status() : baseline.status(), "cannot send the runs");
  }
  if (auto s = baseline->Register(probe.hostname, PERFGATE_VERSION); !s.ok()) {
    return Fail(s, "cannot register with the coordinator");
  }
  if (auto s = baseline->SendWhole(base_cases); !s.ok()) return Fail(s.status(), "cannot send the baseline side");
  if (auto s = candidate->SendWhole(cand_cases); !s.ok()) return Fail(s.status(), "cannot send the candidate side");
  std::cout << "baseline run_id: " << runs.baseline.run_id << "\n"
            << "candidate run_id: " << runs.candidate.run_id << "\n"
            << "re-gate on the coordinator: perfgate gate --mode ab --run " << runs.candidate.run_id
            << " --baseline-run " << runs.baseline.run_id << " --policy "
            << (config.policy_file.empty() ? "POLICY.yaml" : config.policy_file) << "\n";
  return kExitPass;
}

// The measured job's report, printed and written, its runs sent; the exit
// code: an error when a side stopped working, else the gate's.
int Report(const AgentConfig& config, const ProbeResult& probe, AbResult ab) {
  if (!ab.error.empty() && ab.pairs.empty()) {
    // Not one block was measured: there is nothing to report or send.
    return Fail(absl::FailedPreconditionError(ab.error), "ab");
  }
  if (!ab.error.empty()) {
    ab.gate.summary = absl::StrCat("Measuring stopped early: ", ab.error,
                                   ". The verdicts rest on the blocks measured before. ", ab.gate.summary);
    std::cout << "\nmeasuring stopped early (exit 2): " << ab.error
              << "\nthe verdicts below rest on the rounds measured before it\n";
  }
  const SideRuns runs = RunsOf(config, probe, ab);
  const gate::GateReport report = ReportOf(runs, config.policy, ab);
  std::cout << "\n" << report::RenderTable(report, "perfgate-agent ab");
  if (auto s = report::WriteReportFiles(report, config.markdown_file, config.junit_file, config.json_file,
                                          wire::GateReportJson);
      !s.ok()) {
    return Fail(s, "cannot write the report");
  }
  if (!config.offline) {
    if (int rc = SendSides(config, probe, runs, ab); rc != kExitPass) return rc;
  }
  if (!ab.error.empty()) {
    std::cerr << "perfgate-agent: ab: " << ab.error << "\n";
    return kExitError;
  }
  return report::ExitCode(report);
}

// How `ab --count` counts a side (counted.h).
CountOptions CountOptionsOf(const AgentConfig& config, const std::string& dir) {
  CountOptions counting;
  counting.toggle = config.ab_count_toggle;
  counting.simulate = config.ab_count == "cache";
  counting.tool = CountToolOf(config.ab_count);
  counting.ncu = config.ncu;
  counting.timeout_s = config.ab_block_timeout_s;
  counting.work_dir = dir;
  return counting;
}

// `ab --count` (counted.h): the cases counted under callgrind and, unless
// --count-only, timed in rounds by `timed` as well, the two witnesses
// judged side by side; the counts are sent with the timed sides' runs.
AbResult CountedAb(const AgentConfig& config, const ProbeResult& probe, Counter& baseline, Counter& candidate,
                   const std::function<AbResult()>& timed) {
  AbResult counted = RunCountedAb(baseline, candidate, config.policy, probe.environment.sku,
                                  config.ab_count_processes, std::cout);
  if (config.ab_count_only || !counted.error.empty()) return counted;
  AbResult both = timed();
  both.gate = gate::CombineWitnesses(both.gate, counted.gate, config.policy, probe.environment.sku);
  both.counted = std::move(counted.pairs);
  return both;
}

// Both sides benchmark programs (program_ab.h): result files in a
// temporary folder of their own, removed at the end.
int ProgramAbCommand(const AgentConfig& config) {
  auto dir = TempDir::Make("perfgate-ab-");
  if (!dir.ok()) return Fail(dir.status(), "cannot make a folder for the result files");
  CommandProgram baseline(config.ab_baseline_argv, config.ab_block_timeout_s, dir->path());
  CommandProgram candidate(config.ab_candidate_argv, config.ab_block_timeout_s, dir->path());
  const ProbeResult probe = ProbeMachine();
  const AbOptions options = AbOptionsOf(config);
  PrintHeader(probe, "the programs' cases", options);
  auto timed = [&] { return RunProgramAb(baseline, candidate, config.policy, probe.environment.sku, options, std::cout); };
  if (config.ab_count.empty()) return Report(config, probe, timed());
  CountedProgram counted_base(config.ab_baseline_argv, CountOptionsOf(config, dir->path()));
  CountedProgram counted_cand(config.ab_candidate_argv, CountOptionsOf(config, dir->path()));
  return Report(config, probe, CountedAb(config, probe, counted_base, counted_cand, timed));
}

}  // namespace

int AbCommand(const AgentConfig& config) {
  if (config.ab_programs) return ProgramAbCommand(config);
  auto selected = SelectSomeCases(config);
  if (!selected.ok()) return Fail(selected.status(), "bad selection");
  if (absl::Status can = CheckCountTool(CountToolOf(config.ab_count)); !can.ok()) return Fail(can, "bad --count");
  // Both sides select with the same flags, so a key names the same case on each.
  const std::vector<std::string> shared = SampleWorkerArgs(config);
  CommandSide baseline(config.ab_baseline_argv, shared);
  CommandSide candidate(config.ab_candidate_argv, shared);

  const ProbeResult probe = ProbeMachine();
  const std::vector<AbCase> cases = RunnableCases(*selected, std::cout);
  const AbOptions options = AbOptionsOf(config);
  PrintHeader(probe, absl::StrCat(cases.size(), " cases"), options);
  auto timed = [&] { return RunAb(cases, baseline, candidate, config.policy, probe.environment.sku, options, std::cout); };
  if (config.ab_count.empty()) return Report(config, probe, timed());
  auto dir = TempDir::Make("perfgate-ab-");
  if (!dir.ok()) return Fail(dir.status(), "cannot make a folder for callgrind's files");
  std::vector<BenchmarkId> ids;
  for (const AbCase& c : cases) ids.push_back(c.id);
  // A few samples average the engine's own clock reads out of the count.
  const unsigned samples = config.ab_block_samples > 0 ? config.ab_block_samples : 3;
  CountedAgent counted_base(config.ab_baseline_argv, shared, ids, samples, CountOptionsOf(config, dir->path()));
  CountedAgent counted_cand(config.ab_candidate_argv, shared, ids, samples, CountOptionsOf(config, dir->path()));
  return Report(config, probe, CountedAb(config, probe, counted_base, counted_cand, timed));
}

}  // namespace perfgate::agent
