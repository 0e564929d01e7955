// What the renderers show must survive the wire: a domain report sent by the
// coordinator (ToProto) and read by the CLI (FromProto) renders exactly as the
// domain report it came from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"

#include "wire/gate_convert.h"
#include "wire/query_convert.h"
#include "report/fleet.h"
#include "report/gate_report.h"
#include "report/history.h"

namespace perfgate::wire {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Equal, or both NaN (a number no test produced).
void ExpectSame(double a, double b, const std::string& what) {
  if (std::isnan(a) || std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << what << ": " << a << " vs " << b;
  } else {
    EXPECT_EQ(a, b) << what;
  }
}

// Every verdict and every method once, each field a value of its own.
gate::GateReport FullReport() {
  gate::GateReport r;
  r.report_id = 77;
  r.candidate_run_id = "6f1c2a9e-1b7d-4c3e-9a55-0e2f4b8d9c10";
  r.sku = "h100-sxm5-80gb";
  r.candidate_branch = "feature/x";
  r.candidate_commit = "0123456789abcdef0123456789abcdef01234567";
  r.baseline_branch = "main";
  r.baseline_run_ids = {"run-a", "run-b"};
  r.candidate_image_digest = "sha256:" + std::string(64, 'b');
  r.baseline_image_digests = {"sha256:" + std::string(64, 'a'), ""};
  r.fdr = 0.05;
  r.result.mode = gate::Mode::kAb;
  r.result.outcome = gate::Outcome::kRegression;
  r.result.summary = "2 of 9 metrics regressed";
  r.result.invalid_reasons = {"GPU 0: PCIe link gen 4 x16 below its maximum gen 5 x16"};
  const gate::Verdict verdicts[] = {
      gate::Verdict::kRegression,   gate::Verdict::kBelowFloor, gate::Verdict::kMissing,
      gate::Verdict::kTooNoisy,     gate::Verdict::kNoBaseline, gate::Verdict::kInvalidEnvironment,
      gate::Verdict::kTooFewRuns,   gate::Verdict::kImprovement, gate::Verdict::kPass,
      gate::Verdict::kUnconfirmed,  gate::Verdict::kUndecided};
  const gate::Method methods[] = {gate::Method::kBlocks, gate::Method::kHistory, gate::Method::kCalibrated,
                                  gate::Method::kSamples, gate::Method::kNone,   gate::Method::kCount};
  for (int i = 0; i < 11; ++i) {
    gate::MetricVerdict v;
    v.benchmark = "kernels/copy{bytes=" + std::to_string(1 << i) + "}";
    v.metric = i % 2 == 0 ? "time" : "bandwidth";
    v.unit = i % 2 == 0 ? "ms" : "GB/s";
    v.direction = i % 2 == 0 ? Direction::kLowerIsBetter : Direction::kHigherIsBetter;
    v.baseline_median = 10.0 + i;
    v.candidate_median = 11.0 + i;
    v.change = 0.01 * (i + 1);
    v.change_ci_low = i == 4 ? kNaN : 0.005 * (i + 1);
    v.change_ci_high = i == 4 ? kNaN : 0.02 * (i + 1);
    v.p_value = 0.001 * (i + 1);
    v.p_adjusted = 0.003 * (i + 1);
    v.method = methods[i % 6];
    v.tolerance = 0.05;
    v.floor = i == 1 ? 12.5 : kNaN;
    v.candidate_noise = 0.002 * (i + 1);
    v.verdict = verdicts[i];
    v.gating = i != 2;
    v.candidate_samples = 30 + i;
    v.baseline_samples = 60 + i;
    v.baseline_runs = 3 + i;
    v.note = "note " + std::to_string(i);
    r.result.verdicts.push_back(v);
  }
  for (int i = 0; i <= static_cast<int>(gate::StopReason::kCounted); ++i) {
    r.case_rounds.push_back({"kernels/copy{bytes=" + std::to_string(1 << i) + "}", 3u + i,
                             static_cast<gate::StopReason>(i)});
  }
  return r;
}

gate::GateReport RoundTrip(const gate::GateReport& report) {
  v1::GateReport wire;
  ToProto(report, &wire);
  auto back = FromProto(wire);
  EXPECT_TRUE(back.ok()) << back.status();
  return back.ok() ? *back : gate::GateReport{};
}

// Every field of `got` as in `sent`, and every rendering the same.
void ExpectSameReport(const gate::GateReport& got, const gate::GateReport& sent) {
  EXPECT_EQ(got.report_id, sent.report_id);
  EXPECT_EQ(got.candidate_run_id, sent.candidate_run_id);
  EXPECT_EQ(got.sku, sent.sku);
  EXPECT_EQ(got.candidate_branch, sent.candidate_branch);
  EXPECT_EQ(got.candidate_commit, sent.candidate_commit);
  EXPECT_EQ(got.baseline_branch, sent.baseline_branch);
  EXPECT_EQ(got.baseline_run_ids, sent.baseline_run_ids);
  EXPECT_EQ(got.candidate_image_digest, sent.candidate_image_digest);
  EXPECT_EQ(got.baseline_image_digests, sent.baseline_image_digests);
  ExpectSame(got.fdr, sent.fdr, "fdr");
  EXPECT_EQ(got.result.mode, sent.result.mode);
  EXPECT_EQ(got.result.outcome, sent.result.outcome);
  EXPECT_EQ(got.result.summary, sent.result.summary);
  EXPECT_EQ(got.result.invalid_reasons, sent.result.invalid_reasons);
  ASSERT_EQ(got.result.verdicts.size(), sent.result.verdicts.size());
  for (size_t i = 0; i < sent.result.verdicts.size(); ++i) {
    const gate::MetricVerdict& a = sent.result.verdicts[i];
    const gate::MetricVerdict& b = got.result.verdicts[i];
    const std::string at = "verdict " + std::to_string(i);
    EXPECT_EQ(b.benchmark, a.benchmark) << at;
    EXPECT_EQ(b.metric, a.metric) << at;
    EXPECT_EQ(b.unit, a.unit) << at;
    EXPECT_EQ(b.direction, a.direction) << at;
    EXPECT_EQ(b.verdict, a.verdict) << at;
    EXPECT_EQ(b.method, a.method) << at;
    EXPECT_EQ(b.gating, a.gating) << at;
    EXPECT_EQ(b.candidate_samples, a.candidate_samples) << at;
    EXPECT_EQ(b.baseline_samples, a.baseline_samples) << at;
    EXPECT_EQ(b.baseline_runs, a.baseline_runs) << at;
    EXPECT_EQ(b.note, a.note) << at;
    ExpectSame(b.baseline_median, a.baseline_median, at + " baseline_median");
    ExpectSame(b.candidate_median, a.candidate_median, at + " candidate_median");
    ExpectSame(b.change, a.change, at + " change");
    ExpectSame(b.change_ci_low, a.change_ci_low, at + " change_ci_low");
    ExpectSame(b.change_ci_high, a.change_ci_high, at + " change_ci_high");
    ExpectSame(b.p_value, a.p_value, at + " p_value");
    ExpectSame(b.p_adjusted, a.p_adjusted, at + " p_adjusted");
    ExpectSame(b.tolerance, a.tolerance, at + " tolerance");
    ExpectSame(b.floor, a.floor, at + " floor");
    ExpectSame(b.candidate_noise, a.candidate_noise, at + " candidate_noise");
  }
  // Whatever a renderer reads, it reads the same on either side of the wire.
  EXPECT_EQ(report::RenderTable(got), report::RenderTable(sent));
  EXPECT_EQ(report::RenderMarkdown(got), report::RenderMarkdown(sent));
  EXPECT_EQ(report::RenderJUnit(got), report::RenderJUnit(sent));
  EXPECT_EQ(GateReportJson(got), GateReportJson(sent));
  EXPECT_EQ(report::ExitCode(got), report::ExitCode(sent));
  ASSERT_EQ(got.case_rounds.size(), sent.case_rounds.size());
  for (size_t i = 0; i < sent.case_rounds.size(); ++i) {
    EXPECT_EQ(got.case_rounds[i].benchmark, sent.case_rounds[i].benchmark);
    EXPECT_EQ(got.case_rounds[i].rounds, sent.case_rounds[i].rounds);
    EXPECT_EQ(got.case_rounds[i].stopped, sent.case_rounds[i].stopped);
  }
}

TEST(GateReportRoundTrip, KeepsEveryFieldTheRenderersShow) {
  const gate::GateReport sent = FullReport();
  ExpectSameReport(RoundTrip(sent), sent);
}

// The --json file: the message in the API's JSON, read back whole.
TEST(GateReportJson, IsTheMessageInTheApisJsonAndReadsBackWhole) {
  const gate::GateReport sent = FullReport();
  const std::string text = GateReportJson(sent);
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("report_id"), "77");  // int64 as a string, as protobuf's mapping writes it
  EXPECT_EQ(j.at("outcome"), "GATE_REGRESSION");
  EXPECT_EQ(j.at("mode"), "GATE_MODE_AB");
  const nlohmann::json& first = j.at("verdicts")[0];
  EXPECT_EQ(first.at("verdict"), "VERDICT_REGRESSION");
  EXPECT_EQ(first.at("direction"), "LOWER_IS_BETTER");
  EXPECT_EQ(first.at("method"), "TEST_METHOD_BLOCKS");
  EXPECT_DOUBLE_EQ(first.at("change").get<double>(), 0.01);
  EXPECT_EQ(first.at("floor"), "NaN");  // none: protobuf's mapping of a double that is not a number
  EXPECT_EQ(j.at("case_rounds")[1].at("stopped"), "AB_STOP_DECIDED");
  EXPECT_EQ(j.at("case_rounds")[1].at("rounds"), 4);
  auto back = GateReportFromJson(text, "report.json");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameReport(*back, sent);
}

TEST(GateReportJson, ReadingRefusesWhatIsNoReportNamingTheFileAndTheField) {
  for (const char* bad : {"", "[]", "{\"verdicts\": 3}", "{\"outcome\": \"GATE_MAYBE\"}",
                          "{\"cases\": []}", "{\"case_rounds\": [{\"stopped\": 99}]}",
                          "{\"verdicts\": [{\"verdict\": 42}]}"}) {
    const auto got = GateReportFromJson(bad, "probe/report.json");
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(got.status().message()), HasSubstr("probe/report.json")) << bad;
  }
  EXPECT_THAT(std::string(GateReportFromJson("{\"cases\": []}", "r.json").status().message()), HasSubstr("cases"));
  EXPECT_THAT(std::string(GateReportFromJson("{\"case_rounds\": [{\"stopped\": 99}]}", "r.json")
                              .status().message()), HasSubstr("case_rounds[0].stopped"));
}

// gate::StopReason and v1::AbStop: the same reasons in the same order.
TEST(GateReportJson, StopReasonsAreTheSchemasByName) {
  for (int i = 1; i <= static_cast<int>(gate::StopReason::kCounted); ++i) {
    const auto r = static_cast<gate::StopReason>(i);
    EXPECT_EQ(v1::AbStop_Name(ToProto(r)), "AB_STOP_" + absl::AsciiStrToUpper(gate::ToString(r)));
  }
  EXPECT_EQ(ToProto(gate::StopReason::kNone), v1::AB_STOP_UNSPECIFIED);
  EXPECT_EQ(v1::AbStop_descriptor()->value_count(), static_cast<int>(gate::StopReason::kCounted) + 1);
}

TEST(GateReportRoundTrip, KeepsEachOutcomeAndMode) {
  for (gate::Outcome o : {gate::Outcome::kPass, gate::Outcome::kRegression, gate::Outcome::kInconclusive}) {
    for (gate::Mode m : {gate::Mode::kHistory, gate::Mode::kAb}) {
      gate::GateReport r = FullReport();
      r.result.outcome = o;
      r.result.mode = m;
      const gate::GateReport got = RoundTrip(r);
      EXPECT_EQ(got.result.outcome, o);
      EXPECT_EQ(got.result.mode, m);
      EXPECT_EQ(report::ExitCode(got), static_cast<int>(o));
    }
  }
}

TEST(GateReportFromProto, WithoutOutcomeIsJudgedFromGatingVerdicts) {
  gate::GateReport r = FullReport();
  r.result.verdicts.resize(1);  // the gating regression
  v1::GateReport wire;
  ToProto(r, &wire);
  wire.clear_outcome();  // as an older coordinator sent it
  auto got = FromProto(wire);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(report::ExitCode(*got), 1);
  wire.mutable_verdicts(0)->set_gating(false);  // now only an advisory regression remains
  got = FromProto(wire);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(report::ExitCode(*got), 0);
}

TEST(GateReportFromProto, ReadsStoredMethodsAndNamesAnUnknownVerdict) {
  v1::GateReport wire;
  ToProto(FullReport(), &wire);
  wire.mutable_verdicts(0)->set_method(v1::TEST_METHOD_SAMPLES);
  wire.mutable_verdicts(1)->set_method(v1::TEST_METHOD_UNSPECIFIED);
  auto got = FromProto(wire);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->result.verdicts[0].method, gate::Method::kSamples);
  EXPECT_EQ(got->result.verdicts[1].method, gate::Method::kNone);

  wire.mutable_verdicts(2)->set_verdict(static_cast<v1::Verdict>(42));
  got = FromProto(wire);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("verdicts[2].verdict"));
}

HistoryReport History() {
  HistoryReport h;
  h.series.unit = "ms";
  h.series.direction = Direction::kHigherIsBetter;
  for (int i = 0; i < 6; ++i) {
    h.series.points.push_back({"run-" + std::to_string(i), "c0mmit" + std::to_string(i), "main",
                               "node-" + std::to_string(i % 2),
                               TimePoint(std::chrono::seconds(1'790'000'000 + 3'600 * i)), 10.0 + (i >= 3),
                               static_cast<uint32_t>(20 + i)});
  }
  h.changes.push_back({3, 10.0, 11.0, -0.1, 4.5, 0.01});
  return h;
}

TEST(HistoryRoundTrip, KeepsThePointsAndTheChangePoints) {
  const HistoryReport sent = History();
  v1::HistoryResponse wire;
  ToProto(sent, &wire);
  EXPECT_EQ(wire.change_points(0).commit(), "c0mmit3");  // the point where the new level begins
  EXPECT_EQ(wire.change_points(0).run_id(), "run-3");
  auto got = FromProto(wire);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->series.unit, sent.series.unit);
  EXPECT_EQ(got->series.direction, sent.series.direction);
  ASSERT_EQ(got->series.points.size(), sent.series.points.size());
  for (size_t i = 0; i < sent.series.points.size(); ++i) {
    const HistoryPoint& a = sent.series.points[i];
    const HistoryPoint& b = got->series.points[i];
    EXPECT_EQ(b.run_id, a.run_id);
    EXPECT_EQ(b.commit, a.commit);
    EXPECT_EQ(b.branch, a.branch);
    EXPECT_EQ(b.node, a.node);
    EXPECT_EQ(b.finished_at, a.finished_at);
    EXPECT_EQ(b.median, a.median);
    EXPECT_EQ(b.n, a.n);
  }
  ASSERT_EQ(got->changes.size(), 1u);
  EXPECT_EQ(got->changes[0].index, 3u);
  EXPECT_EQ(got->changes[0].median_before, 10.0);
  EXPECT_EQ(got->changes[0].median_after, 11.0);
  EXPECT_EQ(got->changes[0].change, -0.1);
  EXPECT_EQ(got->changes[0].statistic, 4.5);
  EXPECT_EQ(got->changes[0].p_value, 0.01);
  EXPECT_EQ(report::RenderHistory(*got, "kernels/copy", "time"), report::RenderHistory(sent, "kernels/copy", "time"));
}

TEST(HistoryFromProto, RefusesAChangePointOutsideTheSeries) {
  v1::HistoryResponse wire;
  ToProto(History(), &wire);
  wire.mutable_change_points(0)->set_index(6);
  auto got = FromProto(wire);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("change_points[0].index"));
}

gate::FleetReport Fleet() {
  gate::FleetReport f;
  f.nodes = 5;
  f.k = 4.5;
  gate::FleetOutlier o;
  o.node = "gpu-5";
  o.run_id = "run-5";
  o.benchmark = "kernels/copy{bytes=268435456}";
  o.metric = "time";
  o.unit = "ms";
  o.direction = Direction::kLowerIsBetter;
  o.node_median = 12.0;
  o.fleet_median = 10.0;
  o.mad = 0.02;
  o.deviation = 100.0;
  o.side = gate::FleetSide::kWorse;
  o.nodes = 5;
  o.differing_fields = {{"pcie_gen_max", "4", "5"}, {"nvidia_driver", "", "550.54"}};
  f.outliers.push_back(o);
  o.node = "gpu-2";
  o.run_id = "run-2";
  o.deviation = -7.0;
  o.side = gate::FleetSide::kBetter;
  o.differing_fields.clear();
  f.outliers.push_back(o);
  f.node_summary = {{"gpu-5", "run-5", 1, 0}, {"gpu-2", "run-2", 0, 1}, {"gpu-0", "run-0", 0, 0}};
  return f;
}

TEST(FleetRoundTrip, KeepsEveryOutlierAndNode) {
  const gate::FleetReport sent = Fleet();
  v1::FleetResponse wire;
  ToProto(sent, &wire);
  auto got = FromProto(wire);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->nodes, sent.nodes);
  EXPECT_EQ(got->k, sent.k);
  ASSERT_EQ(got->outliers.size(), sent.outliers.size());
  for (size_t i = 0; i < sent.outliers.size(); ++i) {
    const gate::FleetOutlier& a = sent.outliers[i];
    const gate::FleetOutlier& b = got->outliers[i];
    EXPECT_EQ(b.node, a.node);
    EXPECT_EQ(b.run_id, a.run_id);
    EXPECT_EQ(b.benchmark, a.benchmark);
    EXPECT_EQ(b.metric, a.metric);
    EXPECT_EQ(b.unit, a.unit);
    EXPECT_EQ(b.direction, a.direction);
    EXPECT_EQ(b.node_median, a.node_median);
    EXPECT_EQ(b.fleet_median, a.fleet_median);
    EXPECT_EQ(b.mad, a.mad);
    EXPECT_EQ(b.deviation, a.deviation);
    EXPECT_EQ(b.side, a.side);
    EXPECT_EQ(b.nodes, a.nodes);
    EXPECT_EQ(b.differing_fields, a.differing_fields);
  }
  ASSERT_EQ(got->node_summary.size(), sent.node_summary.size());
  for (size_t i = 0; i < sent.node_summary.size(); ++i) {
    EXPECT_EQ(got->node_summary[i].node, sent.node_summary[i].node);
    EXPECT_EQ(got->node_summary[i].run_id, sent.node_summary[i].run_id);
    EXPECT_EQ(got->node_summary[i].worse, sent.node_summary[i].worse);
    EXPECT_EQ(got->node_summary[i].better, sent.node_summary[i].better);
  }
  EXPECT_EQ(report::RenderFleet(*got, "h100-sxm5-80gb", "4242"), report::RenderFleet(sent, "h100-sxm5-80gb", "4242"));
  EXPECT_EQ(report::FleetExitCode(*got), 1);
}

TEST(FleetFromProto, NamesASideItDoesNotKnow) {
  v1::FleetResponse wire;
  ToProto(Fleet(), &wire);
  wire.mutable_outliers(1)->set_side("sideways");
  auto got = FromProto(wire);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("outliers[1].side"));
}

}  // namespace
}  // namespace perfgate::wire
