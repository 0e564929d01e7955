#include "agent/counted.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/program_ab.h"
#include "common/process.h"
#include "formats/result_file.h"
#include "gate/counts.h"
#include "common/file_io.h"
#include "measure/counts.h"
#include "measure/ncu.h"
#include "measure/perf_counters.h"
#include "common/elapsed.h"

namespace perfgate::agent {
namespace {

// The iterations the JSON of `path` reports for case `name`, over its
// repetitions (aggregates left out); an error naming the file otherwise.
absl::StatusOr<double> IterationsOf(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not Google Benchmark's JSON (no benchmarks array)"));
  }
  double iterations = 0;
  for (const nlohmann::json& b : doc["benchmarks"]) {
    if (b.value("run_type", "iteration") != "iteration" || b.value("run_name", b.value("name", "")) != name) continue;
    if (b.contains("iterations") && b["iterations"].is_number()) iterations += b["iterations"].get<double>();
  }
  if (!(iterations > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no iterations reported for '", name, "'"));
  }
  return iterations;
}

// The totals of every callgrind file a counted run wrote (one per process
// it traced: a wrapper script and its program), summed.
absl::StatusOr<CallgrindTotals> SumCallgrindFiles(const std::string& dir, const std::string& prefix) {
  CallgrindTotals sum;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string path = entry.path().string();
    if (entry.path().filename().string().rfind(prefix, 0) != 0) continue;
    auto one = ReadCallgrindOutput(path);
    std::filesystem::remove(path, error);
    if (!one.ok()) return one.status();
    if (sum.events.empty()) sum.events = one->events, sum.totals.assign(one->events.size(), 0);
    for (size_t i = 0; i < sum.events.size(); ++i) {
      const int64_t v = one->Event(sum.events[i]);
      if (v > 0) sum.totals[i] += static_cast<uint64_t>(v);
    }
  }
  if (sum.events.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("callgrind wrote no output file in ", dir));
  }
  return sum;
}

CaseResult FailedCase(BenchmarkId id, std::string reason) {
  CaseResult r;
  r.benchmark = std::move(id);
  r.status = CaseStatus::kFailed;
  r.reason = std::move(reason);
  return r;
}

// `result` with one sample: the counted metrics of `totals` over `iterations`.
absl::StatusOr<CaseResult> WithCounts(CaseResult result, const CallgrindTotals& totals, double iterations) {
  auto counts = CountsPerIteration(totals, iterations);
  if (!counts.ok()) return counts.status();
  return WithCountedMetrics(std::move(result), *counts);
}

// `result` with one sample: the GPU counts of ncu's CSV at `path` (read,
// then removed) over `iterations`.
absl::StatusOr<CaseResult> WithGpuCounts(CaseResult result, const std::string& path, double iterations) {
  auto text = ReadWholeFile(path);
  std::error_code error;
  std::filesystem::remove(path, error);
  if (!text.ok()) return absl::FailedPreconditionError(absl::StrCat("ncu wrote no output file '", path, "'"));
  auto launches = ParseNcuCsv(*text, "ncu's output");
  if (!launches.ok()) return launches.status();
  auto counts = GpuCountsPerIteration(*launches, iterations);
  if (!counts.ok() && launches->empty()) {
    // A host case, or one whose samples copy without a kernel: no GPU count
    // (the reason says so), and the others are counted still.
    result.status = CaseStatus::kSkipped;
    result.reason = std::string(counts.status().message());
    result.samples.clear();
    return result;
  }
  if (!counts.ok()) return counts.status();
  return WithCountedMetrics(std::move(result), *counts);
}

}  // namespace

CaseResult WithCountedMetrics(CaseResult result, const std::vector<std::pair<MetricSpec, double>>& counts) {
  result.metrics.clear();
  result.samples.assign(1, Sample{});
  result.sample_seconds = 0;
  for (const auto& [spec, value] : counts) {
    result.metrics.push_back(spec);
    result.samples.front().values.push_back(value);
  }
  return result;
}

CaseResult CountPart(const CaseResult& timed, CaseResult counted) {
  uint32_t next = 0;
  for (const Sample& s : timed.samples) next = std::max(next, s.index + 1);
  counted.benchmark = timed.benchmark;
  for (Sample& s : counted.samples) s.index = next++;
  counted.status = timed.status;
  counted.reason = timed.reason;
  counted.noise = timed.noise;
  return counted;
}

std::string ExactFilter(const std::string& name) {
  std::string out = "^";
  for (char c : name) {
    if (std::string_view(".[]{}()\\*+?^$|").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out + "$";
}

std::vector<std::string> CallgrindArgv(const std::string& callgrind_out, const CountOptions& options,
                                       const std::string& toggle) {
  // Children traced: a side may be a wrapper (env, a script) around its program.
  std::vector<std::string> argv = {options.valgrind, "--tool=callgrind", "-q", "--trace-children=yes",
                                   "--collect-atstart=no", absl::StrCat("--callgrind-out-file=", callgrind_out, ".%p")};
  if (!toggle.empty()) argv.push_back(absl::StrCat("--toggle-collect=", toggle));
  if (options.simulate) {
    argv.push_back("--cache-sim=yes");
    argv.push_back("--branch-sim=yes");
  }
  return argv;
}

std::vector<std::string> CountedArgv(const std::vector<std::string>& argv, const std::string& name,
                                     const std::string& out, const std::string& callgrind_out,
                                     const CountOptions& options) {
  std::vector<std::string> full = CallgrindArgv(callgrind_out, options, options.toggle);
  for (std::string& a : ExpandSideCommand(argv, out, 1)) full.push_back(std::move(a));
  // Later flags win in Google Benchmark: these override the command's own.
  for (std::string flag : {absl::StrCat("--benchmark_filter=", ExactFilter(name)), std::string("--benchmark_min_time=1e-9"),
                           std::string("--benchmark_repetitions=1"), absl::StrCat("--benchmark_out=", out),
                           std::string("--benchmark_out_format=json")}) {
    full.push_back(std::move(flag));
  }
  return full;
}

CountedProgram::CountedProgram(std::vector<std::string> argv, CountOptions options)
    : argv_(std::move(argv)), options_(std::move(options)) {}

absl::StatusOr<std::vector<std::string>> CountedProgram::ListCases() {
  std::vector<std::string> argv = ExpandSideCommand(argv_, absl::StrCat(options_.work_dir, "/list.json"), 1);
  argv.push_back("--benchmark_list_tests=true");
  ProcessOptions run;
  run.timeout_s = options_.timeout_s;
  auto ran = RunProcess(argv, run);
  const std::string shown = absl::StrJoin(argv_, " ");
  if (!ran.ok()) return ran.status();
  if (ran->timed_out || ran->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat("'", shown, " --benchmark_list_tests=true' ",
                                                      DescribeExit(*ran, options_.timeout_s)));
  }
  std::vector<std::string> cases;
  for (absl::string_view line : absl::StrSplit(ran->out, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) cases.emplace_back(line);
  }
  if (cases.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("'", shown,
                                                      "' lists no case (--benchmark_list_tests=true); is it a "
                                                      "Google Benchmark program, and does its filter match?"));
  }
  return cases;
}

absl::StatusOr<CaseResult> CountedProgram::Count(const std::string& name) {
  const std::string base = absl::StrCat(options_.work_dir, "/counted-", ++runs_);
  const std::string out = base + ".json";
  const std::string prefix = absl::StrCat("counted-", runs_, ".callgrind");
  ProcessOptions run;
  run.capture_stdout = false;
  run.timeout_s = options_.timeout_s;
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  auto ran = RunProcess(CountedArgv(argv_, name, out, absl::StrCat(options_.work_dir, "/", prefix), options_), run);
  if (!ran.ok()) return ran.status();
  const double seconds = SecondsSince(start);
  auto totals = SumCallgrindFiles(options_.work_dir, prefix);
  const std::string shown = absl::StrCat("'", absl::StrJoin(argv_, " "), "' under callgrind");
  if (ran->timed_out || ran->exit_code != 0) {
    std::filesystem::remove(out);
    return FailedCase(IdOf(name), absl::StrCat(shown, " ", DescribeExit(*ran, options_.timeout_s),
                                         " (its messages are above)"));
  }
  if (!totals.ok()) return totals.status();
  auto set = ReadResultFile(out);
  auto iterations = IterationsOf(out, name);
  std::filesystem::remove(out);
  if (!set.ok()) return set.status();
  if (set->cases.size() != 1) {
    return FailedCase(IdOf(name), absl::StrCat(shown, " reported ", set->cases.size(), " cases for the filter ",
                                         ExactFilter(name), ", not one"));
  }
  CaseResult result = std::move(set->cases.front());
  result.seconds = seconds;
  if (result.status != CaseStatus::kOk) return result;
  if (!iterations.ok()) return iterations.status();
  return WithCounts(std::move(result), *totals, *iterations);
}

BenchmarkId CountedProgram::IdOf(const std::string& name) const { return {"gbench", name, {}}; }

namespace {

// The worker's arguments with its per-case time limit (`--timeout`, the
// timed run's) raised to the counted process's own: under callgrind a case
// runs tens of times slower, and a limit sized for its timed run would stop
// it before it has counted a sample.
std::vector<std::string> WithCountedTimeout(std::vector<std::string> args, double timeout_s) {
  if (auto t = std::find(args.begin(), args.end(), "--timeout"); t != args.end() && t + 1 != args.end()) {
    *(t + 1) = absl::StrCat(timeout_s);
  }
  return args;
}

}  // namespace

CountedAgent::CountedAgent(std::vector<std::string> argv, std::vector<std::string> extra_args,
                           std::vector<BenchmarkId> cases, unsigned samples, CountOptions options)
    : argv_(std::move(argv)),
      extra_args_(WithCountedTimeout(std::move(extra_args), options.timeout_s)),
      cases_(std::move(cases)),
      samples_(samples),
      options_(std::move(options)) {}

absl::StatusOr<std::vector<std::string>> CountedAgent::ListCases() {
  std::vector<std::string> keys;
  for (const BenchmarkId& id : cases_) keys.push_back(id.Key());
  return keys;
}

std::string CountedAgent::ToolName() const {
  switch (options_.tool) {
    case CountTool::kNcu:
      return "Nsight Compute";
    case CountTool::kHardware:
      return "the CPU's hardware counters";
    case CountTool::kCallgrind:
      break;
  }
  return "callgrind";
}

BenchmarkId CountedAgent::IdOf(const std::string& name) const {
  for (const BenchmarkId& id : cases_) {
    if (id.Key() == name) return id;
  }
  return {"", name, {}};
}

CountTool CountToolOf(const std::string& count) {
  if (count == "gpu") return CountTool::kNcu;
  if (count == "hw") return CountTool::kHardware;
  return CountTool::kCallgrind;
}

absl::Status CheckCountTool(CountTool tool) {
  if (tool != CountTool::kHardware) return absl::OkStatus();
  return PerfCounters::Open(HardwareEvents()).status();
}

absl::StatusOr<CaseResult> CountedAgent::Count(const std::string& name) {
  const CountTool kind = options_.tool;
  const std::string tool = ToolName();
  const std::string prefix = absl::StrCat("agent-", ++runs_, kind == CountTool::kNcu ? ".ncu" : ".callgrind");
  const std::string out = absl::StrCat(options_.work_dir, "/", prefix);
  std::vector<std::string> argv = kind == CountTool::kNcu        ? NcuArgv(options_.ncu, out)
                                  : kind == CountTool::kCallgrind ? CallgrindArgv(out, options_, "")
                                                                  : std::vector<std::string>{};
  argv.insert(argv.end(), argv_.begin(), argv_.end());
  for (const std::string& a : {std::string("sample"), std::string("--case"), name, std::string("--samples"),
                               std::to_string(samples_)}) {
    argv.push_back(a);
  }
  argv.push_back(kind == CountTool::kHardware ? "--counted-hw" : "--counted");
  if (kind == CountTool::kNcu) argv.push_back("--counted-gpu");
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  ProcessOptions run;
  run.timeout_s = options_.timeout_s;
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  auto ran = RunProcess(argv, run);
  if (!ran.ok()) return ran.status();
  // Callgrind's files are read (and removed) whatever the exit.
  auto totals = kind != CountTool::kCallgrind ? absl::StatusOr<CallgrindTotals>(CallgrindTotals{})
                                              : SumCallgrindFiles(options_.work_dir, prefix);
  const std::string shown = absl::StrCat("'", absl::StrJoin(argv_, " "), " sample' counted by ", tool);
  if (ran->timed_out || ran->exit_code != 0) {
    return FailedCase(IdOf(name), absl::StrCat(shown, " ", DescribeExit(*ran, options_.timeout_s),
                                               " (its messages are above)"));
  }
  if (!totals.ok()) return totals.status();
  auto parsed = ParseResultText(ran->out, absl::StrCat("output of ", shown));
  if (!parsed.ok()) return parsed.status();
  for (CaseResult& c : parsed->cases) {
    if (c.benchmark.Key() != name) continue;
    c.seconds = SecondsSince(start);
    if (c.status != CaseStatus::kOk || kind == CountTool::kHardware) return std::move(c);
    if (kind == CountTool::kNcu) return WithGpuCounts(std::move(c), out, static_cast<double>(samples_));
    return WithCounts(std::move(c), *totals, static_cast<double>(samples_));
  }
  return FailedCase(IdOf(name), absl::StrCat(shown, " printed no result for ", name));
}

namespace {

// Counts `name` `processes` times on `program` into `side`; the error that
// ends counting, else "".
std::string CountSide(Counter& program, const std::string& name, unsigned processes, AbRole role,
                      CasePair* pair) {
  for (unsigned p = 0; p < processes && pair->stopped != StopReason::kFailed; ++p) {
    auto counted = program.Count(name);
    if (!counted.ok()) return absl::StrCat(ToString(role), " side, ", name, ": ", counted.status().message());
    if (p == 0 && pair->baseline_blocks.empty() && pair->candidate_blocks.empty()) {
      pair->key = counted->benchmark.Key();
      for (CaseResult* r : {&pair->baseline, &pair->candidate}) {
        r->benchmark = counted->benchmark;
        r->metrics = counted->metrics;
      }
    }
    AddBlock(pair, role, *std::move(counted));
  }
  return "";
}

}  // namespace

AbResult RunCountedAb(Counter& baseline, Counter& candidate, const gate::Policy& policy,
                      const std::string& sku, unsigned processes, std::ostream& log) {
  AbResult result;
  auto base_cases = baseline.ListCases();
  auto cand_cases = candidate.ListCases();
  if (!base_cases.ok() || !cand_cases.ok()) {
    result.error = base_cases.ok() ? absl::StrCat("candidate side: ", cand_cases.status().message())
                                   : absl::StrCat("baseline side: ", base_cases.status().message());
    return result;
  }
  std::vector<std::string> names = *base_cases;
  const std::set<std::string> on_base(base_cases->begin(), base_cases->end());
  const std::set<std::string> on_cand(cand_cases->begin(), cand_cases->end());
  for (const std::string& n : *cand_cases) {
    if (on_base.count(n) == 0) names.push_back(n);
  }
  log << "  counting " << names.size() << " case(s) by " << baseline.ToolName() << ", " << processes
      << " process(es) a side\n"
      << std::flush;
  for (const std::string& name : names) {
    const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    CasePair pair = StartPair({(on_base.count(name) != 0 ? baseline : candidate).IdOf(name), {}});
    pair.baseline.status = pair.candidate.status = CaseStatus::kOk;
    for (auto [program, role, listed] : {std::tuple(&baseline, AbRole::kBaseline, on_base.count(name) != 0),
                                         std::tuple(&candidate, AbRole::kCandidate, on_cand.count(name) != 0)}) {
      if (!listed) {
        FailPair(&pair, role, CaseStatus::kFailed, "the program lists no such case");
        break;
      }
      result.error = CountSide(*program, name, processes, role, &pair);
      if (!result.error.empty()) break;
    }
    if (!result.error.empty()) break;
    pair.rounds = processes;
    if (pair.stopped == StopReason::kNone) pair.stopped = StopReason::kCounted;
    FinishPair(&pair, SecondsSince(start));
    log << "  " << pair.key << ": ";
    if (pair.candidate.status == CaseStatus::kOk) {
      log << absl::StrFormat("counted in %u process(es) a side, %.1f s\n", processes, pair.seconds) << std::flush;
    } else {
      LogPair(pair, log);
    }
    result.pairs.push_back(std::move(pair));
  }
  std::vector<CaseResult> base, cand;
  for (const CasePair& p : result.pairs) {
    base.push_back(p.baseline);
    cand.push_back(p.candidate);
  }
  result.gate = gate::JudgeCounts(base, cand, policy, sku);
  return result;
}

}  // namespace perfgate::agent
