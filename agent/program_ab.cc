#include "agent/program_ab.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/process.h"
#include "common/elapsed.h"

namespace perfgate::agent {
namespace {

}  // namespace

std::vector<std::string> ExpandSideCommand(const std::vector<std::string>& argv, const std::string& out,
                                           unsigned samples) {
  return ExpandPlaceholders(argv, {{kOutPlaceholder, out}, {kSamplesPlaceholder, std::to_string(samples)}});
}

CommandProgram::CommandProgram(std::vector<std::string> argv, double timeout_s, std::string work_dir)
    : argv_(std::move(argv)), timeout_s_(timeout_s), work_dir_(std::move(work_dir)) {}

bool CommandProgram::TakesSamples() const { return NamesPlaceholder(argv_, kSamplesPlaceholder); }

absl::StatusOr<ResultSet> CommandProgram::Run(unsigned samples) {
  const bool to_file = NamesPlaceholder(argv_, kOutPlaceholder);
  const std::string out = to_file ? absl::StrCat(work_dir_, "/block-", ++blocks_, ".out") : "";
  const std::string shown = absl::StrJoin(argv_, " ");
  ProcessOptions options;
  options.capture_stdout = !to_file;
  options.timeout_s = timeout_s_;
  auto ran = RunProcess(ExpandSideCommand(argv_, out, samples), options);
  if (!ran.ok()) return ran.status();
  if (ran->timed_out || ran->exit_code != 0) {
    std::remove(out.c_str());
    return absl::FailedPreconditionError(absl::StrCat("'", shown, "' ", DescribeExit(*ran, timeout_s_),
                                                      " (its messages are above)"));
  }
  if (!to_file) {
    if (ran->out.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", shown, "' printed nothing on stdout; a command without ", kOutPlaceholder,
          " must print its result there (e.g. --benchmark_format=json), else name its result file ", kOutPlaceholder));
    }
    return ParseResultText(ran->out, absl::StrCat("stdout of '", shown, "'"));
  }
  std::error_code size_error;
  const auto size = std::filesystem::file_size(out, size_error);
  if (size_error || size == 0) {
    std::remove(out.c_str());
    return absl::FailedPreconditionError(absl::StrCat("'", shown, "' exited with 0 but wrote no result ",
                                                      size_error ? "file" : "(an empty file)", " where ",
                                                      kOutPlaceholder, " said (", out, ")"));
  }
  auto set = ReadResultFile(out);
  std::remove(out.c_str());
  if (!set.ok()) {
    return absl::Status(set.status().code(), absl::StrCat("the result file of '", shown, "': ", set.status().message()));
  }
  return set;
}

namespace {

// The job as the pilot found it: its cases, those the pilot reported as
// failed or skipped, and the samples a block asks for.
struct ProgramJob {
  std::vector<AbCase> cases;
  std::map<std::string, CaseResult> pilot_not_ok;
  unsigned samples = 0;
};

// One sample's seconds, on average over the pilot's cases: their own timed
// seconds where the format tells them (Google Benchmark's iterations of
// real_time, hyperfine's runs, pytest-benchmark's rounds), so that a
// program's start (an interpreter, a test collector) does not shrink the
// blocks; else `wall_per_sample`, the pilot's wall time over its samples.
double SecondsPerSample(const ResultSet& pilot, double wall_per_sample) {
  double sum = 0;
  size_t cases = 0;
  for (const CaseResult& c : pilot.cases) {
    if (c.status != CaseStatus::kOk || c.samples.empty()) continue;
    if (c.sample_seconds <= 0) return wall_per_sample;
    sum += c.sample_seconds / static_cast<double>(c.samples.size());
    ++cases;
  }
  return cases == 0 ? wall_per_sample : sum / static_cast<double>(cases);
}

ProgramJob JobOf(const ResultSet& pilot, unsigned pilot_samples, double pilot_s, bool takes_samples,
                 const AbOptions& options) {
  ProgramJob job;
  size_t ok = 0;
  for (const CaseResult& c : pilot.cases) {
    job.cases.push_back({c.benchmark, c.metrics});
    if (c.status == CaseStatus::kOk) {
      ++ok;
    } else {
      job.pilot_not_ok.emplace(c.benchmark.Key(), c);
    }
  }
  if (options.fixed_block_samples > 0) {
    job.samples = options.fixed_block_samples;
  } else if (takes_samples && ok > 0) {
    job.samples = BlockSamplesFor(SecondsPerSample(pilot, pilot_s / static_cast<double>(pilot_samples * ok)), options);
  }
  return job;
}

// A program's blocks: one run of a side measures every case, and each
// case of it is pooled into its pair.
class ProgramBlocks final : public BlockSource {
 public:
  ProgramBlocks(const ProgramJob& job, Program& baseline, Program& candidate, std::ostream& log)
      : job_(job), baseline_(baseline), candidate_(candidate), log_(log) {}

  // One pass over the cases at `which`, through the round engine; given
  // `resume`, their pairs measured so far, it goes on from them.
  MeasuredCases Measure(const std::vector<size_t>& which, const AbOptions& options, double budget_s, double most_s,
                        const DecidedFn& decided, const std::vector<CasePair>* resume = nullptr) {
    const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    if (resume != nullptr) return MeasureRounds(*resume, *this, options, budget_s, decided, most_s, start);
    std::vector<CasePair> pairs;
    for (size_t i : which) {
      pairs.push_back(StartPair(job_.cases[i]));
      if (auto it = job_.pilot_not_ok.find(pairs.back().key); it != job_.pilot_not_ok.end()) {
        AddBlock(&pairs.back(), AbRole::kBaseline, it->second);
      }
    }
    return MeasureRounds(std::move(pairs), *this, options, budget_s, decided, most_s, start);
  }

  std::string Block(AbRole role, unsigned round, std::vector<CasePair>* pairs) override {
    const std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
    auto set = (role == AbRole::kBaseline ? baseline_ : candidate_).Run(job_.samples);
    log_ << "    round " << round + 1 << ", " << ToString(role) << ": "
         << (set.ok() ? absl::StrFormat("%.1f s", SecondsSince(t)) : std::string("failed")) << "\n"
         << std::flush;
    if (!set.ok()) return absl::StrCat(ToString(role), " side, round ", round + 1, ": ", set.status().message());
    std::map<std::string, CaseResult*> by_key;
    for (CaseResult& c : set->cases) by_key.try_emplace(c.benchmark.Key(), &c);
    for (CasePair& p : *pairs) {
      if (p.stopped == StopReason::kFailed) continue;
      auto it = by_key.find(p.key);
      if (it == by_key.end()) {
        FailPair(&p, role, CaseStatus::kFailed, "its result file has no such case in this block");
      } else {
        AddBlock(&p, role, std::move(*it->second));
      }
    }
    return "";
  }

 private:
  const ProgramJob& job_;
  Program& baseline_;
  Program& candidate_;
  std::ostream& log_;
};

}  // namespace

AbResult RunProgramAb(Program& baseline, Program& candidate, const gate::Policy& policy, const std::string& sku,
                      const AbOptions& options, std::ostream& log) {
  const std::chrono::steady_clock::time_point job_start = std::chrono::steady_clock::now();
  // One sample a case: enough to size the blocks by time, and a program of
  // seconds a run spends seconds, not a fifth of its budget, on the pilot.
  const unsigned pilot_samples = options.fixed_block_samples > 0 ? options.fixed_block_samples : 1;
  log << "  pilot (baseline, not kept): " << std::flush;
  auto pilot = baseline.Run(pilot_samples);
  if (!pilot.ok()) {
    log << "failed\n";
    AbOptions once = options;
    once.confirm = false;
    AbResult failed = MeasureAndDecide({}, policy, sku, once, [](const std::vector<size_t>&, const std::vector<CasePair>*, MeasurePass) {
      return MeasuredCases{};
    });
    failed.error = absl::StrCat("baseline side, pilot: ", pilot.status().message());
    return failed;
  }
  const ProgramJob job = JobOf(*pilot, pilot_samples, SecondsSince(job_start), baseline.TakesSamples(), options);
  log << job.cases.size() << " cases ("  << pilot->format << "), "
      << (job.samples > 0 ? absl::StrCat(job.samples, " samples a case a block") : std::string("blocks as the program makes them"))
      << "\n" << std::flush;
  const size_t passes = options.confirm ? 2 : 1;
  const unsigned looks = gate::StopRuleLooks(options.min_rounds, options.max_rounds);
  ProgramBlocks blocks(job, baseline, candidate, log);
  auto measure = [&](const std::vector<size_t>& which, const std::vector<CasePair>* first, MeasurePass pass) {
    // The case budget counts per case; the cases of a program share its
    // blocks, so measuring on spends what the first pass left of them all.
    AbOptions whole = options;
    const size_t counted = pass == MeasurePass::kExtension ? job.cases.size() : which.size();
    whole.case_budget_s = options.case_budget_s * static_cast<double>(std::max<size_t>(counted, 1));
    const CasePair* earlier = first == nullptr || first->empty() ? nullptr : &first->front();
    const bool confirming = Confirms(pass);
    const size_t left = confirming ? 1 : passes;
    const double budget = MeasurementBudget(whole, SecondsSince(job_start), left, earlier, pass);
    if (pass == MeasurePass::kConfirmation) log << "  confirming " << which.size() << " case(s):\n" << std::flush;
    if (Resumes(pass)) {
      if (budget <= 0) return MeasuredCases{*first, ""};
      log << (confirming ? "  confirming, measuring on " : "  measuring on ") << which.size()
          << " undecided case(s):\n" << std::flush;
    }
    MeasuredCases m = blocks.Measure(which, options, budget, JobShare(whole, SecondsSince(job_start), left),
                                     [&](const CasePair& so_far) {
                                       return CaseDecided(so_far, policy, sku, job.cases.size(), looks);
                                     },
                                     Resumes(pass) ? first : nullptr);
    for (const CasePair& p : m.pairs) {
      log << "  " << p.key << ": ";
      LogPair(p, log);
    }
    return m;
  };
  return MeasureAndDecide(job.cases, policy, sku, options, measure);
}

}  // namespace perfgate::agent
