// The small commands of perfgate-agent: `list` (the cases the selection
// offers), `probe` (what this machine reports) and `sample` (the worker `ab`
// and `calibrate` run: one case, its result file on stdout).
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "agent/agent.h"
#include "agent/command_support.h"
#include "agent/counted.h"
#include "agent/probe.h"
#include "agent/runner.h"
#include "common/identity.h"
#include "formats/result_file.h"
#include "measure/ncu.h"
#include "measure/perf_counters.h"
#include "measure/validity.h"
#include "suites/collectives/world.h"

namespace perfgate::agent {
namespace {

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

int ListCommand(const AgentConfig& config) {
  auto cases = SelectCases(config);
  if (!cases.ok()) return Fail(cases.status(), "bad selection");
  std::cout << FormatCaseList(*cases);
  return kExitPass;
}

int ProbeCommand(const AgentConfig&) {
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
  return kExitPass;
}

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
  options.slowdowns = config.slowdowns;
  options.added_work = config.added_work;
  suites::collectives::SetProcessWorld(config.world);
  // Under callgrind the probe's libraries alone (cuBLASLt's symbols) take
  // half a minute to load, and a count needs no environment.
  const ProbeResult probe = config.sample_counted || config.sample_counted_hw ? ProbeResult{} : ProbeMachine();
  if (config.sample_counted_gpu && !EnableGpuCountingRange()) {
    return Fail(absl::FailedPreconditionError("cannot load the CUDA driver's profiler calls (cuProfilerStart in "
                                              "libcuda.so.1): no NVIDIA driver here"),
                "--counted-gpu");
  }
  // Opened before the case starts its threads, so that they are counted too.
  std::unique_ptr<PerfCounters> counters;
  if (config.sample_counted_hw) {
    auto opened = PerfCounters::Open(HardwareEvents());
    if (!opened.ok()) return Fail(opened.status(), "--counted-hw");
    counters = *std::move(opened);
    SetCountingCounters(counters.get());
  }
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
  if (counters != nullptr && result.status == CaseStatus::kOk) {
    // Every sample was counted, one iteration each (the engine's StartCounting).
    auto counts = counters->PerIteration(static_cast<double>(result.samples.size()));
    if (!counts.ok()) return Fail(counts.status(), "--counted-hw");
    result = WithCountedMetrics(std::move(result), *counts);
  }
  absl::Status written = WriteAll(result_fd, WriteResultJson(meta, {result}));
  close(result_fd);
  if (!written.ok()) return Fail(written, "sample");
  return kExitPass;
}

}  // namespace perfgate::agent
