// Tail latencies through the A/B gate on the real host model.
//
// A KV budget halved: both sides are perfgate-agent processes running
// inference/serve with 16 users in a closed loop, interleaved round by round as `perfgate-agent ab` runs
// them, the candidate's processes measuring the case with half the KV
// blocks (the build change under test); each process's percentiles are
// one value, paired by round. The gate must call that a regression of TTFT,
// and two identical sides a pass.
//
// A planted change that doubles p99 TPOT and leaves the median within 2 %:
// for a window of iterations now and then, the candidate's server follows
// each step with busy work proportional to that step's own time, so the few
// requests running then get a proportionally longer TPOT; the gate must
// catch tpot_p99 and not call tpot_p50 a regression.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/ab.h"
#include "common/stats.h"
#include "gate/gate.h"
#include "gate/policy.h"
#include "measure/engine.h"
#include "suites/inference/serve_case.h"
#include "suites/inference/serving.h"
#include "suites/registry.h"
#include "suites/transformer/host_model.h"
#include "suites/transformer/transformer.h"
#include "tests/support/processes.h"

namespace perfgate::serve_gate_e2e_test {
namespace {

using agent::AbCase;
using agent::CommandSide;
using agent::Side;
using suites::inference::ServeOptions;
using testing::Bin;

// The serving point: 16 users in a closed loop, so that the load follows the
// machine's speed (a fixed rate would be past the knee on a busy machine and
// far below it on an idle one). With 32 blocks about 8 sequences fit, with
// 16 about 4: the others wait for blocks, so TTFT rises by half or more and
// TPOT falls (smaller batches), on any machine.
constexpr char kRate[] = "0";
constexpr char kUsers[] = "16";
constexpr char kRequests[] = "300";

// TTFT is what the KV budget moves, TPOT what the plant moves; the other
// metrics are watched.
constexpr char kPolicy[] = R"(version: 1
defaults:
  tolerance: 10%
  inconclusive: pass
rules:
  - benchmark: "*"
    metric: "*"
    gating: false
  - benchmark: "*"
    metric: "ttft_p*"
    gating: true
  - benchmark: "*"
    metric: "tpot_p*"
    gating: true
)";

gate::Policy TestPolicy() {
  auto p = gate::ParsePolicy(kPolicy, "test-policy.yaml");
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : gate::Policy{};
}

BenchmarkId ServeId(const std::string& kv_blocks) {
  BenchmarkId id{"inference", "serve", {}};
  id.params = {{"backend", "host"}, {"block_tokens", "8"}, {"clock", "wall"}, {"dtype", "fp32"},
               {"kv_blocks", kv_blocks}, {"max_running", "16"}, {"min_s", "0"}, {"output", "16"},
               {"preset", "tiny"}, {"prompt", "16"}, {"rate", kRate}, {"requests", kRequests}, {"seed", "1"},
               {"threads", "1"}, {"tpot_ms", "2"}, {"ttft_ms", "20"}, {"users", kUsers}, {"warmup", "16"}};
  return id;
}

std::vector<MetricSpec> SpecsOf(const std::vector<suites::MetricKind>& kinds) {
  std::vector<MetricSpec> out;
  for (auto k : kinds) out.push_back(suites::SpecOf(k));
  return out;
}

// A perfgate-agent side measuring the case at `kv_blocks`, reported under
// the key the job asked for (the other side's), as a build with that budget
// would report it.
class KvSide : public Side {
 public:
  explicit KvSide(const std::string& kv_blocks)
      : kv_(kv_blocks),
        inner_({Bin("agent/perfgate-agent")},
               {"--suite", "inference", "--filter", "serve{backend=host*", "--set", absl::StrCat("rate=", kRate),
                "--set", absl::StrCat("requests=", kRequests), "--set", absl::StrCat("users=", kUsers), "--set",
                "kv_blocks=" + kv_blocks, "--timeout", "60"}) {}
  CaseResult Measure(const std::string& key, unsigned samples) override {
    BenchmarkId asked = ServeId("32");
    EXPECT_EQ(key, asked.Key());
    CaseResult r = inner_.Measure(ServeId(kv_).Key(), samples);
    r.benchmark = asked;
    return r;
  }

 private:
  std::string kv_;
  CommandSide inner_;
};

const gate::MetricVerdict* Find(const gate::GateResult& g, const std::string& metric) {
  for (const auto& v : g.verdicts) {
    if (v.metric == metric) return &v;
  }
  return nullptr;
}

// One serving run a process (its percentiles are the process's values);
// exactly n rounds, or with n = 0 rounds added until the gate can decide,
// up to 30 within 90 seconds. Without `confirm`, a suspected regression is
// not measured again: a metric whose rounds swing by tens of percent then
// fails an unchanged build at the gate's q (1 % two-sided, per look and
// once more at the end), which a test run at every commit would see.
agent::AbOptions Rounds(unsigned n, bool confirm = false) {
  agent::AbOptions o;
  o.fixed_block_samples = 1;
  o.fixed_rounds = n;
  // The stop rule ends a clear case at its first looks; the last ones are
  // for a host whose tail latencies swing by tens of percent between runs
  // (a planted doubling of p99 TPOT stood at +76 % [-1, +213] after 12).
  o.max_rounds = 30;
  o.case_budget_s = 90;
  o.confirm = confirm;
  return o;
}

AbCase ServeCase() {
  const BenchmarkId id = ServeId("32");
  return {id, SpecsOf(suites::inference::ServeMetrics(id))};
}

TEST(ServeGate, AHalvedKvBudgetIsARegressionOfTtftAndAnUnchangedBuildPasses) {
  const gate::Policy policy = TestPolicy();
  KvSide base("32"), same("32"), half("16");
  std::ostringstream log;
  const agent::AbResult changed = agent::RunAb({ServeCase()}, base, half, policy, "cpu-test", Rounds(0), log);
  // The unchanged build is judged as perfgate-agent ab judges by default:
  // a suspected regression is confirmed by a second measurement of its
  // own. Unconfirmed, this gate failed an unchanged build once in CI
  // (ttft_p99 +65.8 % after 30 rounds): on the wall clock a process's p99
  // of 300 requests is 9.3 ms in 6 of 10 processes and 16-58 ms in the
  // others, so a round's difference swings from -83 % to +390 %, and each
  // of the six gating percentiles may fail at the gate's q. The halved
  // budget's regression needs no confirmation to be asserted.
  const agent::AbResult unchanged =
      agent::RunAb({ServeCase()}, base, same, policy, "cpu-test", Rounds(0, /*confirm=*/true), log);
  std::cout << log.str();
  ASSERT_TRUE(changed.error.empty()) << changed.error;
  ASSERT_TRUE(unchanged.error.empty()) << unchanged.error;
  for (const char* m : {"ttft_p50", "ttft_p90", "ttft_p99", "preemptions"}) {
    const gate::MetricVerdict* v = Find(changed.gate, m);
    ASSERT_NE(v, nullptr) << m;
    std::cout << "halved KV: " << m << " " << v->baseline_median << " -> " << v->candidate_median << ", "
              << ToString(v->verdict) << "\n";
  }
  EXPECT_EQ(changed.gate.outcome, gate::Outcome::kRegression) << changed.gate.summary;
  EXPECT_EQ(unchanged.gate.outcome, gate::Outcome::kPass) << unchanged.gate.summary;
  // Every verdict of the unchanged build with its numbers and rounds, so
  // that a failure says what the gate saw.
  for (const gate::MetricVerdict& v : unchanged.gate.verdicts) {
    std::cout << "unchanged: " << v.metric << " " << ToString(v.verdict) << ": " << v.note << "\n";
  }
}

// The server's clock in the planted A/B: its thread's CPU time
// (ThreadCpuClock, the case's clock=cpu). With two
// users an iteration of the tiny model takes about 35 us, so on the wall
// clock the p99 TPOT is whatever descheduling the neighbours cause (9-12 ms
// against a median of 0.045 ms with one core kept busy), which moves by tens
// of percent from one process to the next and hides a doubling. The server
// never waits in the closed loop, so CPU time is its whole time, and the
// p99 it gives is the model's own: the iterations where the other user's
// prefill joins the batch, about 1.35 x the median.

// The planted change: the last kPlantWindow iterations of every
// kPlantEvery are each followed by busy work of kPlantFactor x that
// iteration's own time. A run (2 users, prompts of 4-8 tokens, outputs of
// 16-24, 16 warm-up and 300 measured requests) has about 3 170 iterations,
// so two windows, at iterations 1 452 and 2 952. A request decodes for
// 15-23 iterations and a window spans 48, so a window holds about three
// requests whole (each user finishes one or two inside it) and touches
// about seven: some 6 of the 300 get a TPOT of 4.4 x their own, the
// 3rd-4th largest (the p99) becomes 4.4 x a typical TPOT, and against a
// baseline p99 of 1.35 x the median that is 4.4 / 1.35 = about 3.3 x.
// The 14 requests touched (under 5 %) move the median to about the 52nd
// percentile of the unchanged ones: +1 % on a body this narrow. A plant of
// 1.6 x (a p99 of about 2 x) was caught in 5 rounds on an AMD EPYC VM but
// left too noisy after 30 in 2 of 6 trials on an Intel Xeon VM beside a
// busy core, whose float work runs at two speeds and moves the baseline's
// p99 by 1.5 x between processes.
constexpr unsigned kPlantEvery = 1500;
constexpr unsigned kPlantWindow = 48;
constexpr double kPlantFactor = 3.4;

class WindowSlowdownModel : public suites::inference::ServeModel {
 public:
  WindowSlowdownModel(suites::inference::ServeModel& inner, Clock& clock, bool planted)
      : inner_(inner), clock_(clock), planted_(planted) {}
  std::vector<int32_t> Step(const std::vector<suites::transformer::SlotRun>& runs) override {
    const double t0 = clock_.Now();
    std::vector<int32_t> next = inner_.Step(runs);
    if (planted_ && steps_++ % kPlantEvery >= kPlantEvery - kPlantWindow) {
      BusyWork(kPlantFactor * (clock_.Now() - t0), clock_);
    }
    return next;
  }

 private:
  suites::inference::ServeModel& inner_;
  Clock& clock_;
  bool planted_;
  unsigned steps_ = 0;
};

// A side serving in this process, one run a block, reporting TPOT p50 and p99.
class PlantedSide : public Side {
 public:
  explicit PlantedSide(bool planted) : planted_(planted) {}
  CaseResult Measure(const std::string& key, unsigned samples) override {
    ServeOptions o;
    o.rate = 0;
    o.users = 2;
    o.prompt_min = 4, o.prompt_max = 8, o.output_min = 16, o.output_max = 24;
    o.kv_blocks = 32, o.block_tokens = 8, o.max_running = 16;
    o.warmup_requests = 16, o.requests = 300;
    suites::transformer::Config c = *suites::transformer::Preset("tiny");
    c.batch = o.max_running;
    c.seq = o.prompt_max + o.output_max;
    suites::transformer::HostModel model(c, suites::transformer::InitParameters(c, 1));
    suites::inference::HostServeModel host(model, o.max_running);
    ThreadCpuClock clock;
    WindowSlowdownModel served(host, clock, planted_);
    CaseResult r;
    r.benchmark = PlantId();
    EXPECT_EQ(key, r.benchmark.Key());
    r.metrics = SpecsOf({suites::MetricKind::kTpotP50, suites::MetricKind::kTpotP99});
    r.status = CaseStatus::kOk;
    for (unsigned s = 0; s < samples; ++s) {
      const double t0 = SteadyClock().Now();
      const auto sum = suites::inference::Summarize(suites::inference::Serve(o, c.vocab, served, clock), o);
      r.samples.push_back({s, {sum.tpot_p50, sum.tpot_p99}, false});
      r.sample_seconds += SteadyClock().Now() - t0;
    }
    return r;
  }
  static BenchmarkId PlantId() { return {"inference", "serve", {{"users", "2"}, {"requests", "300"}}}; }

 private:
  bool planted_;
};

TEST(ServeGate, CatchesAPlantedChangeThatTriplesP99TpotAndLeavesTheMedian) {
  const gate::Policy policy = TestPolicy();
  PlantedSide base(false), planted(true);
  const AbCase c{PlantedSide::PlantId(), SpecsOf({suites::MetricKind::kTpotP50, suites::MetricKind::kTpotP99})};
  std::ostringstream log;
  const agent::AbResult r = agent::RunAb({c}, base, planted, policy, "cpu-test", Rounds(0), log);
  std::cout << log.str();
  ASSERT_TRUE(r.error.empty()) << r.error;
  const gate::MetricVerdict* p99 = Find(r.gate, "tpot_p99");
  const gate::MetricVerdict* p50 = Find(r.gate, "tpot_p50");
  ASSERT_NE(p99, nullptr);
  ASSERT_NE(p50, nullptr);
  const double p99_ratio = p99->candidate_median / p99->baseline_median;
  // The median's change as the gate estimates it, paired by round (a
  // neighbour's burst during a round slows both of its sides alike), not
  // the ratio of the two sides' medians: with 9 samples a side beside
  // other tests that ratio once moved by 24 %.
  const double p50_change = p50->change;
  std::cout << "planted: tpot_p99 " << p99->baseline_median << " -> " << p99->candidate_median << " ms (x"
            << p99_ratio << ", " << ToString(p99->verdict) << "), tpot_p50 " << p50->baseline_median << " -> "
            << p50->candidate_median << " ms (paired change " << 100 * p50_change << " % ["
            << 100 * p50->change_ci_low << ", " << 100 * p50->change_ci_high << "], " << ToString(p50->verdict)
            << ")\n";
  // The plant does what it says: about three times the p99 (3.2-4.3 x in
  // six trials beside a busy core; a plant of 8x or 1.5x fails here), and
  // the median all but untouched. The plant alone moves it by about 1 %,
  // but two sets of processes differ by several per cent with a busy
  // neighbour (the CPU-time clock leaves out descheduling, not a shared
  // core's caches), so the median's change is bounded against the tail's:
  // under 15 % of it. A plant slowing every token alike fails.
  EXPECT_GE(p99_ratio, 2.5);
  EXPECT_LE(p99_ratio, 6.0);
  EXPECT_LT(std::abs(p50_change), 0.15 * (p99_ratio - 1));
  EXPECT_EQ(p99->verdict, gate::Verdict::kRegression) << p99->note;
  EXPECT_NE(p50->verdict, gate::Verdict::kRegression) << p50->note;
}

}  // namespace
}  // namespace perfgate::serve_gate_e2e_test
