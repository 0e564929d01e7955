// The pull-request renderings of a gate report: the short comment (what
// regressed, what is unconfirmed, the link), the GitHub Checks payload and
// the job summary appended to the file GitHub names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "report/gate_report.h"
#include "tests/support/processes.h"

namespace perfgate::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

gate::MetricVerdict V(const std::string& benchmark, gate::Verdict verdict, double change, bool gating = true) {
  gate::MetricVerdict v;
  v.benchmark = benchmark;
  v.metric = "time";
  v.unit = "ms";
  v.baseline_median = 10;
  v.candidate_median = 10 * (1 + change);
  v.change = change;
  v.change_ci_low = change - 0.02;
  v.change_ci_high = change + 0.02;
  v.tolerance = 0.05;
  v.verdict = verdict;
  v.gating = gating;
  return v;
}

gate::GateReport Report(gate::Outcome outcome, std::vector<gate::MetricVerdict> verdicts) {
  gate::GateReport r;
  r.report_id = 17;
  r.candidate_run_id = "6f1c2a9e-1b7d-4c3e-9a55-0e2f4b8d9c10";
  r.sku = "h100-sxm5-80gb";
  r.candidate_branch = "feature/x";
  r.candidate_commit = "0123456789abcdef0123456789abcdef01234567";
  r.baseline_branch = "main";
  r.result.outcome = outcome;
  r.result.verdicts = std::move(verdicts);
  return r;
}

const gate::GateReport kMixed = Report(gate::Outcome::kRegression,
                                       {V("kernels/slow{n=1}", gate::Verdict::kRegression, 0.31),
                                        V("kernels/maybe{n=2}", gate::Verdict::kUnconfirmed, 0.12),
                                        V("kernels/advisory{n=3}", gate::Verdict::kRegression, 0.4, false),
                                        V("kernels/noisy{n=4}", gate::Verdict::kTooNoisy, 0.02),
                                        V("kernels/same{n=5}", gate::Verdict::kPass, 0.001)});

TEST(PrComment, ListsWhatRegressedAndWhatIsUnconfirmedAndLinksTheReport) {
  const std::string c = RenderPrComment(kMixed, "https://perf.example.com/#/report/17");
  EXPECT_THAT(c, StartsWith(std::string(kPrCommentMarker) + "\n**perfgate: REGRESSION**"));
  EXPECT_THAT(c, HasSubstr("**Regressed** (1)"));
  EXPECT_THAT(c, HasSubstr("| kernels/slow{n=1} | time | 10 ms | 13.1 ms | +31.0 % |"));
  EXPECT_THAT(c, HasSubstr("**Unconfirmed** (1)"));
  EXPECT_THAT(c, HasSubstr("| kernels/maybe{n=2} | time |"));
  EXPECT_THAT(c, HasSubstr("Not judged: too\\_noisy 1."));
  EXPECT_THAT(c, HasSubstr("[Full report on the dashboard](https://perf.example.com/#/report/17)"));
  // Shortened: advisory metrics and passes are left to the full report.
  EXPECT_THAT(c, Not(HasSubstr("kernels/advisory")));
  EXPECT_THAT(c, Not(HasSubstr("kernels/same")));
}

TEST(PrComment, WithoutADashboardNamesTheCommandThatShowsTheReport) {
  const std::string c = RenderPrComment(Report(gate::Outcome::kPass, {V("a", gate::Verdict::kPass, 0)}), "");
  EXPECT_THAT(c, HasSubstr("No gating metric regressed."));
  EXPECT_THAT(c, HasSubstr("Full report: `perfgate report 17`"));
  EXPECT_THAT(c, Not(HasSubstr("Regressed")));
}

TEST(PrComment, LongListsAreCut) {
  std::vector<gate::MetricVerdict> many;
  for (int i = 0; i < 40; ++i) many.push_back(V("kernels/k{i=" + std::to_string(i) + "}", gate::Verdict::kRegression, 0.2));
  const std::string c = RenderPrComment(Report(gate::Outcome::kRegression, many), "");
  EXPECT_THAT(c, HasSubstr("**Regressed** (40)"));
  EXPECT_THAT(c, HasSubstr("…and 25 more."));
  EXPECT_THAT(c, HasSubstr("kernels/k{i=14}"));
  EXPECT_THAT(c, Not(HasSubstr("kernels/k{i=15}")));
}

TEST(ChecksJson, ConclusionFollowsTheOutcomeAndOutputCarriesTheComment) {
  const nlohmann::json j = nlohmann::json::parse(RenderChecksJson(kMixed, "https://perf.example.com/#/report/17"));
  EXPECT_EQ(j["name"], "perfgate");
  EXPECT_EQ(j["head_sha"], kMixed.candidate_commit);
  EXPECT_EQ(j["status"], "completed");
  EXPECT_EQ(j["conclusion"], "failure");
  EXPECT_EQ(j["details_url"], "https://perf.example.com/#/report/17");
  EXPECT_EQ(j["external_id"], "17");
  EXPECT_THAT(j["output"]["title"].get<std::string>(), StartsWith("REGRESSION"));
  EXPECT_EQ(j["output"]["summary"], RenderPrComment(kMixed, "https://perf.example.com/#/report/17"));
  EXPECT_EQ(j["output"]["text"], RenderMarkdown(kMixed));

  auto conclusion = [](gate::Outcome o) {
    return nlohmann::json::parse(RenderChecksJson(Report(o, {}), ""))["conclusion"].get<std::string>();
  };
  EXPECT_EQ(conclusion(gate::Outcome::kPass), "success");
  EXPECT_EQ(conclusion(gate::Outcome::kInconclusive), "neutral");
  EXPECT_FALSE(nlohmann::json::parse(RenderChecksJson(Report(gate::Outcome::kPass, {}), "")).contains("details_url"));
}

TEST(ChecksJson, OutputFieldsStayWithinGitHubsLimit) {
  std::vector<gate::MetricVerdict> many;
  for (int i = 0; i < 3000; ++i) {
    many.push_back(V("kernels/é" + std::to_string(i) + std::string(20, 'x'), gate::Verdict::kRegression, 0.2));
  }
  const nlohmann::json j = nlohmann::json::parse(RenderChecksJson(Report(gate::Outcome::kRegression, many), ""));
  EXPECT_LE(j["output"]["text"].get<std::string>().size(), 65535u);
  EXPECT_THAT(j["output"]["text"].get<std::string>(), HasSubstr("(cut)"));
}

TEST(PullRequestFiles, AppendsTheSummaryAndWritesCommentAndChecks) {
  auto dir = testing::TempDir::Create();
  ASSERT_TRUE(dir.ok());
  PullRequestFiles f{dir->Join("summary.md"), dir->Join("comment.md"), dir->Join("checks.json"),
                     "https://perf.example.com/"};
  { std::ofstream(f.summary_file) << "earlier step\n"; }
  ASSERT_TRUE(WritePullRequestFiles(kMixed, f).ok());
  const std::string summary = testing::ReadFile(f.summary_file).value_or("");
  EXPECT_THAT(summary, StartsWith("earlier step\n**perfgate gate: REGRESSION**"));
  EXPECT_THAT(summary, HasSubstr("[Full report](https://perf.example.com/#/report/17)"));
  EXPECT_EQ(testing::ReadFile(f.comment_file).value_or(""), RenderPrComment(kMixed, "https://perf.example.com/#/report/17"));
  EXPECT_EQ(testing::ReadFile(f.checks_file).value_or(""), RenderChecksJson(kMixed, "https://perf.example.com/#/report/17"));
  EXPECT_EQ(ReportUrl(Report(gate::Outcome::kPass, {}), ""), "");

  f.comment_file = dir->Join("no/such/dir/comment.md");
  const absl::Status s = WritePullRequestFiles(kMixed, f);
  EXPECT_TRUE(absl::IsInternal(s));
  EXPECT_THAT(std::string(s.message()), HasSubstr("no/such/dir/comment.md"));
}

}  // namespace
}  // namespace perfgate::report
