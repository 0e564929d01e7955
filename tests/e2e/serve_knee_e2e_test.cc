// The knee of inference/serve on the real host model (tiny preset), swept
// with the KV budget at 64 blocks and at half that: the registered case run
// point by point and its knees derived as a run derives them. Halving the
// budget must move the knee down and raise p99 TTFT at a rate between the
// two knees.
//
// What moves the knee: with 64 blocks the 16 slots bound the batch and a
// sequence is almost never preempted; with 32 about 9 sequences fit, and
// from about 0.8 of the machine's capacity the growing sequences preempt
// one another and new requests wait behind the recomputations. The tiny
// model's step costs per row, not per step, so a larger batch buys little
// throughput: the knee moves by a factor of about 1.2 (two steps of the
// grid), not 2.
//
// Robust on a busy machine by construction:
// - clock=cpu: the runs are timed in the serving thread's CPU time, so the
//   time other processes hold the CPU is left out (on a shared 2-core VM
//   that time moves wall-clock TTFT by several times within a minute,
//   more than halving the KV budget does);
// - the rates are set from the capacity measured first (every request at
//   once with the full budget): 0.6 to 1.25 of it in steps of 2^(1/8); the
//   grid is extended downwards or upwards when a knee falls outside it;
// - the TTFT objective is the time 12 requests take at that capacity (about
//   5 ms), several times p99 TTFT below the knee (under 1 ms) and below what
//   requests waiting behind preemptions see; TPOT's objective is loose (the full
//   budget's larger batches take slower steps, which would count against
//   it): the KV budget decides, not compute;
// - every point is run five times, in five passes over the grid (up, down,
//   up, ...), each time full then half budget, and judged on its best pass
//   (the lowest p99 TTFT): both budgets see the same machine at each rate,
//   and interference only adds latency. Stalls of 45-75 ms of CPU time (the
//   VM's host takes the CPU too) hit about a third of the runs at any rate,
//   0.6 of the capacity included: the median of three runs failed the test
//   3 times in 4, the best of three 2 in 4 (a rate all of whose runs
//   stall), the best of five leaves that at (1/3)^5 a rate. The half
//   budget's waits behind preemptions are there in every run;
// - on a machine whose stalls hit most runs for a while, knees that come
//   out in the wrong order are measured again, once, at the rates between
//   them (five more runs each), as a gate confirms before it fails, and
//   the grid is widened again when those runs move a knee past its end.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "common/stats.h"
#include "suites/builtin.h"

namespace perfgate::suites::serve_knee_e2e_test {
namespace {

constexpr char kFull[] = "64";
constexpr char kHalf[] = "32";
constexpr char kTpotMs[] = "5";
constexpr double kTtftRequests = 12;          // the TTFT objective, in requests served at capacity
constexpr int kPasses = 5;                    // runs a point, one in each pass over the grid
constexpr double kStep = 1.0905077326652577;  // 2^(1/8)

CaseResult RunOne(const CaseInstance& c, unsigned samples = 1) {
  EngineOptions o;
  o.sample_count = samples;
  o.timeout_s = 600;
  State state(c.id, c.metrics, o, 0);
  c.spec->body(state);
  return state.TakeResult();
}

double Metric(const CaseResult& r, const std::string& name, size_t sample) {
  for (size_t m = 0; m < r.metrics.size(); ++m) {
    if (r.metrics[m].name == name) return r.samples.at(sample).values.at(m);
  }
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

double Median(const CaseResult& r, const std::string& name) {
  std::vector<double> v;
  for (size_t s = 0; s < r.samples.size(); ++s) v.push_back(Metric(r, name, s));
  return stats::Median(v);
}

// The sweep: the objectives, and each rate's two results (full, half budget)
// holding its best run's sample, and every run as it came.
struct Sweep {
  std::string ttft_ms = "20";  // set from the capacity before the sweep
  std::map<double, std::vector<CaseResult>> points;
  std::map<double, std::vector<CaseResult>> runs;

  absl::StatusOr<std::vector<CaseInstance>> Cases(double rate, std::vector<std::string> kv_blocks) const {
    return BuiltinRegistry().Select({"inference"}, {"serve{backend=host*"},
                                    {{"rate", {absl::StrFormat("%.0f", rate)}}, {"kv_blocks", std::move(kv_blocks)},
                                     {"clock", {"cpu"}}, {"ttft_ms", {ttft_ms}}, {"tpot_ms", {kTpotMs}}});
  }

  // One run of each budget at `rate`, full first.
  void Run(double rate) {
    auto cases = Cases(rate, {kFull, kHalf});
    ASSERT_TRUE(cases.ok()) << cases.status();
    ASSERT_EQ(cases->size(), 2u);
    ASSERT_EQ(cases->at(0).id.params.at("kv_blocks"), kFull);
    std::vector<CaseResult>& point = points[rate];
    for (size_t i = 0; i < 2; ++i) {
      CaseResult r = RunOne(cases->at(i));
      ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
      runs[rate].push_back(r);
      if (point.size() <= i) {
        point.push_back(std::move(r));
      } else if (Metric(r, "ttft_p99", 0) < Metric(point[i], "ttft_p99", 0)) {
        point[i].samples[0] = r.samples.at(0);
      }
    }
  }

  // The knee of each budget, by kv_blocks: 0 when it lies below the rates
  // swept, infinity when above them (the case then holds no value).
  std::map<std::string, double> Knees() const {
    std::vector<CaseResult> results;
    for (const auto& [rate, point] : points) results.insert(results.end(), point.begin(), point.end());
    std::map<std::string, double> out;
    auto cases = Cases(points.begin()->first, {kFull});
    EXPECT_TRUE(cases.ok()) << cases.status();
    for (const CaseResult& k : cases->front().spec->derive(results)) {
      EXPECT_EQ(k.benchmark.params.at("objective"), "p99") << k.reason;
      double& knee = out[k.benchmark.params.at("kv_blocks")];
      if (!k.samples.empty()) {
        knee = k.samples[0].values.at(0);
      } else if (k.reason.rfind("knee below the swept range", 0) == 0) {
        knee = 0;
      } else {
        EXPECT_EQ(k.reason.rfind("knee above the swept range", 0), 0u) << k.reason;
        knee = std::numeric_limits<double>::infinity();
      }
    }
    return out;
  }

  void Print() const {
    for (const auto& [rate, point] : runs) {
      for (const CaseResult& r : point) {
        std::string line = absl::StrFormat("rate %5.0f, %s blocks:", rate, r.benchmark.params.at("kv_blocks"));
        for (size_t s = 0; s < r.samples.size(); ++s) {
          line += absl::StrFormat(" [TTFT %6.1f ms, TPOT %5.2f ms, %3.0f preempted]", Metric(r, "ttft_p99", s),
                                  Metric(r, "tpot_p99", s), Metric(r, "preemptions", s));
        }
        std::cout << line << "\n";
      }
    }
  }
};

TEST(ServeKnee, HalvingTheKvBudgetMovesTheKneeDownAndRaisesP99TtftOnTheRealModel) {
  const auto start = std::chrono::steady_clock::now();
  // The machine's capacity now: every request at once, the full budget.
  Sweep sweep;
  auto drain = sweep.Cases(1e6, {kFull});
  ASSERT_TRUE(drain.ok()) << drain.status();
  const CaseResult d = RunOne(drain->front(), kPasses);
  ASSERT_EQ(d.status, CaseStatus::kOk) << d.reason;
  const double capacity = Median(d, "requests_per_s");
  sweep.ttft_ms = absl::StrFormat("%.1f", 1e3 * kTtftRequests / capacity);
  std::cout << absl::StrFormat("capacity %.0f requests/s; objectives: p99 TTFT <= %s ms, p99 TPOT <= %s ms\n",
                               capacity, sweep.ttft_ms, kTpotMs);

  std::vector<double> grid;
  for (double exact = 0.6 * capacity; exact <= 1.25 * capacity; exact *= kStep) grid.push_back(std::round(exact));
  for (int pass = 0; pass < kPasses; ++pass) {
    for (size_t i = 0; i < grid.size(); ++i) {
      ASSERT_NO_FATAL_FAILURE(sweep.Run(grid[pass % 2 == 0 ? i : grid.size() - 1 - i]));
    }
  }
  // Outside the grid (the machine changed speed since its capacity was
  // taken): further points, each run kPasses times.
  std::map<std::string, double> knees = sweep.Knees();
  auto extend = [&](double rate) {
    for (int pass = 0; pass < kPasses; ++pass) ASSERT_NO_FATAL_FAILURE(sweep.Run(rate));
    knees = sweep.Knees();
  };
  auto widen = [&] {
    while (std::min(knees[kFull], knees[kHalf]) == 0 && sweep.points.begin()->first > capacity / 8) {
      ASSERT_NO_FATAL_FAILURE(extend(std::round(sweep.points.begin()->first / kStep)));
    }
    while (knees[kFull] > sweep.points.rbegin()->first && sweep.points.rbegin()->first < 4 * capacity) {
      ASSERT_NO_FATAL_FAILURE(extend(std::round(sweep.points.rbegin()->first * kStep)));
    }
  };
  ASSERT_NO_FATAL_FAILURE(widen());
  // Knees in the wrong order are measured again where they are decided, once:
  // the rates from the lower knee to the first rate above the higher one
  // get kPasses more runs each. Interference only adds latency, so more runs
  // can only find the clean ones; in one CI run stalls hit four of five runs
  // of a rate (the full budget's best at 1023 requests/s was 15 ms against
  // an objective of 9), and the half budget's one clean run put its knee a
  // step above the full budget's.
  if (knees[kHalf] >= knees[kFull]) {
    std::cout << "knees in the wrong order (" << knees[kFull] << " with " << kFull << " blocks, " << knees[kHalf]
              << " with " << kHalf << "): the rates between them measured again\n";
    const auto above = sweep.points.upper_bound(knees[kHalf]);
    const double last = above == sweep.points.end() ? sweep.points.rbegin()->first : above->first;
    std::vector<double> again;
    for (const auto& [rate, point] : sweep.points) {
      if (rate >= knees[kFull] && rate <= last) again.push_back(rate);
    }
    for (int pass = 0; pass < kPasses; ++pass) {
      for (double rate : again) ASSERT_NO_FATAL_FAILURE(sweep.Run(rate));
    }
    knees = sweep.Knees();
    // The runs again can move a knee past the grid's end: in one CI run the
    // full budget's tenth run at 1409 requests/s was clean, and its one
    // clean run of five at 1537 then put its knee above the grid. The grid
    // is widened again as it was before.
    ASSERT_NO_FATAL_FAILURE(widen());
  }
  sweep.Print();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double full = knees[kFull], half = knees[kHalf];
  std::cout << absl::StrFormat("knee: %.0f requests/s with %s blocks, %.0f with %s (%zu rates); %.1f s\n", full,
                               kFull, half, kHalf, sweep.points.size(), seconds);
  // Inside the swept range: the lowest rate met the objectives, a higher one missed.
  EXPECT_GE(half, sweep.points.begin()->first);
  EXPECT_LT(full, sweep.points.rbegin()->first);
  EXPECT_LT(half, full);

  // The first rate the half budget missed lies at or below the full
  // budget's knee: there the full budget met the objectives and the half
  // budget's requests waited behind preemptions. How far apart the two
  // p99s lie depends on where below the objective the full budget's best
  // run fell (1.4 to 3 times in runs here), so the test asks for the order
  // and for the preemptions that cause it.
  const auto missed = sweep.points.upper_bound(half);
  ASSERT_NE(missed, sweep.points.end());
  const double ttft_full = Median(missed->second[0], "ttft_p99"), ttft_half = Median(missed->second[1], "ttft_p99");
  const double preempted_full = Median(missed->second[0], "preemptions");
  const double preempted_half = Median(missed->second[1], "preemptions");
  std::cout << absl::StrFormat("p99 TTFT at %.0f requests/s: %.1f ms with %s blocks (%.0f preempted), %.1f ms with %s "
                               "(%.0f preempted)\n",
                               missed->first, ttft_full, kFull, preempted_full, ttft_half, kHalf, preempted_half);
  EXPECT_GT(ttft_half, ttft_full);
  EXPECT_GT(preempted_half, preempted_full);
}

}  // namespace
}  // namespace perfgate::suites::serve_knee_e2e_test
