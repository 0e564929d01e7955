// The knee of inference/serve on the real host model (tiny preset), swept
// with the KV budget at 64 blocks and at half that: the registered case run
// point by point and its knees derived as a run derives them. Halving the
// budget must move the knee down and raise p99 TTFT at a rate between the
// two knees.
//
// Robust on a busy machine by construction:
// - the two budgets' points are interleaved rate by rate (full, then half),
//   so both see the same machine at each rate;
// - the grid steps by 2^(1/8), so a knee that moves by a factor of 1.4 moves
//   by four steps, and a point that a stall fails by chance moves a knee by
//   one;
// - the grid starts low enough for a machine several times slower than an
//   idle one and stops once both budgets have missed, so a fast machine only
//   pays for more points;
// - the objectives leave compute out of it: TPOT's is loose (a full budget
//   runs larger batches, whose slower steps would count against it), and
//   TTFT's is above what a descheduled server adds to a request on a busy
//   machine, so what misses it is requests waiting for KV blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "suites/builtin.h"

namespace perfgate::suites {
namespace {

constexpr char kFull[] = "64";
constexpr char kHalf[] = "32";
constexpr char kTtftMs[] = "40";
constexpr char kTpotMs[] = "20";
constexpr int kSamples = 3;                   // serving runs a point, interleaved with the other budget's
constexpr double kStep = 1.0905077326652577;  // 2^(1/8)

State NewState(const CaseInstance& c, unsigned samples) {
  EngineOptions o;
  o.sample_count = samples;
  o.timeout_s = 600;
  return State(c.id, c.metrics, o, 0);
}

CaseResult RunOne(const CaseInstance& c, unsigned samples = 1) {
  State state = NewState(c, samples);
  c.spec->body(state);
  return state.TakeResult();
}

std::optional<double> Metric(const CaseResult& r, const std::string& name, size_t sample = 0) {
  for (size_t m = 0; m < r.metrics.size(); ++m) {
    if (r.metrics[m].name == name && sample < r.samples.size()) return r.samples[sample].values[m];
  }
  return std::nullopt;
}

double Median(const CaseResult& r, const std::string& name) {
  std::vector<double> v;
  for (size_t s = 0; s < r.samples.size(); ++s) v.push_back(*Metric(r, name, s));
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double RateOf(const CaseResult& r) {
  double rate = 0;
  EXPECT_TRUE(absl::SimpleAtod(r.benchmark.params.at("rate"), &rate));
  return rate;
}

absl::StatusOr<std::vector<CaseInstance>> Points(const std::string& rate, std::vector<std::string> kv_blocks) {
  return BuiltinRegistry().Select({"inference"}, {"serve{*"},
                                  {{"rate", {rate}}, {"kv_blocks", std::move(kv_blocks)},
                                   {"ttft_ms", {kTtftMs}}, {"tpot_ms", {kTpotMs}}});
}

// The knee of each budget's sweep so far, by kv_blocks.
std::map<std::string, double> Knees(const CaseSpec& serve, const std::vector<CaseResult>& results) {
  std::map<std::string, double> out;
  for (const CaseResult& k : serve.derive(results)) {
    EXPECT_EQ(k.benchmark.params.at("objective"), "p99") << k.reason;
    out[k.benchmark.params.at("kv_blocks")] = k.samples.at(0).values.at(0);
  }
  return out;
}

// Both budgets at one rate, their runs interleaved (full, half, full, half,
// ...) so that both see the same machine; each result holds kSamples runs.
std::vector<CaseResult> RunPoint(double rate) {
  auto cases = Points(absl::StrFormat("%.0f", rate), {kFull, kHalf});
  EXPECT_TRUE(cases.ok()) << cases.status();
  if (!cases.ok() || cases->size() != 2) return {};
  EXPECT_EQ(cases->at(0).id.params.at("kv_blocks"), kFull);
  std::vector<CaseResult> point(2);
  for (int s = 0; s < kSamples; ++s) {
    for (size_t i = 0; i < 2; ++i) {
      CaseResult r = RunOne(cases->at(i));
      EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason;
      if (r.status != CaseStatus::kOk) return {};
      if (s == 0) {
        point[i] = std::move(r);
      } else {
        point[i].samples.push_back(r.samples.at(0));
      }
    }
  }
  for (const CaseResult& r : point) {
    std::string line = absl::StrFormat("rate %5.0f, %s blocks:", rate, r.benchmark.params.at("kv_blocks"));
    for (size_t s = 0; s < r.samples.size(); ++s) {
      line += absl::StrFormat(" [TTFT %6.1f ms, TPOT %5.2f ms, %3.0f preempted]", *Metric(r, "ttft_p99", s),
                              *Metric(r, "tpot_p99", s), *Metric(r, "preemptions", s));
    }
    std::cout << line << "\n";
  }
  return point;
}

TEST(ServeKnee, HalvingTheKvBudgetMovesTheKneeDownAndRaisesP99TtftOnTheRealModel) {
  const auto start = std::chrono::steady_clock::now();
  // The machine's capacity now: every request at once, the full budget.
  auto drain = Points("1000000", {kFull});
  ASSERT_TRUE(drain.ok()) << drain.status();
  const CaseResult d = RunOne(drain->front(), kSamples);
  ASSERT_EQ(d.status, CaseStatus::kOk) << d.reason;
  const double capacity = Median(d, "requests_per_s");
  std::cout << absl::StrFormat("capacity %.0f requests/s\n", capacity);

  // Up from 0.6 of the capacity until both budgets have missed (no higher
  // point can move a knee then), four rates at least.
  std::vector<CaseResult> results;
  std::map<std::string, double> knees;
  std::vector<double> rates;
  for (double exact = 0.6 * capacity; exact <= 4 * capacity; exact *= kStep) {
    const double rate = std::round(exact);
    for (CaseResult& r : RunPoint(rate)) results.push_back(std::move(r));
    ASSERT_EQ(results.size(), 2 * (rates.size() + 1));
    rates.push_back(rate);
    knees = Knees(*drain->front().spec, results);
    if (rates.size() >= 4 && knees[kFull] < rate && knees[kHalf] < rate) break;
  }
  // Down while a budget missed at the lowest rate (the machine slowed since
  // its capacity was taken), to an eighth of it at most.
  while (std::min(knees[kFull], knees[kHalf]) == 0 && rates.front() > capacity / 8) {
    const double rate = std::round(rates.front() / kStep);
    for (CaseResult& r : RunPoint(rate)) results.push_back(std::move(r));
    rates.insert(rates.begin(), rate);
    knees = Knees(*drain->front().spec, results);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double full = knees[kFull], half = knees[kHalf];
  std::cout << absl::StrFormat("knee: %.0f requests/s with %s blocks, %.0f with %s (%zu rates); %.1f s\n", full,
                               kFull, half, kHalf, rates.size(), seconds);
  // Inside the swept range: the lowest rate met the objectives, a higher one missed.
  EXPECT_GE(half, rates.front());
  EXPECT_LT(full, rates.back());
  EXPECT_LT(half, full);

  // The first rate the half budget missed lies at or below the full
  // budget's knee: there the full budget met the objectives and the half
  // budget's requests waited for KV blocks.
  std::map<std::string, const CaseResult*> at;
  for (const CaseResult& r : results) {
    if (RateOf(r) > half && (!at.count(r.benchmark.params.at("kv_blocks")) ||
                             RateOf(r) < RateOf(*at[r.benchmark.params.at("kv_blocks")]))) {
      at[r.benchmark.params.at("kv_blocks")] = &r;
    }
  }
  ASSERT_EQ(at.size(), 2u);
  const double ttft_full = Median(*at[kFull], "ttft_p99"), ttft_half = Median(*at[kHalf], "ttft_p99");
  std::cout << absl::StrFormat("p99 TTFT at %.0f requests/s: %.1f ms with %s blocks, %.1f ms with %s\n",
                               RateOf(*at[kHalf]), ttft_full, kFull, ttft_half, kHalf);
  EXPECT_GT(ttft_half, 1.5 * ttft_full);
}

}  // namespace
}  // namespace perfgate::suites
