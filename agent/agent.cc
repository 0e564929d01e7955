#include "agent/agent.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/ab.h"
#include "agent/command_support.h"
#include "agent/probe.h"
#include "agent/process.h"
#include "agent/runner.h"
#include "agent/spool.h"
#include "client/coordinator_client.h"
#include "common/identity.h"
#include "measure/nvml.h"
#include "formats/result_file.h"
#include "measure/validity.h"
#include "gate/policy.h"
#include "gate/report.h"
#include "wire/convert.h"
#include "report/gate_report.h"
#include "suites/builtin.h"
#include "suites/collectives/world.h"

namespace perfgate::agent {

using client::ClientOptions;
using client::CoordinatorClient;
using client::SendCompleteRun;

namespace {

Trigger ParseTriggerOrManual(const std::string& s) {
  Trigger t = Trigger::kManual;
  ParseTrigger(s, &t);
  return t;
}

// The coordinator could not be reached, as opposed to refusing what it got.
bool Transient(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable ||
         s.code() == absl::StatusCode::kDeadlineExceeded;
}

v1::CloseRunRequest CloseRequest(const std::string& run_id, v1::RunStatus status,
                                 uint64_t last_sequence, const std::string& reason) {
  v1::CloseRunRequest r;
  r.set_run_id(run_id);
  r.set_status(status);
  r.set_last_sequence(last_sequence);
  r.set_reason(reason);
  return r;
}

// Sends one spooled run: opens it (again), sends what was never acknowledged,
// closes it and removes it from the spool.
absl::Status ReplayRun(CoordinatorClient& client, const std::string& dir, const std::string& hostname) {
  auto spool = SpooledRun::Open(dir);
  if (!spool.ok()) return spool.status();
  auto open = spool->ReadRun();
  if (!open.ok()) return open.status();
  auto pending = spool->ReadPending();
  if (!pending.ok()) return pending.status();
  auto close = spool->ReadClose();
  if (!close.ok()) return close.status();
  if (!close->has_value()) {
    // The agent stopped without ending the run: what it measured is kept,
    // but the run is incomplete and must never serve as a baseline.
    auto last = spool->LastSequence();
    if (!last.ok()) return last.status();
    *close = CloseRequest(open->run_id(), v1::RUN_FAILED, *last,
                          "the agent stopped before closing the run; replayed from its spool");
  }
  if (auto s = client.RegisterAgent(open->agent_name(), hostname, PERFGATE_VERSION); !s.ok()) return s;
  if (auto s = client.OpenRun(*open); !s.ok()) {
    if (s.code() != absl::StatusCode::kAlreadyExists) return s;
    // Closed on the coordinator already: it has the whole run.
    std::cout << "perfgate-agent: run " << open->run_id() << " was already stored\n";
    return spool->Remove();
  }
  for (const auto& [seq, batch] : *pending) {
    auto ack = client.SendBatch(batch);
    if (!ack.ok()) return ack.status();
    if (auto s = spool->Acknowledge(seq); !s.ok()) return s;
  }
  auto stored = client.CloseRun(**close);
  if (!stored.ok()) return stored.status();
  std::cout << "perfgate-agent: replayed run " << open->run_id() << " (" << pending->size()
            << " batches, " << *stored << " samples stored)\n";
  return spool->Remove();
}

// A rank other than 0: measures its share of every case in step with rank 0,
// prints what it saw and reports to no coordinator.
int RunFollower(const std::vector<suites::CaseInstance>& cases, const RunnerOptions& options,
                int rank) {
  std::vector<CaseResult> done;
  bool case_failed = false;
  absl::Status s = RunCases(cases, options, [&](CaseResult r) -> absl::Status {
    std::cout << "  rank " << rank << " " << r.benchmark.Key() << ": " << r.samples.size()
              << " samples, " << ToString(r.status) << (r.reason.empty() ? "" : " (" + r.reason + ")")
              << "\n" << std::flush;
    case_failed = case_failed || r.status == CaseStatus::kFailed;
    done.push_back(std::move(r));
    return absl::OkStatus();
  });
  if (!s.ok()) return Fail(s, "the run failed");
  std::cout << "\n" << FormatSummaryTable(done) << "\n";
  return case_failed ? kExitCaseFailed : kExitOk;
}

}  // namespace

int RunCommand(const AgentConfig& config) {
  auto cases = SelectCases(config);
  if (!cases.ok()) return Fail(cases.status(), "bad selection");
  if (cases->empty()) return Fail(absl::InvalidArgumentError("no case matches the selection"), "bad selection");
  RunnerOptions options;
  options.engine = config.engine;
  options.engine.max_noise = config.max_noise_pct / 100.0;
  if (!config.time_budget.empty()) {
    auto budget = ParseDuration(config.time_budget);
    if (!budget.ok()) return Fail(budget.status(), "bad --time-budget");
    options.time_budget_s = *budget;
  }
  for (const std::string& spec : config.slowdowns) {
    auto s = ParseSlowdown(spec);
    if (!s.ok()) return Fail(s.status(), "bad option");
    options.slowdowns.push_back(*s);
  }
  if ((config.offline || config.coordinator == "none") && config.output_file.empty()) {
    return Fail(absl::InvalidArgumentError("--offline (or --coordinator none) needs --output FILE: "
                                           "nothing else would keep the results"),
                "bad option");
  }
  auto world = ResolveWorld(config);
  if (!world.ok()) return Fail(world.status(), "bad option");
  suites::collectives::SetProcessWorld(*world);
  if (world->rank != 0) {
    std::cout << "perfgate-agent: rank " << world->rank << " of " << world->size << ", "
              << cases->size() << " cases; rank 0 reports them\n" << std::flush;
    return RunFollower(*cases, options, world->rank);
  }
  auto client_options = MakeClientOptions(config);
  if (!client_options.ok()) return Fail(client_options.status(), "bad option");

  const ProbeResult probe = ProbeMachine();
  const std::vector<DeviceHealth> health_at_start =
      HealthOf(probe.cuda, probe.gpu_facts, static_cast<uint32_t>(getpid()));
  // Device cases run on CUDA device 0; its clocks mark their samples.
  std::unique_ptr<NvmlThrottleSource> throttle;
  if (probe.nvml && !probe.nvml_devices.empty() && probe.nvml_devices[0] &&
      probe.gpu_facts[0].default_sm_clock_mhz) {
    throttle = std::make_unique<NvmlThrottleSource>(*probe.nvml, *probe.nvml_devices[0],
                                                    *probe.gpu_facts[0].default_sm_clock_mhz);
    options.throttle = throttle.get();
  }
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = config.agent_name.empty() ? probe.hostname : config.agent_name;
  meta.environment = probe.environment;
  meta.repo = config.repo;
  meta.branch = config.branch;
  meta.commit = config.commit;
  if (meta.branch.empty()) meta.branch = Git({"rev-parse", "--abbrev-ref", "HEAD"});
  if (meta.branch.empty()) meta.branch = "local";
  if (meta.commit.empty()) meta.commit = Git({"rev-parse", "HEAD"});
  // Ancestors, nearest first, so a gate can restrict its baseline to the
  // merge-base and what came before it.
  if (!meta.commit.empty()) {
    const std::string parents = Git({"rev-list", "--max-count=200", "--end-of-options", meta.commit + "~1"});
    meta.parent_commits = absl::StrSplit(parents, '\n', absl::SkipEmpty());
  }
  meta.trigger = ParseTriggerOrManual(config.trigger);
  meta.ci_job = config.ci_job;
  meta.node = probe.hostname;
  meta.started_at = std::chrono::system_clock::now();
  meta.details = probe.details;

  // Offline, nothing is sent or spooled: the result file is the only copy.
  const bool offline = config.offline || config.coordinator == "none";
  std::cout << "perfgate-agent: sku " << meta.environment.sku << ", " << cases->size() << " cases, coordinator "
            << (offline ? "none (offline)" : config.coordinator) << "\n";
  if (!probe.cuda.available) std::cout << "perfgate-agent: no GPU: " << probe.cuda.note << "\n";
  if (probe.cuda.available && probe.nvml_status != "ok") {
    std::cout << "perfgate-agent: NVML " << probe.nvml_status << "\n";
  }

  // Every batch goes to the spool before the wire, so nothing measured is
  // lost if the coordinator goes away.
  std::optional<SpooledRun> spool;
  if (!offline) {
    auto created = SpooledRun::Create(config.spool_dir, meta);
    if (!created.ok()) return Fail(created.status(), "cannot write the spool (set --spool)");
    spool.emplace(std::move(*created));
  }

  CoordinatorClient client(*client_options);
  bool online = !offline;
  auto go_offline = [&](const absl::Status& s) {
    online = false;
    std::cerr << "perfgate-agent: coordinator unreachable (" << s.message()
              << "); measuring on into the spool\n";
  };
  auto refused = [&](const absl::Status& s, const char* what) {
    spool->Remove().ok();  // a refused run would be refused again on replay
    return Fail(s, what);
  };
  if (online) {
    if (auto s = client.RegisterAgent(meta.agent_name, probe.hostname, PERFGATE_VERSION); !s.ok()) {
      if (!Transient(s)) return refused(s, "coordinator refused the agent");
      go_offline(s);
    }
  }
  v1::OpenRunRequest open;
  wire::ToProto(meta, &open);
  if (online) {
    if (auto s = client.OpenRun(open); !s.ok()) {
      if (!Transient(s)) return refused(s, "coordinator refused the run");
      go_offline(s);
    }
  }
  std::cout << "perfgate-agent: run " << meta.run_id << " (" << meta.branch << " "
            << meta.commit.substr(0, 12) << ")\n" << std::flush;

  uint64_t sequence = 0;
  std::vector<CaseResult> done;
  bool case_failed = false;
  absl::Status streamed = RunCases(*cases, options, [&](CaseResult r) -> absl::Status {
    std::cout << "  " << r.benchmark.Key() << ": " << r.samples.size() << " samples, "
              << ToString(r.status) << (r.reason.empty() ? "" : " (" + r.reason + ")") << "\n"
              << std::flush;
    case_failed = case_failed || r.status == CaseStatus::kFailed;
    v1::ResultBatch batch;
    batch.set_run_id(meta.run_id);
    batch.set_sequence(++sequence);
    wire::ToProto(r, batch.add_cases());
    done.push_back(std::move(r));
    if (offline) return absl::OkStatus();
    if (auto s = spool->Append(batch); !s.ok()) return s;
    if (!online) return absl::OkStatus();
    auto ack = client.SendBatch(batch);
    if (ack.ok()) return spool->Acknowledge(ack->sequence);
    if (!Transient(ack.status())) return ack.status();
    go_offline(ack.status());
    return absl::OkStatus();
  });
  if (!streamed.ok()) {
    if (offline) return Fail(streamed, "the run failed");
    // Best effort: mark the run failed so it never serves as a baseline.
    if (online) client.CloseRun(CloseRequest(meta.run_id, v1::RUN_FAILED, sequence - 1, std::string(streamed.message()))).ok();
    return refused(streamed, "the run was refused");
  }

  std::cout << "\n" << FormatSummaryTable(done) << "\n";
  // Written before the coordinator is told, so the file exists whatever it answers.
  if (!config.output_file.empty()) {
    if (auto s = WriteResultFile(config.output_file, meta, done); !s.ok()) {
      return Fail(s, "cannot write the result file");
    }
    std::cout << "perfgate-agent: results written to " << config.output_file << "\n";
  }
  v1::CloseRunRequest close = CloseRequest(meta.run_id, v1::RUN_COMPLETE, sequence, "");
  // Read right after the last case, while the link still carries its load.
  const std::vector<std::string> invalid =
      InvalidForGatingReasons(health_at_start, ProbeHealth(probe), ThrottleCounts(done));
  for (const std::string& reason : invalid) {
    std::cout << "perfgate-agent: invalid for gating: " << reason << "\n";
    close.add_invalid_reasons(reason);
  }
  if (online) {
    auto closed = client.CloseRun(close);
    if (closed.ok()) {
      spool->Remove().ok();
      std::cout << "run_id: " << meta.run_id << "  (" << *closed << " samples stored)\n";
    } else if (Transient(closed.status())) {
      go_offline(closed.status());
    } else {
      return refused(closed.status(), "coordinator refused to close the run");
    }
  }
  if (!config.run_id_file.empty()) {
    std::ofstream out(config.run_id_file);
    out << meta.run_id << "\n";
    if (!out) return Fail(absl::InternalError(config.run_id_file), "cannot write the run id file");
  }
  if (!online && !offline) {
    if (auto s = spool->Close(close); !s.ok()) return Fail(s, "cannot write the spool");
    std::cerr << "perfgate-agent: run " << meta.run_id << " is kept in " << spool->path()
              << "; `perfgate-agent replay` sends it once the coordinator is back\n";
    return kExitError;
  }
  return case_failed ? kExitCaseFailed : kExitOk;
}

int ReplayCommand(const AgentConfig& config) {
  auto client_options = MakeClientOptions(config);
  if (!client_options.ok()) return Fail(client_options.status(), "bad option");
  auto runs = ListSpool(config.spool_dir);
  if (!runs.ok()) return Fail(runs.status(), "cannot read the spool");
  CoordinatorClient client(*client_options);
  // Only the hostname is needed: replaying measures nothing.
  const std::string hostname = Hostname();
  int failures = 0;
  for (const std::string& dir : *runs) {
    absl::Status s = ReplayRun(client, dir, hostname);
    if (!s.ok()) {
      ++failures;
      std::cerr << "perfgate-agent: " << dir << ": " << s.message() << "\n";
    }
  }
  std::cout << "perfgate-agent: " << runs->size() - failures << " of " << runs->size()
            << " spooled runs replayed\n";
  return failures == 0 ? kExitOk : kExitError;
}

int ListCommand(const AgentConfig& config) {
  auto cases = SelectCases(config);
  if (!cases.ok()) return Fail(cases.status(), "bad selection");
  std::cout << FormatCaseList(*cases);
  return kExitOk;
}

int ProbeCommand() {
  const ProbeResult p = ProbeMachine();
  std::cout << "sku: " << p.environment.sku << "\n";
  std::cout << "hostname: " << p.hostname << "\n";
  std::cout << "nvml: " << p.nvml_status << "\n";
  if (!p.cuda.available) std::cout << "gpu: none (" << p.cuda.note << ")\n";
  for (const GpuInfo& g : p.cuda.devices) {
    std::cout << "gpu " << g.index << ": " << g.name << " " << g.uuid << " pci " << g.pci_bus_id
              << " sm " << g.sm_count << "\n";
  }
  std::cout << "\nenvironment (must match for numbers to compare; hash "
            << p.environment.Hash().substr(0, 12) << "):\n";
  for (const auto& [k, v] : p.environment.fields) std::cout << "  " << k << ": " << v << "\n";
  std::cout << "\nrun details (recorded with each run):\n";
  for (const auto& [k, v] : p.details) std::cout << "  " << k << ": " << v << "\n";
  const std::vector<std::string> now =
      InvalidForGatingReasons(HealthOf(p.cuda, p.gpu_facts, static_cast<uint32_t>(getpid())), ProbeHealth(p), {});
  for (const std::string& reason : now) std::cout << "invalid for gating now: " << reason << "\n";
  return kExitOk;
}

namespace {

// The throttle source for device cases: CUDA device 0's clocks through NVML,
// or null where there is none.
std::unique_ptr<NvmlThrottleSource> ThrottleOf(const ProbeResult& probe) {
  if (probe.nvml && !probe.nvml_devices.empty() && probe.nvml_devices[0] &&
      probe.gpu_facts[0].default_sm_clock_mhz) {
    return std::make_unique<NvmlThrottleSource>(*probe.nvml, *probe.nvml_devices[0],
                                                *probe.gpu_facts[0].default_sm_clock_mhz);
  }
  return nullptr;
}

absl::Status WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("cannot write the result: ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

int SampleCommand(const AgentConfig& config) {
  // stdout carries the result alone: whatever the case or a library prints
  // goes to stderr instead.
  std::cout.flush();
  const int result_fd = dup(STDOUT_FILENO);
  if (result_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    return Fail(absl::InternalError(std::strerror(errno)), "cannot set stdout aside for the result");
  }
  auto cases = SelectCases(config);
  if (!cases.ok()) return Fail(cases.status(), "bad selection");
  const suites::CaseInstance* instance = nullptr;
  for (const suites::CaseInstance& c : *cases) {
    if (c.id.Key() == config.sample_case) instance = &c;
  }
  if (instance == nullptr) {
    return Fail(absl::NotFoundError(absl::StrCat(
                    "no case '", config.sample_case,
                    "' in the selection; `perfgate-agent list` with the same --suite/--filter/--set "
                    "prints the keys this build offers")),
                "bad --case");
  }
  RunnerOptions options;
  options.engine = config.engine;
  options.engine.sample_count = config.sample_count;
  for (const std::string& spec : config.slowdowns) {
    auto s = ParseSlowdown(spec);
    if (!s.ok()) return Fail(s.status(), "bad option");
    options.slowdowns.push_back(*s);
  }
  auto world = ResolveWorld(config);
  if (!world.ok()) return Fail(world.status(), "bad option");
  suites::collectives::SetProcessWorld(*world);
  const ProbeResult probe = ProbeMachine();
  std::unique_ptr<NvmlThrottleSource> throttle = ThrottleOf(probe);
  options.throttle = throttle.get();
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = probe.hostname;
  meta.node = probe.hostname;
  meta.environment = probe.environment;
  meta.trigger = Trigger::kManual;
  meta.started_at = std::chrono::system_clock::now();
  const auto started = std::chrono::steady_clock::now();
  CaseResult result = RunCase(*instance, options);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  absl::Status written = WriteAll(result_fd, WriteResultJson(meta, {result}));
  close(result_fd);
  if (!written.ok()) return Fail(written, "sample");
  return kExitOk;
}

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

}  // namespace

int AbCommand(const AgentConfig& config) {
  auto baseline_argv = SplitCommand(config.ab_baseline);
  if (!baseline_argv.ok()) return Fail(baseline_argv.status(), "bad --baseline");
  auto candidate_argv = SplitCommand(config.ab_candidate);
  if (!candidate_argv.ok()) return Fail(candidate_argv.status(), "bad --candidate");
  auto selected = SelectCases(config);
  if (!selected.ok()) return Fail(selected.status(), "bad selection");
  if (selected->empty()) {
    return Fail(absl::InvalidArgumentError("no case matches the selection"), "bad selection");
  }
  auto loaded = LoadPolicy(config.policy_file);
  if (!loaded.ok()) return Fail(loaded.status(), "bad --policy");
  const gate::Policy policy = *std::move(loaded);
  const bool offline = config.offline || config.coordinator == "none";
  auto client_options = MakeClientOptions(config);
  if (!client_options.ok()) return Fail(client_options.status(), "bad option");

  // Both sides select with the same flags, so a key names the same case on each.
  const std::vector<std::string> shared = SampleWorkerArgs(config);
  CommandSide baseline(*baseline_argv, shared);
  CommandSide candidate(*candidate_argv, shared);

  const ProbeResult probe = ProbeMachine();
  const std::vector<AbCase> cases = RunnableCases(*selected, std::cout);
  AbOptions options;
  options.fixed_rounds = config.ab_rounds;
  options.fixed_block_samples = config.ab_block_samples;
  options.block_seconds = config.ab_block_seconds;
  options.max_rounds = config.ab_max_rounds;
  options.case_budget_s = config.ab_case_budget_s;
  options.confirm = config.ab_confirm;
  if (!config.time_budget.empty()) {
    auto budget = ParseDuration(config.time_budget);
    if (!budget.ok()) return Fail(budget.status(), "bad --time-budget");
    options.job_budget_s = *budget;
  }
  std::cout << "perfgate-agent ab: sku " << probe.environment.sku << ", " << cases.size() << " cases, "
            << (options.fixed_rounds > 0 ? absl::StrCat(options.fixed_rounds, " rounds")
                                         : absl::StrCat("adaptive rounds (", options.min_rounds, " to ",
                                                        options.max_rounds, ", ", options.case_budget_s,
                                                        " s a case)"))
            << " of "
            << (options.fixed_block_samples > 0 ? absl::StrCat(options.fixed_block_samples, " samples")
                                                : absl::StrCat(options.block_seconds, " s"))
            << " per block, confirm " << (options.confirm ? "on" : "off") << "\n"
            << std::flush;
  const AbResult ab = RunAb(cases, baseline, candidate, policy, probe.environment.sku, options, std::cout);

  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = config.agent_name.empty() ? probe.hostname : config.agent_name;
  meta.environment = probe.environment;
  meta.repo = config.repo;
  meta.branch = config.branch.empty() ? Git({"rev-parse", "--abbrev-ref", "HEAD"}) : config.branch;
  if (meta.branch.empty()) meta.branch = "local";
  meta.commit = config.commit.empty() ? Git({"rev-parse", "HEAD"}) : config.commit;
  meta.trigger = ParseTriggerOrManual(config.trigger);
  meta.ci_job = config.ci_job;
  meta.node = probe.hostname;
  meta.started_at = std::chrono::system_clock::now();
  meta.details = probe.details;
  // The baseline side gets a branch of its own so that it never joins the
  // history of the candidate's branch.
  RunMeta base_meta = meta;
  base_meta.run_id = NewUuid();
  base_meta.branch = meta.branch + "~ab-baseline";
  base_meta.parent_commits.clear();
  base_meta.details["ab_role"] = "baseline";
  base_meta.details["ab_pair"] = meta.run_id;
  base_meta.details["ab_command"] = config.ab_baseline;
  meta.details["ab_role"] = "candidate";
  meta.details["ab_pair"] = base_meta.run_id;
  meta.details["ab_command"] = config.ab_candidate;
  // Each side's samples came in blocks, one process each, in round order:
  // the coordinator's A/B gate tests them by block, as this command does.
  // Per case, the unthrottled samples of each block (the samples a gate reads).
  for (const CasePair& p : ab.pairs) {
    if (p.baseline.status == CaseStatus::kSkipped || p.baseline_blocks.empty()) continue;
    base_meta.details["ab_blocks:" + p.key] = UnthrottledPerBlock(p.baseline, p.baseline_blocks);
    meta.details["ab_blocks:" + p.key] = UnthrottledPerBlock(p.candidate, p.candidate_blocks);
  }

  gate::GateReport report;
  report.candidate_run_id = meta.run_id;
  report.sku = meta.environment.sku;
  report.candidate_branch = meta.branch;
  report.candidate_commit = meta.commit;
  report.baseline_branch = base_meta.branch;
  report.baseline_run_ids = {base_meta.run_id};
  report.fdr = policy.fdr;
  report.result = ab.gate;
  std::cout << "\n" << report::RenderTable(report);
  if (auto s = report::WriteReportFiles(report, config.markdown_file, config.junit_file,
                                        config.json_file);
      !s.ok()) {
    return Fail(s, "cannot write the report");
  }

  if (!offline) {
    std::vector<CaseResult> base_cases, cand_cases;
    for (const CasePair& p : ab.pairs) {
      base_cases.push_back(p.baseline);
      cand_cases.push_back(p.candidate);
    }
    CoordinatorClient client(*client_options);
    if (auto s = client.RegisterAgent(meta.agent_name, probe.hostname, PERFGATE_VERSION); !s.ok()) {
      return Fail(s, "cannot register with the coordinator");
    }
    if (auto s = SendCompleteRun(client, base_meta, base_cases); !s.ok()) {
      return Fail(s.status(), "cannot send the baseline side");
    }
    if (auto s = SendCompleteRun(client, meta, cand_cases); !s.ok()) {
      return Fail(s.status(), "cannot send the candidate side");
    }
    std::cout << "baseline run_id: " << base_meta.run_id << "\n"
              << "candidate run_id: " << meta.run_id << "\n"
              << "re-gate on the coordinator: perfgate gate --mode ab --run " << meta.run_id
              << " --baseline-run " << base_meta.run_id << " --policy "
              << (config.policy_file.empty() ? "POLICY.yaml" : config.policy_file) << "\n";
  }
  return report::ExitCode(report);
}

}  // namespace perfgate::agent
