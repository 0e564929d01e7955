// One conformance suite for every GateSource (coordinator/store/gate_source.h):
// the PostgreSQL store, whose runs are opened, streamed and closed, and the
// in-memory source the domain's gate tests use (gate_rules_test.cc). Each
// test runs against both, so what a gate reads cannot drift between them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "tests/coordinator/repository_backends.h"

namespace perfgate::coordinator {
namespace {

class GateSourceConformance : public RepositoryConformance {
 protected:
  store::GateSource& Source() { return backend_->Gate(); }

  // A run of one case with two metrics: times of `times` ms (and their
  // reciprocal as throughput), a throttled sample after them, and the
  // samples given out of order.
  std::string Add(const std::string& branch, const std::string& sku, const std::string& commit,
                  RunStatus status = RunStatus::kComplete, std::vector<double> times = {3, 1, 2}) {
    RunMeta meta;
    meta.run_id = NewUuid();
    meta.agent_name = "agent-1";
    meta.environment.sku = sku;
    meta.branch = branch;
    meta.commit = commit;
    meta.node = "node-1";
    meta.started_at = std::chrono::system_clock::now();
    CaseResult c;
    c.benchmark = {"kernels", "sgemm", {{"m", "64"}}};
    c.metrics = {{"time", "ms", Direction::kLowerIsBetter}, {"flops", "GF/s", Direction::kHigherIsBetter}};
    c.samples.push_back({static_cast<uint32_t>(times.size()), {99, 1}, true});
    for (uint32_t i = times.size(); i-- > 0;) c.samples.push_back({i, {times[i], 100 / times[i]}, false});
    c.status = CaseStatus::kOk;
    return backend_->AddRun(meta, status, {c});
  }

  std::vector<std::string> Commits(const store::BaselineQuery& q) {
    auto runs = Source().FindBaselineRuns(q);
    EXPECT_TRUE(runs.ok()) << runs.status();
    std::vector<std::string> out;
    for (const RunRecord& r : runs.value_or(std::vector<RunRecord>{})) out.push_back(r.meta.commit);
    return out;
  }
};

TEST_P(GateSourceConformance, FindsTheCompleteRunsOfTheBranchOnTheSkuLatestFirstButTheCandidate) {
  Add("main", "cpu-a", "c1");
  Add("main", "cpu-a", "c2");
  Add("main", "cpu-b", "other-sku");
  Add("topic", "cpu-a", "other-branch");
  Add("main", "cpu-a", "failed", RunStatus::kFailed);
  const std::string candidate = Add("main", "cpu-a", "c3");
  store::BaselineQuery q{"main", "cpu-a", absl::AsciiStrToUpper(candidate)};
  EXPECT_EQ(Commits(q), (std::vector<std::string>{"c2", "c1"}));
  q.limit = 1;
  EXPECT_EQ(Commits(q), std::vector<std::string>{"c2"});
  q.limit = 0;
  q.allowed_commits = {"c1", "c9"};
  EXPECT_EQ(Commits(q), std::vector<std::string>{"c1"});
  q.exclude_run_id.clear();
  q.allowed_commits.clear();
  EXPECT_EQ(Commits(q), (std::vector<std::string>{"c3", "c2", "c1"}));
  q.sku.clear();
  EXPECT_EQ(Source().FindBaselineRuns(q).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(GateSourceConformance, GetsARunByItsIdInEitherCaseAndSaysWhyNot) {
  const std::string id = Add("main", "cpu-a", "c1");
  auto run = Source().GetRun(absl::AsciiStrToUpper(id));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->meta.commit, "c1");
  EXPECT_EQ(run->meta.environment.sku, "cpu-a");
  EXPECT_EQ(run->status, RunStatus::kComplete);
  EXPECT_TRUE(run->finished_at.has_value());
  EXPECT_EQ(run->samples, 4u);
  EXPECT_EQ(Source().GetRun(NewUuid()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Source().GetRun("run-1").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Source().GetGateSummaries(NewUuid()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Source().GetSamples(NewUuid()).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(GateSourceConformance, ReadsSummariesInByteOrderAndUnthrottledValuesInSampleOrder) {
  const std::string id = Add("main", "cpu-a", "c1", RunStatus::kComplete, {3, 1, 2});
  auto summaries = Source().GetGateSummaries(id);
  ASSERT_TRUE(summaries.ok()) << summaries.status();
  ASSERT_EQ(summaries->size(), 2u);
  const MetricSummary& flops = (*summaries)[0].summary;
  const MetricSummary& time = (*summaries)[1].summary;
  EXPECT_EQ(flops.metric, "flops");
  EXPECT_EQ(flops.direction, Direction::kHigherIsBetter);
  EXPECT_EQ(time.benchmark, "kernels/sgemm{m=64}");
  EXPECT_EQ(time.metric, "time");
  EXPECT_EQ(time.unit, "ms");
  EXPECT_EQ(time.n, 3u);
  EXPECT_EQ(time.n_throttled, 1u);
  EXPECT_DOUBLE_EQ(time.median, 2);
  EXPECT_EQ(time.status, CaseStatus::kOk);
  EXPECT_FALSE((*summaries)[1].process_medians.has_value());  // one process
  auto samples = Source().GetSamples(id);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->at({"kernels/sgemm{m=64}", "time"}), (std::vector<double>{3, 1, 2}));
  EXPECT_EQ(samples->at({"kernels/sgemm{m=64}", "flops"}).size(), 3u);
}

TEST_P(GateSourceConformance, ASeriesIsTheMediansOfTheNewestCompleteRunsOldestFirst) {
  Add("main", "cpu-a", "c1", RunStatus::kComplete, {1, 1, 1});
  Add("main", "cpu-a", "c2", RunStatus::kComplete, {2, 2, 2});
  Add("main", "cpu-a", "failed", RunStatus::kFailed, {9, 9, 9});
  Add("topic", "cpu-a", "t1", RunStatus::kComplete, {5, 5, 5});
  Add("main", "cpu-b", "b1", RunStatus::kComplete, {7, 7, 7});
  Add("main", "cpu-a", "c3", RunStatus::kComplete, {3, 3, 3});
  store::SeriesQuery q{"kernels/sgemm{m=64}", "time", "cpu-a", "main", "", 0};
  auto commits = [&] {
    auto s = backend_->Series().GetSeries(q);
    EXPECT_TRUE(s.ok()) << s.status();
    std::vector<std::string> out;
    for (const store::SeriesPoint& p : s.ok() ? s->points : std::vector<store::SeriesPoint>{}) {
      out.push_back(p.point.commit);
    }
    return out;
  };
  auto series = backend_->Series().GetSeries(q);
  ASSERT_TRUE(series.ok()) << series.status();
  EXPECT_EQ(series->unit, "ms");
  EXPECT_EQ(series->direction, Direction::kLowerIsBetter);
  ASSERT_EQ(series->points.size(), 3u);
  EXPECT_DOUBLE_EQ(series->points[2].point.median, 3);
  EXPECT_EQ(series->points[2].point.n, 3u);
  EXPECT_EQ(series->points[2].n_throttled, 1u);
  EXPECT_TRUE(series->points[2].valid());
  EXPECT_EQ(commits(), (std::vector<std::string>{"c1", "c2", "c3"}));
  q.limit = 2;
  EXPECT_EQ(commits(), (std::vector<std::string>{"c2", "c3"}));
  q.limit = 0;
  q.branch.clear();
  EXPECT_EQ(commits(), (std::vector<std::string>{"c1", "c2", "t1", "c3"}));
  q.sku.clear();
  EXPECT_EQ(commits(), (std::vector<std::string>{"c1", "c2", "t1", "b1", "c3"}));
  q.metric = "nonesuch";
  EXPECT_EQ(backend_->Series().GetSeries(q).status().code(), absl::StatusCode::kNotFound);
  q.metric = "time";
  q.limit = kSeriesPointRows.most + 1;
  EXPECT_EQ(backend_->Series().GetSeries(q).status().code(), absl::StatusCode::kInvalidArgument);
  q.limit = 0;
  q.benchmark.clear();
  EXPECT_EQ(backend_->Series().GetSeries(q).status().code(), absl::StatusCode::kInvalidArgument);
}

// A node's calibrations: the newest of each (SKU, node, environment, case,
// metric), filtered by SKU, node, environment and age, in byte order of SKU,
// node, case and metric.
TEST_P(GateSourceConformance, KeepsTheNewestCalibrationOfEachCaseAndFiltersByNodeEnvironmentAndAge) {
  const auto now = std::chrono::system_clock::now();
  auto set = [&](const std::string& node, const std::string& kernel, std::chrono::hours age, double spread) {
    CalibrationSet s;
    s.node = node;
    s.environment = {"cpu-a", {{"kernel", kernel}}};
    s.measured_at = now - age;
    s.entries = {{"kernels/sgemm{m=64}", "time", "ms", Direction::kLowerIsBetter, spread, 10},
                 {"kernels/axpy{n=8}", "time", "ms", Direction::kLowerIsBetter, spread, 10}};
    return s;
  };
  backend_->AddCalibration(set("node-1", "6.1", std::chrono::hours(48), 0.05));
  backend_->AddCalibration(set("node-1", "6.1", std::chrono::hours(1), 0.01));   // newer: kept
  backend_->AddCalibration(set("node-1", "6.1", std::chrono::hours(72), 0.09));  // older: not written
  backend_->AddCalibration(set("node-2", "6.1", std::chrono::hours(1), 0.02));
  backend_->AddCalibration(set("node-1", "5.15", std::chrono::hours(100), 0.03));
  const std::string hash = Environment{"cpu-a", {{"kernel", "6.1"}}}.Hash();
  auto of_node = Source().GetCalibrations("cpu-a", "node-1", hash, std::nullopt);
  ASSERT_TRUE(of_node.ok()) << of_node.status();
  ASSERT_EQ(of_node->size(), 2u);
  EXPECT_EQ((*of_node)[0].entry.benchmark, "kernels/axpy{n=8}");
  EXPECT_EQ((*of_node)[1].entry.benchmark, "kernels/sgemm{m=64}");
  EXPECT_DOUBLE_EQ((*of_node)[1].entry.spread, 0.01);
  auto every = Source().GetCalibrations("cpu-a", "", "", std::nullopt);
  ASSERT_TRUE(every.ok()) << every.status();
  EXPECT_EQ(every->size(), 6u);  // node-1 in two environments, node-2
  auto recent = Source().GetCalibrations("cpu-a", "", "", std::chrono::hours(24));
  ASSERT_TRUE(recent.ok()) << recent.status();
  EXPECT_EQ(recent->size(), 4u);
  for (const store::CalibrationRecord& c : *recent) EXPECT_EQ(c.environment_hash, hash) << c.node;
  auto none = Source().GetCalibrations("cpu-b", "", "", std::nullopt);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, GateSourceConformance, ConformanceBackends(), BackendName);

}  // namespace
}  // namespace perfgate::coordinator
