#include "agent/calibrate.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/coordinator_client.h"
#include "agent/command_support.h"
#include "agent/probe.h"
#include "common/status_macros.h"
#include "gate/calibration.h"
#include "wire/convert.h"

namespace perfgate::agent {
namespace {

using client::CoordinatorClient;

bool SameMetricNames(const std::vector<MetricSpec>& a, const std::vector<MetricSpec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name) return false;
  }
  return true;
}

// How a process that yielded no usable block ended, for the case's row.
void Stop(const CaseResult& block, const AbCase& c, unsigned process, CaseCalibration* out) {
  out->entries.clear();
  if (block.status == CaseStatus::kOk) {
    out->status = CaseStatus::kFailed;
    out->reason = absl::StrCat("process ", process, " reported other metrics than ", c.id.Key(),
                               " declares here");
    return;
  }
  out->status = block.status == CaseStatus::kSkipped ? CaseStatus::kSkipped : CaseStatus::kFailed;
  out->reason = absl::StrCat(process == 0 ? std::string("pilot") : absl::StrCat("process ", process),
                             ": ", ToString(block.status), block.reason.empty() ? "" : ": ",
                             block.reason);
}

std::string UnsignedPercent(double fraction) { return absl::StrFormat("%.2f %%", fraction * 100); }

// Sends the set to the coordinator as `agent_name`; prints what it stored.
absl::Status Send(const AgentConfig& config, const CalibrationSet& set, const std::string& hostname) {
  CoordinatorClient client(config.client);
  const std::string agent_name = config.agent_name.empty() ? hostname : config.agent_name;
  PERFGATE_RETURN_IF_ERROR(client.RegisterAgent(agent_name, hostname, PERFGATE_VERSION));
  v1::PutCalibrationRequest req;
  wire::ToProto(set, agent_name, &req);
  auto stored = client.PutCalibration(req);
  PERFGATE_RETURN_IF_ERROR(stored);
  std::cout << "perfgate-agent: calibration stored on " << config.coordinator << ": " << *stored
            << " of " << set.entries.size() << " entries (node " << set.node << ", sku "
            << set.environment.sku << ", environment " << set.environment.Hash().substr(0, 12)
            << "); `perfgate calibrations` lists them\n";
  return absl::OkStatus();
}

// Calibrates every case in turn, a progress line each.
std::vector<CaseCalibration> CalibrateAll(const std::vector<AbCase>& cases, Side& side,
                                          const CalibrateOptions& options) {
  std::vector<CaseCalibration> done;
  for (const AbCase& c : cases) {
    const auto start = std::chrono::steady_clock::now();
    std::cout << "  " << c.id.Key() << ": " << std::flush;
    done.push_back(CalibrateCase(c, side, options));
    const CaseCalibration& r = done.back();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r.status == CaseStatus::kOk) {
      std::cout << options.processes << " processes of " << r.block_samples << " samples in "
                << absl::StrFormat("%.1f", seconds) << " s\n";
    } else {
      std::cout << ToString(r.status) << ": " << r.reason << "\n";
    }
    std::cout << std::flush;
  }
  return done;
}

}  // namespace

CaseCalibration CalibrateCase(const AbCase& c, Side& side, const CalibrateOptions& options) {
  CaseCalibration out;
  out.key = c.id.Key();
  auto usable = [&](const CaseResult& block) {
    return block.status == CaseStatus::kOk && SameMetricNames(block.metrics, c.metrics);
  };
  unsigned samples = options.blocks.fixed_block_samples;
  if (samples == 0) {
    const Pilot pilot = MeasurePilot(out.key, side, options.blocks);
    if (!usable(pilot.block)) {
      Stop(pilot.block, c, 0, &out);
      return out;
    }
    samples = pilot.block_samples;
  }
  out.block_samples = samples;
  std::vector<CaseResult> processes;
  for (unsigned p = 1; p <= options.processes; ++p) {
    CaseResult block = side.Measure(out.key, samples);
    if (!usable(block)) {
      Stop(block, c, p, &out);
      return out;
    }
    processes.push_back(std::move(block));
  }
  out.entries = gate::CalibrateProcesses(processes);
  if (out.entries.empty()) {
    out.status = CaseStatus::kFailed;
    out.reason = "no metric had a positive median in two or more processes (all samples throttled?)";
  }
  return out;
}

std::string RenderCalibrationTable(const std::vector<CaseCalibration>& cases,
                                   const gate::Policy& policy, const std::string& sku) {
  std::ostringstream out;
  out << absl::StrFormat("%-44s %-12s %9s %9s %12s %9s  %s\n", "benchmark", "metric", "spread",
                         "processes", "single-run", "tolerance", "fit to gate single runs");
  for (const CaseCalibration& c : cases) {
    if (c.status != CaseStatus::kOk) {
      out << absl::StrFormat("%-44s %s: %s\n", c.key, ToString(c.status), c.reason);
      continue;
    }
    for (const CalibrationEntry& e : c.entries) {
      const double tolerance = policy.Resolve(sku, e.benchmark, e.metric).tolerance;
      const double half = gate::SingleRunHalfWidth(e.spread, e.processes);
      out << absl::StrFormat("%-44s %-12s %9s %9d %12s %9s  %s\n", e.benchmark, e.metric,
                             UnsignedPercent(e.spread), e.processes, "±" + UnsignedPercent(half),
                             UnsignedPercent(tolerance),
                             gate::FitToGate(e.spread, e.processes, tolerance) ? "fit" : "not fit");
    }
  }
  out << "single-run: t(0.975, processes-1) × spread × √2, the 95 % interval of one run against one "
         "run; fit when it is within the policy's tolerance\n";
  return out.str();
}

int CalibrateCommand(const AgentConfig& config) {
  auto selected = SelectSomeCases(config);
  if (!selected.ok()) return Fail(selected.status(), "bad selection");
  auto self = SelfExecutable();
  if (!self.ok()) return Fail(self.status(), "cannot start the sample workers");
  CommandSide side({*self}, SampleWorkerArgs(config));

  const ProbeResult probe = ProbeMachine();
  const std::vector<AbCase> cases = RunnableCases(*selected, std::cout);
  CalibrateOptions options;
  options.processes = config.calibrate_processes;
  options.blocks.block_seconds = config.calibrate_block_seconds;
  std::cout << "perfgate-agent calibrate: node " << probe.hostname << ", sku " << probe.environment.sku
            << ", " << cases.size() << " cases, " << options.processes << " processes of "
            << options.blocks.block_seconds << " s each\n"
            << std::flush;

  if (cases.empty()) {
    return Fail(absl::FailedPreconditionError("none of the selected cases can run on this node"),
                "nothing to calibrate");
  }
  const std::vector<CaseCalibration> done = CalibrateAll(cases, side, options);
  CalibrationSet set;
  set.node = probe.hostname;
  set.environment = probe.environment;
  set.measured_at = std::chrono::system_clock::now();
  bool failed = false;
  for (const CaseCalibration& r : done) {
    failed = failed || r.status == CaseStatus::kFailed;
    set.entries.insert(set.entries.end(), r.entries.begin(), r.entries.end());
  }
  std::cout << "\n" << RenderCalibrationTable(done, config.policy, set.environment.sku);

  if (!config.output_file.empty()) {
    if (auto s = WriteCalibrationFile(config.output_file, set); !s.ok()) {
      return Fail(s, "cannot write the calibration file");
    }
    std::cout << "perfgate-agent: calibration written to " << config.output_file << "\n";
  }
  if (!config.offline && !set.entries.empty()) {
    if (auto s = Send(config, set, probe.hostname); !s.ok()) {
      return Fail(s, "cannot store the calibration on the coordinator");
    }
  }
  return failed || set.entries.empty() ? kExitRegression : kExitPass;
}

}  // namespace perfgate::agent
