// `perfgate-agent run`: measure the selected cases and upload each as it
// finishes (client/upload.h), or only write the result file when offline.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/agent.h"
#include "agent/command_support.h"
#include "agent/counted.h"
#include "agent/probe.h"
#include "common/process.h"
#include "agent/run_count.h"
#include "agent/runner.h"
#include "client/upload.h"
#include "formats/result_file.h"
#include "measure/validity.h"
#include "suites/collectives/world.h"

namespace perfgate::agent {
namespace {

using client::RunUpload;

constexpr int kGoOn = -1;  // a step's result: the command goes on

// SIGTERM (Slurm's scancel and time limit, a CI job cancelled) or SIGINT:
// the case being measured ends, then what was measured is written to
// --output and the run is closed as failed, instead of the process dying
// with nothing written.
std::atomic<int> g_stop_signal{0};

void OnStopSignal(int sig) { g_stop_signal.store(sig); }

// While measuring, the signals are caught; afterwards (the result file
// written, the close being sent) they end the process as usual.
void CatchStopSignals(bool on) {
  struct sigaction action {};
  action.sa_handler = on ? OnStopSignal : SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

absl::Status StopRequested() {
  const int sig = g_stop_signal.load();
  if (sig == 0) return absl::OkStatus();
  return absl::CancelledError(absl::StrCat("stopped by signal ", sig, " (", strsignal(sig), ")"));
}

void PrintCase(const CaseResult& r, const std::string& prefix) {
  std::cout << prefix << r.benchmark.Key() << ": " << r.samples.size() << " samples, " << ToString(r.status)
            << (r.reason.empty() ? "" : " (" + r.reason + ")") << "\n"
            << std::flush;
}

// A rank other than 0: measures its share of every case in step with rank 0,
// prints what it saw and reports to no coordinator.
int RunFollower(const std::vector<suites::CaseInstance>& cases, const RunnerOptions& options, int rank) {
  std::vector<CaseResult> done;
  bool case_failed = false;
  absl::Status s = RunCases(cases, options, [&](CaseResult r) -> absl::Status {
    PrintCase(r, "  rank " + std::to_string(rank) + " ");
    case_failed = case_failed || r.status == CaseStatus::kFailed;
    done.push_back(std::move(r));
    return absl::OkStatus();
  });
  if (!s.ok()) return Fail(s, "the run failed");
  std::cout << "\n" << FormatSummaryTable(done) << "\n";
  return case_failed ? kExitRegression : kExitPass;
}

RunnerOptions RunnerOptionsOf(const AgentConfig& config) {
  RunnerOptions options;
  options.engine = config.engine;
  options.engine.max_noise = config.max_noise_pct / 100.0;
  options.time_budget_s = config.time_budget_s.value_or(options.time_budget_s);
  options.slowdowns = config.slowdowns;
  options.added_work = config.added_work;
  return options;
}

// The run of this agent, with its commit's ancestors, nearest first, so that
// a gate can restrict its baseline to the merge-base and what came before it.
RunMeta MetaOfRun(const AgentConfig& config, const ProbeResult& probe) {
  RunMeta meta = RunMetaOf(config, probe);
  if (!meta.commit.empty()) {
    const std::string parents = Git({"rev-list", "--max-count=200", "--end-of-options", meta.commit + "~1"});
    meta.parent_commits = absl::StrSplit(parents, '\n', absl::SkipEmpty());
  }
  return meta;
}

void PrintHeader(const AgentConfig& config, const RunMeta& meta, const ProbeResult& probe, size_t cases) {
  std::cout << "perfgate-agent: sku " << meta.environment.sku << ", " << cases << " cases, coordinator "
            << (config.offline ? "none (offline)" : config.coordinator) << "\n";
  if (!probe.cuda.available) std::cout << "perfgate-agent: no GPU: " << probe.cuda.note << "\n";
  if (probe.cuda.available && probe.nvml_status != "ok") {
    std::cout << "perfgate-agent: NVML " << probe.nvml_status << "\n";
  }
}

// Every batch goes to the spool before the wire, so nothing measured is lost
// if the coordinator goes away; an unreachable one is measured on into the spool.
int StartUpload(client::CoordinatorClient& client, const RunMeta& meta, const AgentConfig& config,
                std::optional<RunUpload>* out) {
  auto upload = RunUpload::Create(client, meta, config.spool_dir);
  if (!upload.ok()) return Fail(upload.status(), "cannot write the spool (set --spool)");
  upload->OnOffline([](const absl::Status& s) {
    std::cerr << "perfgate-agent: coordinator or its database unavailable (" << s.message()
              << "); measuring on into the spool and retrying with back-off\n";
  });
  upload->OnOnline([] { std::cerr << "perfgate-agent: coordinator back; the spooled batches are sent\n"; });
  upload->SetReconnectWindow(config.reconnect_s);
  // A refusal does not stop the run: it is measured on into the spool and
  // the result file, and Close reports it.
  if (auto s = upload->Register(meta.node, PERFGATE_VERSION); !s.ok()) {
    return Fail(s, "coordinator refused the agent");
  }
  if (auto s = upload->Open(); !s.ok()) return Fail(s, "coordinator refused the run");
  out->emplace(std::move(*upload));
  return kGoOn;
}

struct Measured {
  std::vector<CaseResult> done;
  bool case_failed = false;
};

// Runs the cases, each sent as it finishes (when there is an upload).
absl::Status Measure(const std::vector<suites::CaseInstance>& cases, const RunnerOptions& options,
                     RunUpload* upload, Measured* m) {
  return RunCases(cases, options, [&](CaseResult r) -> absl::Status {
    PrintCase(r, "  ");
    m->case_failed = m->case_failed || r.status == CaseStatus::kFailed;
    absl::Status sent = upload != nullptr ? upload->Send(r) : absl::OkStatus();
    m->done.push_back(std::move(r));
    if (!sent.ok()) return sent;
    return StopRequested();
  });
}

// The summary, the result file, the close and the run id file; a run the
// coordinator did not get stays in the spool (exit 2).
int Finish(const AgentConfig& config, const RunMeta& meta, const std::vector<std::string>& invalid,
           const Measured& m, RunUpload* upload) {
  std::cout << "\n" << FormatSummaryTable(m.done) << "\n";
  // Written before the coordinator is told, so the file exists whatever it answers.
  if (!config.output_file.empty()) {
    if (auto s = WriteResultFile(config.output_file, meta, m.done); !s.ok()) {
      return Fail(s, "cannot write the result file");
    }
    // Flushed: a log follower (or a job about to be stopped) sees it now.
    std::cout << "perfgate-agent: results written to " << config.output_file << std::endl;
  }
  for (const std::string& reason : invalid) std::cout << "perfgate-agent: invalid for gating: " << reason << "\n";
  std::optional<uint64_t> stored;
  if (upload != nullptr) {
    auto closed = upload->Close(invalid);
    if (!closed.ok()) {
      if (!config.output_file.empty()) std::cerr << "perfgate-agent: every result is in " << config.output_file << "\n";
      return Fail(closed.status(), "the coordinator refused the run");
    }
    stored = *closed;
    if (stored) std::cout << "run_id: " << meta.run_id << "  (" << *stored << " samples stored)\n";
  }
  if (!config.run_id_file.empty()) {
    std::ofstream out(config.run_id_file);
    out << meta.run_id << "\n";
    if (!out) return Fail(absl::InternalError(config.run_id_file), "cannot write the run id file");
  }
  if (upload != nullptr && !stored) {
    if (auto s = upload->KeepInSpool(); !s.ok()) return Fail(s, "cannot write the spool");
    std::cerr << "perfgate-agent: run " << meta.run_id << " is kept in " << upload->spool_path()
              << "; `perfgate-agent replay` sends it once the coordinator is back\n";
    return kExitError;
  }
  return m.case_failed ? kExitRegression : kExitPass;
}

}  // namespace

int RunCommand(const AgentConfig& config) {
  auto cases = SelectSomeCases(config);
  if (!cases.ok()) return Fail(cases.status(), "bad selection");
  RunnerOptions options = RunnerOptionsOf(config);
  suites::collectives::SetProcessWorld(config.world);
  if (config.world.rank != 0) {
    std::cout << "perfgate-agent: rank " << config.world.rank << " of " << config.world.size << ", "
              << cases->size() << " cases; rank 0 reports them\n" << std::flush;
    return RunFollower(*cases, options, config.world.rank);
  }
  // Counters a machine does not have are said before anything is measured.
  if (absl::Status can = CheckCountTool(CountToolOf(config.run_count)); !can.ok()) return Fail(can, "bad --count");
  const ProbeResult probe = ProbeMachine();
  const std::vector<DeviceHealth> health_at_start =
      HealthOf(probe.cuda, probe.gpu_facts, static_cast<uint32_t>(getpid()));
  // Device cases run on CUDA device 0; its clocks mark their samples.
  std::unique_ptr<NvmlThrottleSource> throttle = ThrottleOf(probe);
  options.throttle = throttle.get();
  const RunMeta meta = MetaOfRun(config, probe);
  PrintHeader(config, meta, probe, cases->size());

  // Offline, nothing is sent or spooled: the result file is the only copy.
  client::CoordinatorClient client(config.client);
  std::optional<RunUpload> upload;
  if (!config.offline) {
    if (int rc = StartUpload(client, meta, config, &upload); rc != kGoOn) return rc;
  }
  // Outside a git checkout there is no commit: say so rather than leave a gap.
  std::cout << "perfgate-agent: run " << meta.run_id << " (branch " << meta.branch
            << (meta.commit.empty() ? ", no commit" : " @ " + meta.commit.substr(0, 12)) << ")\n" << std::flush;
  RunUpload* sending = upload ? &*upload : nullptr;
  Measured m;
  CatchStopSignals(true);
  absl::Status measured = Measure(*cases, options, sending, &m);
  CatchStopSignals(false);
  if (absl::Status s = measured; !s.ok()) {
    // What was measured is written all the same; the spool keeps the batches.
    if (!config.output_file.empty() && WriteResultFile(config.output_file, meta, m.done).ok()) {
      std::cerr << "perfgate-agent: the results measured so far are in " << config.output_file << "\n";
    }
    if (sending == nullptr) return Fail(s, "the run failed");
    sending->Abandon(s);  // a failed run never serves as a baseline
    return Fail(s, "the run failed");
  }
  // Read right after the last case, while the link still carries its load.
  const std::vector<std::string> invalid =
      InvalidForGatingReasons(health_at_start, ProbeHealth(probe), ThrottleCounts(m.done));
  if (config.run_count.empty()) return Finish(config, meta, invalid, m, sending);
  // The counts follow the timed cases as further parts of them; a count
  // that cannot be taken leaves the timed run whole and exits 2 after it.
  const absl::Status counted = CountRunCases(config, *cases, &m.done, [&](const CaseResult& part) {
    return sending != nullptr ? sending->Send(part) : absl::OkStatus();
  }, std::cout);
  if (!counted.ok()) std::cerr << "perfgate-agent: --count: " << counted.message() << "; the run goes on without\n";
  const int rc = Finish(config, meta, invalid, m, sending);
  return counted.ok() || rc != kExitPass ? rc : kExitError;
}

}  // namespace perfgate::agent
