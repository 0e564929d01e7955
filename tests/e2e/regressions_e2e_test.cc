// Regressions found on main by the coordinator itself, and their triage over
// HTTP: the real coordinator binary over a private PostgreSQL, 40 seeded
// runs of main sent through the client library (tests/e2e/dashboard_seed.h);
// and a series' time range through the HTTP API and `perfgate history`.
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <pqxx/pqxx>

#include "absl/strings/str_format.h"
#include "perfgate/v1/api.pb.h"
#include "perfgate/v1/query.pb.h"
#include "perfgate/v1/regression.pb.h"
#include "tests/e2e/dashboard_seed.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"
#include "wire/api_json.h"

namespace perfgate::regressions_e2e_test {
namespace {

using Json = nlohmann::json;

constexpr char kToken[] = "s3cret-token";

class RegressionsEndToEnd : public testing::DashboardCoordinatorTest {
 protected:
  RegressionsEndToEnd() : DashboardCoordinatorTest(kToken) {}
  void SetUp() override {
    testing::DashboardCoordinatorTest::SetUp();
    if (HasFatalFailure()) return;
    auto seeded = testing::SeedDashboardHistory(coordinator_.grpc.address, token_file_);
    ASSERT_TRUE(seeded.ok()) << seeded.status() << "\n" << coordinator_.grpc.process->OutputTail();
    seeded_ = *seeded;
    // 40 + 5 runs of main and one of a pull request closed complete.
    ASSERT_TRUE(testing::WaitForRegressionChecks(coordinator_.http_port, testing::kMainRuns + 6, kToken).ok());
  }

  httplib::Result Triage(int64_t id, const Json& body, const std::string& token) {
    httplib::Client http("127.0.0.1", coordinator_.http_port);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return http.Post(("/api/v1/regressions/" + std::to_string(id) + "/triage").c_str(), headers,
                     body.dump(), "application/json");
  }

  // An answer of the API as its message (`M`, in the API's JSON).
  template <typename M>
  M Answer(const std::string& path) const {
    M message;
    const absl::Status s = wire::FromApiJson(GetJson(path).dump(), &message, path);
    EXPECT_TRUE(s.ok()) << s;
    return message;
  }
  v1::ListRegressionsResponse List(const std::string& path) const {
    return Answer<v1::ListRegressionsResponse>(path);
  }

  testing::Seeded seeded_;
};

TEST_F(RegressionsEndToEnd, PlantedStepIsOneRegressionAtItsCommitAndTheFlatSeriesHasNone) {
  const v1::ListRegressionsResponse list = List("/api/v1/regressions");
  ASSERT_EQ(list.regressions_size(), 1) << list.DebugString();
  const v1::Regression& r = list.regressions(0);
  EXPECT_EQ(r.benchmark(), testing::kStepCase);
  EXPECT_EQ(r.metric(), "time");
  EXPECT_EQ(r.sku(), testing::kSku);
  EXPECT_EQ(r.branch(), "main");
  EXPECT_EQ(r.bad_commit(), testing::kStepCommit);
  EXPECT_EQ(r.good_commit(), "c19");
  EXPECT_EQ(r.first_bad_run_id(), seeded_.main_runs[20]);
  ASSERT_TRUE(r.has_change());
  EXPECT_NEAR(r.change(), 0.08, 0.02);
  EXPECT_EQ(r.state(), v1::REGRESSION_STATE_NEW);
  // Its one event is the detection: from no state to new.
  ASSERT_EQ(r.events_size(), 1);
  EXPECT_EQ(r.events(0).from(), v1::REGRESSION_STATE_UNSPECIFIED);
  EXPECT_EQ(r.events(0).to(), v1::REGRESSION_STATE_NEW);
  EXPECT_GT(r.detected_at().seconds(), 0);
  // The series answers the same message for its regressions.
  const auto series = Answer<v1::SeriesResponse>(std::string("/api/v1/series?metric=time&branch=main&benchmark=") +
                                                 httplib::detail::encode_query_param(testing::kStepCase));
  ASSERT_EQ(series.regressions_size(), 1);
  EXPECT_EQ(series.regressions(0).SerializeAsString(), r.SerializeAsString());
  // The services counted what they did: 46 runs of two cases, each sent
  // whole in one batch (client::RunUpload packs a run's cases together).
  httplib::Client http("127.0.0.1", coordinator_.http_port);
  http.set_bearer_token_auth(kToken);
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("perfgate_ingest_batches_total 46\n"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("perfgate_ingest_batch_seconds_count 46\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("perfgate_gates_total{outcome=\""), std::string::npos);
  EXPECT_NE(metrics->body.find("perfgate_regressions_detected_total 1\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("perfgate_open_runs 0\n"), std::string::npos);
  // The flat case's 45 runs of main gave none.
  EXPECT_EQ(List(std::string("/api/v1/regressions?benchmark=") + httplib::detail::encode_query_param(testing::kFlatCase))
                .regressions_size(),
            0);
}

TEST_F(RegressionsEndToEnd, TheSeriesAnswersTheRunsFinishedWithinFromAndTo) {
  const std::string path = std::string("/api/v1/series?metric=time&branch=main&limit=5000&benchmark=") +
                           httplib::detail::encode_query_param(testing::kStepCase);
  const auto all = Answer<v1::SeriesResponse>(path).points();
  ASSERT_GE(all.size(), 30);
  // [t of the 10th point, t of the 20th): points 10 to 19, written back as
  // seconds since the epoch, as the dashboard writes a range into its URL.
  auto at = [&](int i) {
    const google::protobuf::Timestamp& t = all[i].t();
    return absl::StrFormat("%d.%06d", t.seconds(), t.nanos() / 1000);
  };
  const auto range = Answer<v1::SeriesResponse>(path + "&from=" + at(10) + "&to=" + at(20)).points();
  ASSERT_EQ(range.size(), 10);
  for (int i = 0; i < range.size(); ++i) EXPECT_EQ(range[i].run_id(), all[10 + i].run_id());
  EXPECT_EQ(Answer<v1::SeriesResponse>(path + "&from=" + at(10)).points_size(), all.size() - 10);

  httplib::Client http("127.0.0.1", coordinator_.http_port);
  http.set_bearer_token_auth(kToken);
  auto bad = http.Get(path + "&from=yesterday");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("from: 'yesterday' is not a time"), std::string::npos) << bad->body;
  auto backwards = http.Get(path + "&from=" + at(20) + "&to=" + at(10));
  ASSERT_TRUE(backwards);
  EXPECT_EQ(backwards->status, 400);
  EXPECT_NE(backwards->body.find("to: must be later than from"), std::string::npos) << backwards->body;
  for (const char* points : {"1", "10001", "many"}) {
    auto refused = http.Get(path + "&points=" + points);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 400);
    EXPECT_NE(refused->body.find(std::string("points: '") + points + "' is not a number from 2 to 10000"),
              std::string::npos)
        << refused->body;
  }

  // perfgate history asks the gRPC Query service for the same range.
  const std::string json = dir_->Join("history.json");
  auto cli = testing::RunCommand({testing::Bin("cli/perfgate"), "--coordinator", coordinator_.grpc.address,
                                  "--token-file", token_file_, "history", "--benchmark", testing::kStepCase,
                                  "--metric", "time", "--branch", "main", "--limit", "1000", "--from", at(10),
                                  "--to", at(20), "--json", json});
  ASSERT_TRUE(cli.ok()) << cli.status();
  ASSERT_EQ(cli->exit_code, 0) << cli->output;
  // Its --json is the answer's message, in the API's JSON.
  auto text = testing::ReadFile(json);
  ASSERT_TRUE(text.ok()) << text.status();
  v1::HistoryResponse history;
  ASSERT_TRUE(wire::FromApiJson(*text, &history, json).ok()) << *text;
  EXPECT_EQ(history.benchmark(), testing::kStepCase);
  ASSERT_EQ(history.points_size(), 10) << *text;
  for (int i = 0; i < 10; ++i) EXPECT_EQ(history.points(i).run_id(), all[10 + i].run_id());
}

TEST_F(RegressionsEndToEnd, TriageNeedsTheTokenAndKeepsWhoWhenAndWhy) {
  const int64_t id = List("/api/v1/regressions").regressions(0).id();
  const Json ack = {{"state", "REGRESSION_STATE_ACKNOWLEDGED"}, {"note", "looking at NCCL 2.21"}, {"by", "alice"}};
  auto res = Triage(id, ack, "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401) << res->body;
  res = Triage(id, ack, "wrong-token");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401) << res->body;
  // Refused with 400, naming what is wrong: a state no regression has, a
  // field the message lacks, a move back to new, fixed without its commit.
  const std::pair<Json, std::string> refusals[] = {
      {{{"state", "fixd"}, {"note", "x"}, {"by", "alice"}}, "fixd"},
      {{{"state", "REGRESSION_STATE_FIXED"}, {"note", "x"}, {"by", "alice"}, {"comit", "c41"}}, "comit"},
      {{{"state", "REGRESSION_STATE_NEW"}, {"note", "x"}, {"by", "alice"}}, "new only when detected"},
      {{{"state", "REGRESSION_STATE_FIXED"}, {"note", "reverted"}, {"by", "alice"}}, "commit:"}};
  for (const auto& [body, named] : refusals) {
    res = Triage(id, body, kToken);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << body.dump();
    EXPECT_NE(res->body.find(named), std::string::npos) << res->body;
  }
  res = Triage(id, ack, kToken);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  res = Triage(id,
               {{"state", "REGRESSION_STATE_FIXED"}, {"note", "reverted the ring change"}, {"by", "bob"},
                {"commit", "c41"}},
               kToken);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  // The answer is the regression as it now is, with every move.
  v1::Regression fixed;
  ASSERT_TRUE(wire::FromApiJson(res->body, &fixed, "triage").ok()) << res->body;
  EXPECT_EQ(fixed.state(), v1::REGRESSION_STATE_FIXED);
  EXPECT_EQ(fixed.fixed_by_commit(), "c41");
  ASSERT_EQ(fixed.events_size(), 3);
  EXPECT_EQ(fixed.events(2).from(), v1::REGRESSION_STATE_ACKNOWLEDGED);
  EXPECT_EQ(fixed.events(2).by(), "bob");

  // The CLI lists it and makes the last change, with the same token.
  const std::string http = "127.0.0.1:" + std::to_string(coordinator_.http_port);
  auto listed = testing::RunCommand({testing::Bin("cli/perfgate"), "regressions", "--http", http, "--state", "fixed",
                                     "--token-file", token_file_});
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->exit_code, 0) << listed->output;
  EXPECT_NE(listed->output.find(testing::kStepCase), std::string::npos) << listed->output;
  EXPECT_NE(listed->output.find("c19 -> c20"), std::string::npos) << listed->output;
  auto refused = testing::RunCommand({testing::Bin("cli/perfgate"), "triage", std::to_string(id), "--state",
                                      "investigating", "--note", "regressed again", "--http", http});
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->exit_code, 2) << refused->output;
  EXPECT_NE(refused->output.find("token"), std::string::npos) << refused->output;
  auto triaged = testing::RunCommand({testing::Bin("cli/perfgate"), "triage", std::to_string(id), "--state",
                                      "investigating", "--note", "regressed again", "--by", "carol", "--http",
                                      http, "--token-file", token_file_});
  ASSERT_TRUE(triaged.ok()) << triaged.status();
  EXPECT_EQ(triaged->exit_code, 0) << triaged->output;
  EXPECT_NE(triaged->output.find("investigating"), std::string::npos) << triaged->output;

  pqxx::connection c(ConnInfo());
  pqxx::work txn(c);
  const pqxx::row reg = txn.exec_params1("SELECT state, fixed_by_commit FROM regressions WHERE id = $1", id);
  EXPECT_EQ(reg[0].as<std::string>(), "investigating");
  EXPECT_EQ(reg[1].as<std::string>(), "");
  const pqxx::result events = txn.exec_params(
      "SELECT from_state, to_state, actor, note, commit, at <= now() FROM regression_events "
      "WHERE regression_id = $1 ORDER BY id",
      id);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0][1].as<std::string>(), "new");
  EXPECT_EQ(events[1][0].as<std::string>(), "new");
  EXPECT_EQ(events[1][1].as<std::string>(), "acknowledged");
  EXPECT_EQ(events[1][2].as<std::string>(), "alice");
  EXPECT_EQ(events[1][3].as<std::string>(), "looking at NCCL 2.21");
  EXPECT_EQ(events[2][2].as<std::string>(), "bob");
  EXPECT_EQ(events[2][4].as<std::string>(), "c41");
  EXPECT_TRUE(events[2][5].as<bool>());
  EXPECT_EQ(events[3][0].as<std::string>(), "fixed");
  EXPECT_EQ(events[3][2].as<std::string>(), "carol");
}

}  // namespace
}  // namespace perfgate::regressions_e2e_test
