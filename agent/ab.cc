#include "agent/ab.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "agent/ab_evidence.h"
#include "common/process.h"
#include "formats/result_file.h"
#include "common/stats.h"
#include "suites/seed.h"
#include "common/elapsed.h"

namespace perfgate::agent {

const char* ToString(AbRole role) { return role == AbRole::kBaseline ? "baseline" : "candidate"; }

std::vector<AbRole> BlockOrder(unsigned round, uint64_t seed) {
  if ((suites::SplitMix64(seed + suites::kGoldenGamma * round) & 1) == 0) {
    return {AbRole::kBaseline, AbRole::kCandidate};
  }
  return {AbRole::kCandidate, AbRole::kBaseline};
}

std::vector<int> RoundCpus(unsigned round, unsigned count, const std::vector<int>& allowed) {
  if (count == 0 || count >= allowed.size()) return {};
  std::vector<int> cpus;
  const size_t first = (static_cast<size_t>(round) * count) % allowed.size();
  for (size_t i = 0; i < count; ++i) cpus.push_back(allowed[(first + i) % allowed.size()]);
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

unsigned PinCountFor(const AbCase& c, int pin) {
  if (pin >= 0) return static_cast<unsigned>(pin);
  if (c.host_cpus > 0) return c.host_cpus;
  const BenchmarkId& id = c.id;
  const auto backend = id.params.find("backend");
  if (backend != id.params.end() && backend->second != "host") return 0;
  const auto threads = id.params.find("threads");
  unsigned n = 0;
  if (threads == id.params.end() || !absl::SimpleAtoi(threads->second, &n)) return 0;
  return n;
}

uint64_t OrderSeed(uint64_t order_seed) {
  if (order_seed != 0) return order_seed;
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

namespace {

CaseResult FailedCase(std::string reason) {
  CaseResult r;
  r.status = CaseStatus::kFailed;
  r.reason = std::move(reason);
  return r;
}

// Reason a side's block did not yield samples, prefixed with the side.
std::string SideReason(AbRole role, const std::string& reason) {
  return absl::StrCat(ToString(role), " side: ", reason);
}

}  // namespace

CommandSide::CommandSide(std::vector<std::string> argv, std::vector<std::string> extra_args)
    : argv_(std::move(argv)), extra_args_(std::move(extra_args)) {}

CaseResult CommandSide::Measure(const std::string& key, unsigned samples) {
  std::vector<std::string> argv = argv_;
  for (const std::string& a : {std::string("sample"), std::string("--case"), key,
                               std::string("--samples"), std::to_string(samples)}) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  const std::string shown = absl::StrJoin(argv_, " ");
  auto ran = CaptureOutput(argv);
  if (!ran.ok()) return FailedCase(std::string(ran.status().message()));
  if (ran->first != 0) {
    return FailedCase(absl::StrCat("'", shown, " sample' exited with ", ran->first,
                                        " (its messages are above)"));
  }
  auto parsed = ParseResultText(ran->second, absl::StrCat("output of '", shown, " sample'"));
  if (!parsed.ok()) return FailedCase(std::string(parsed.status().message()));
  for (CaseResult& c : parsed->cases) {
    if (c.benchmark.Key() == key) return std::move(c);
  }
  return FailedCase(absl::StrCat("'", shown, " sample' printed no result for ", key));
}

namespace {

bool SameMetrics(const std::vector<MetricSpec>& a, const std::vector<MetricSpec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name) return false;
  }
  return true;
}

// Seconds one sample of a block took: the wall time of the timed samples
// alone over their count where the side reports it; else the case's own
// wall time (set-up and warm-up included, so it errs toward smaller
// blocks), else the block's wall time, which counts the process start too.
// A metric's value is no guide: a decode case's "time" is per token, not
// per sample.
double SecondsPerSample(const CaseResult& block, double wall_s) {
  if (block.samples.empty()) return wall_s;
  const double n = static_cast<double>(block.samples.size());
  if (block.sample_seconds > 0) return block.sample_seconds / n;
  return block.seconds > 0 ? block.seconds / n : wall_s / n;
}

}  // namespace

Pilot MeasurePilot(const std::string& key, Side& side, const AbOptions& options) {
  Pilot pilot;
  const std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  pilot.block = side.Measure(key, options.min_block_samples);
  if (pilot.block.status != CaseStatus::kOk) return pilot;
  pilot.block_samples = BlockSamplesFor(SecondsPerSample(pilot.block, SecondsSince(t)), options);
  return pilot;
}

unsigned BlockSamplesFor(double seconds_per_sample, const AbOptions& options) {
  // A sample that alone lasts a block is one: a program run of seconds is
  // long enough that no scheduler slice or short burst dominates it, and
  // five of them a block would leave a minute's budget one round.
  if (seconds_per_sample >= options.block_seconds) return 1;
  const double wanted = seconds_per_sample > 0 ? std::ceil(options.block_seconds / seconds_per_sample) : 0;
  return static_cast<unsigned>(std::clamp(wanted, double(options.min_block_samples), 100000.0));
}

namespace {

// Each side's noise: the spread of its unthrottled samples of the first metric.
void SetNoise(CasePair* pair) {
  for (CaseResult* r : {&pair->baseline, &pair->candidate}) {
    std::vector<double> first_metric;
    for (const Sample& s : r->samples) {
      if (!s.throttled && !s.values.empty()) first_metric.push_back(s.values[0]);
    }
    r->noise = stats::Noise(first_metric);
  }
}

}  // namespace

CasePair StartPair(const AbCase& c) {
  CasePair pair;
  pair.key = c.id.Key();
  for (CaseResult* r : {&pair.baseline, &pair.candidate}) {
    r->benchmark = c.id;
    r->metrics = c.metrics;
    r->status = CaseStatus::kOk;
  }
  return pair;
}

void FailPair(CasePair* pair, AbRole role, CaseStatus status, const std::string& reason) {
  for (CaseResult* r : {&pair->baseline, &pair->candidate}) {
    r->samples.clear();
    r->status = status;
    r->reason = SideReason(role, reason);
  }
  pair->baseline_blocks.clear();
  pair->candidate_blocks.clear();
  pair->stopped = StopReason::kFailed;
}

bool AddBlock(CasePair* pair, AbRole role, CaseResult block) {
  const bool is_base = role == AbRole::kBaseline;
  CaseResult& pooled = is_base ? pair->baseline : pair->candidate;
  if (block.status != CaseStatus::kOk) {
    FailPair(pair, role, block.status == CaseStatus::kSkipped ? CaseStatus::kSkipped : CaseStatus::kFailed,
             absl::StrCat(ToString(block.status), block.reason.empty() ? "" : ": ", block.reason));
    return false;
  }
  // A device case reports energy metrics after its declared ones where the
  // device has an energy counter (suites/energy.h): the first block says
  // which it reports, and every block of either side must report the same.
  if (pair->baseline_blocks.empty() && pair->candidate_blocks.empty() && block.metrics.size() > pooled.metrics.size() &&
      SameMetrics({block.metrics.begin(), block.metrics.begin() + static_cast<long>(pooled.metrics.size())},
                  pooled.metrics)) {
    pair->baseline.metrics = pair->candidate.metrics = block.metrics;
  }
  if (!SameMetrics(block.metrics, pooled.metrics)) {
    FailPair(pair, role, CaseStatus::kFailed, "its blocks reported different metrics");
    return false;
  }
  // A slowdown injected into one side says so in every block's reason.
  if (pooled.reason.empty() || pooled.reason == "sample_count") pooled.reason = block.reason;
  (is_base ? pair->baseline_blocks : pair->candidate_blocks).push_back(static_cast<unsigned>(block.samples.size()));
  // Numbered through the side, so each sample keeps its own index (the
  // coordinator refuses an index twice) and blocks stay in order.
  auto next = static_cast<uint32_t>(pooled.samples.size());
  for (Sample& x : block.samples) x.index = next++;
  pooled.samples.insert(pooled.samples.end(), std::make_move_iterator(block.samples.begin()),
                        std::make_move_iterator(block.samples.end()));
  return true;
}

namespace {

// After the first round: whether min_rounds fit the budget at its pace. With
// --case-budget auto the budget grows to what the stop rule's last look
// needs; else a pair they cannot fit stops with a note saying what budget
// would.
bool MinRoundsFit(CasePair* pair, const AbOptions& options, double round_s, double* budget_s, double most_s) {
  if (options.auto_budget && *budget_s > 0) {
    const double wanted = AutoBudget(round_s, options);
    *budget_s = std::max(*budget_s, most_s > 0 ? std::min(wanted, most_s) : wanted);
  }
  const double needed = RoundsBudget(round_s, options);
  if (*budget_s <= 0 || needed <= *budget_s) return true;
  // The case budget that would give this measurement `needed`, whatever
  // share of it (first or confirming, job budget) the measurement got.
  const double ask = std::ceil(options.case_budget_s * needed / *budget_s);
  pair->stopped = StopReason::kOverBudget;
  pair->note = absl::StrFormat(
      "not judged: one round (a block a side) took %.1f s, so the %u rounds a first look at the interval needs "
      "take about %.0f s, more than the %.0f s this measurement may take. Rerun with --case-budget %.0f (or "
      "--case-budget auto, which sizes it from the first round)",
      round_s, options.min_rounds, needed, *budget_s, ask);
  return false;
}

}  // namespace

bool NextRound(CasePair* pair, unsigned rounds, const AbOptions& options, double spent_s, double* budget_s,
               const DecidedFn& decided, double most_s) {
  pair->rounds = rounds;
  if (options.fixed_rounds > 0) {
    if (rounds < options.fixed_rounds) return true;
    pair->stopped = StopReason::kRounds;
    return false;
  }
  // The rounds this measurement took: the budget counts them alone.
  const unsigned here = rounds - std::min(pair->resumed_at, rounds - 1);
  if (pair->resumed_at == 0 && rounds == 1 && !MinRoundsFit(pair, options, spent_s, budget_s, most_s)) return false;
  if (gate::StopRuleLooksAt(rounds, options.min_rounds, options.max_rounds) && decided && decided(*pair)) {
    pair->stopped = StopReason::kDecided;
    return false;
  }
  // Another round must fit in the budget: rounds so far predict its cost.
  if (*budget_s > 0 && spent_s + spent_s / here > *budget_s) {
    pair->stopped = StopReason::kBudget;
    return false;
  }
  if (rounds >= options.max_rounds) {
    pair->stopped = StopReason::kMaxRounds;
    return false;
  }
  return true;
}

void FinishPair(CasePair* pair, double seconds) {
  pair->seconds = seconds;
  SetNoise(pair);
}

namespace {

// A round that an error cut short leaves one side a block ahead: it is
// dropped, so that every block kept has its pair.
void DropUnpairedBlock(CasePair* p) {
  for (auto [blocks, side, other] : {std::tuple(&p->baseline_blocks, &p->baseline, &p->candidate_blocks),
                                     std::tuple(&p->candidate_blocks, &p->candidate, &p->baseline_blocks)}) {
    if (blocks->size() <= other->size()) continue;
    side->samples.resize(side->samples.size() - blocks->back());
    blocks->pop_back();
  }
}

MeasuredCases FinishRounds(MeasuredCases out, std::chrono::steady_clock::time_point began) {
  for (CasePair& p : out.pairs) {
    if (p.stopped == StopReason::kFailed) continue;
    if (!out.error.empty()) {
      p.stopped = StopReason::kError;
      DropUnpairedBlock(&p);
      // Not one round of this case: nothing to judge it by but the error.
      if (p.baseline_blocks.empty()) {
        FailPair(&p, AbRole::kBaseline, CaseStatus::kFailed, "");
        for (CaseResult* r : {&p.baseline, &p.candidate}) r->reason = out.error;
        continue;
      }
    }
    FinishPair(&p, p.seconds + SecondsSince(began));
  }
  return out;
}

bool Failed(const CasePair& p) { return p.stopped == StopReason::kFailed; }

// One case of a perfgate build a block: each side measures the case alone.
class CaseBlocks final : public BlockSource {
 public:
  CaseBlocks(Side& baseline, Side& candidate, unsigned samples)
      : baseline_(baseline), candidate_(candidate), samples_(samples) {}

  std::string Block(AbRole role, unsigned, std::vector<CasePair>* pairs) override {
    for (CasePair& p : *pairs) {
      if (!Failed(p)) AddBlock(&p, role, (role == AbRole::kBaseline ? baseline_ : candidate_).Measure(p.key, samples_));
    }
    return "";
  }

 private:
  Side& baseline_;
  Side& candidate_;
  unsigned samples_;
};

}  // namespace

MeasuredCases MeasureRounds(std::vector<CasePair> pairs, BlockSource& source, const AbOptions& options,
                            double budget_s, const DecidedFn& decided, double most_s,
                            std::chrono::steady_clock::time_point began) {
  // The budget counts the rounds; a pilot before them is the job's time.
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double budget = budget_s;
  const uint64_t order = OrderSeed(options.order_seed);
  MeasuredCases out{std::move(pairs), ""};
  // Pairs measured before go on from their rounds (a fresh pair has none).
  unsigned first_round = std::numeric_limits<unsigned>::max();
  for (CasePair& p : out.pairs) {
    if (Failed(p)) continue;
    p.resumed_at = p.rounds;
    p.stopped = StopReason::kNone;
    first_round = std::min(first_round, p.rounds);
  }
  if (first_round == std::numeric_limits<unsigned>::max()) first_round = 0;
  const std::vector<int> allowed = AllowedCpus();
  const unsigned pin = options.pin_cpus > 0 ? static_cast<unsigned>(options.pin_cpus) : 0;
  for (unsigned round = first_round;; ++round) {
    const ScopedCpuPin on(RoundCpus(round, pin, allowed));
    for (AbRole role : BlockOrder(round, order)) {
      if (std::all_of(out.pairs.begin(), out.pairs.end(), Failed)) return FinishRounds(std::move(out), began);
      out.error = source.Block(role, round, &out.pairs);
      if (!out.error.empty()) return FinishRounds(std::move(out), began);
    }
    bool again = false;
    for (CasePair& p : out.pairs) {
      if (!Failed(p)) again = NextRound(&p, round + 1, options, SecondsSince(start), &budget, decided, most_s) || again;
    }
    if (!again) break;
  }
  return FinishRounds(std::move(out), began);
}

CasePair MeasurePair(const AbCase& c, Side& baseline, Side& candidate, const AbOptions& options,
                     double budget_s, const DecidedFn& decided, double most_s, const CasePair* resume) {
  const std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  AbOptions placed = options;
  placed.pin_cpus = static_cast<int>(PinCountFor(c, options.pin_cpus));
  unsigned samples = options.fixed_block_samples;
  if (resume != nullptr && !resume->baseline_blocks.empty()) {
    // Measured on: the blocks keep the size the first measurement had.
    CaseBlocks blocks(baseline, candidate, resume->baseline_blocks.front());
    return std::move(MeasureRounds({*resume}, blocks, placed, budget_s, decided, most_s, began).pairs.front());
  }
  if (samples == 0) {
    // A pilot block sizes the blocks by time; it also warms the node.
    const Pilot pilot = MeasurePilot(c.id.Key(), baseline, options);
    CasePair probe = StartPair(c);
    if (!AddBlock(&probe, AbRole::kBaseline, pilot.block)) return probe;
    samples = pilot.block_samples;
  }
  CaseBlocks blocks(baseline, candidate, samples);
  std::vector<CasePair> pairs;
  pairs.push_back(StartPair(c));
  return std::move(MeasureRounds(std::move(pairs), blocks, placed, budget_s, decided, most_s, began).pairs.front());
}

namespace {

const char* PassLabel(MeasurePass pass) {
  switch (pass) {
    case MeasurePass::kFirst: return "";
    case MeasurePass::kExtension: return "measuring on: ";
    case MeasurePass::kConfirmation: return "confirming: ";
    case MeasurePass::kConfirmationExtension: return "confirming, measuring on: ";
  }
  return "";
}

}  // namespace

AbResult RunAb(const std::vector<AbCase>& cases, Side& baseline, Side& candidate,
               const gate::Policy& policy, const std::string& sku, const AbOptions& options,
               std::ostream& log) {
  const std::chrono::steady_clock::time_point job_start = std::chrono::steady_clock::now();
  const size_t passes = options.confirm ? 2 : 1;
  const unsigned looks = gate::StopRuleLooks(options.min_rounds, options.max_rounds);
  auto measure = [&](const std::vector<size_t>& which, const std::vector<CasePair>* first, MeasurePass pass) {
    MeasuredCases out;
    for (size_t k = 0; k < which.size(); ++k) {
      const AbCase& c = cases[which[k]];
      const CasePair* earlier = first == nullptr ? nullptr : &(*first)[k];
      const bool last_pass = Confirms(pass);
      const size_t left = (which.size() - k) * (last_pass ? 1 : passes);
      const double budget = MeasurementBudget(options, SecondsSince(job_start), left, earlier, pass);
      log << "  " << c.id.Key() << ": " << PassLabel(pass) << std::flush;
      if (Resumes(pass) && budget <= 0) {
        log << "no budget left for another look\n" << std::flush;
        out.pairs.push_back(*earlier);
        continue;
      }
      CasePair p = MeasurePair(c, baseline, candidate, options, budget,
                               [&](const CasePair& so_far) {
                                 return CaseDecided(so_far, policy, sku, cases.size(), looks);
                               },
                               JobShare(options, SecondsSince(job_start), left),
                               Resumes(pass) ? earlier : nullptr);
      LogPair(p, log);
      out.pairs.push_back(std::move(p));
    }
    return out;
  };
  return MeasureAndDecide(cases, policy, sku, options, measure);
}

}  // namespace perfgate::agent
