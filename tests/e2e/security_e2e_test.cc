// The security model over real processes: the coordinator binary with
// --require-credentials over a private PostgreSQL, credentials issued and
// revoked with `perfgate-coordinator credentials`, every RPC of Ingest, Gate
// and Query called with no, a wrong, an unknown and a revoked token, the
// roles and the agent-name binding, the per-caller bound on Gate.Evaluate,
// and TLS and mutual TLS with a throwaway CA through `perfgate`.
#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <pqxx/pqxx>
#include <regex>
#include <set>
#include <thread>
#include <iostream>

#include "client/coordinator_client.h"
#include "common/identity.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "perfgate/v1/gate.grpc.pb.h"
#include "perfgate/v1/ingest.grpc.pb.h"
#include "perfgate/v1/query.grpc.pb.h"
#include "tests/support/coordinator.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"
#include "tests/support/tls.h"

namespace perfgate::security_e2e_test {
namespace {

using testing::Bin;
using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

std::string Fixture(const std::string& name) { return std::string(PERFGATE_FORMATS_DIR) + "/" + name; }

v1::OpenRunRequest Open(const std::string& agent) {
  v1::OpenRunRequest req;
  req.set_run_id(NewUuid());
  req.set_agent_name(agent);
  req.mutable_environment()->set_sku("cpu-test");
  req.set_branch("main");
  req.set_commit("c0ffee");
  req.set_trigger(v1::TRIGGER_MANUAL);
  req.mutable_started_at()->set_seconds(1700000000);
  return req;
}

v1::ResultBatch Batch(const std::string& run_id) {
  v1::ResultBatch b;
  b.set_run_id(run_id);
  b.set_sequence(1);
  v1::CaseResult* c = b.add_cases();
  c->mutable_benchmark()->set_suite("kernels");
  c->mutable_benchmark()->set_name("copy");
  v1::MetricSpec* m = c->add_metrics();
  m->set_name("time");
  m->set_unit("ms");
  m->set_direction(v1::LOWER_IS_BETTER);
  for (uint32_t i = 0; i < 5; ++i) {
    v1::Sample* s = c->add_samples();
    s->set_index(i);
    s->add_values(1.0 + 0.01 * i);
  }
  c->set_status(v1::CASE_OK);
  return b;
}

// One RPC, called with whatever metadata the context carries.
using Call = std::function<grpc::Status(grpc::ClientContext*)>;

class SecurityEndToEnd : public testing::PostgresDirTest {
 protected:
  CommandResult Coordinator(std::vector<std::string> args) {
    args.insert(args.begin(), {Bin("coordinator/perfgate-coordinator"), "--database", ConnInfo()});
    auto r = RunCommand(args);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  // Issues a credential with `perfgate-coordinator credentials issue`; the
  // path of the file holding its token.
  std::string Issue(const std::string& name, const std::string& role) {
    const std::string path = dir_->Join(name + ".token");
    CommandResult r = Coordinator({"credentials", "issue", name, "--role", role, "--output", path});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return path;
  }

  std::string Token(const std::string& path) {
    auto text = testing::ReadFile(path);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? text->substr(0, text->find('\n')) : "";
  }

  void Start(std::vector<std::string> extra) {
    coordinator_.reset();
    auto started = testing::StartCoordinator(ConnInfo(), dir_->Join("coordinator.log"), extra);
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(started->process);
    address_ = started->address;
  }

  CommandResult Perfgate(std::vector<std::string> args) {
    args.insert(args.begin(), {Bin("cli/perfgate"), "--coordinator", address_, "--timeout", "5"});
    auto r = RunCommand(args);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  client::CoordinatorClient Client(const std::string& token_file) {
    auto options = client::MakeClientOptions(address_, token_file, 10);
    EXPECT_TRUE(options.ok()) << options.status();
    return client::CoordinatorClient(*options);
  }

  std::unique_ptr<testing::ChildProcess> coordinator_;
  std::string address_;
};

// Every method of Ingest, Gate and Query, called through the raw stubs.
std::map<std::string, Call> EveryCall(const std::shared_ptr<grpc::Channel>& channel) {
  std::shared_ptr<v1::Ingest::Stub> ingest = v1::Ingest::NewStub(channel);
  std::shared_ptr<v1::Gate::Stub> gate = v1::Gate::NewStub(channel);
  std::shared_ptr<v1::Query::Stub> query = v1::Query::NewStub(channel);
  const std::string run = NewUuid();
  std::map<std::string, Call> calls;
  calls["perfgate.v1.Ingest.RegisterAgent"] = [=](grpc::ClientContext* c) {
    v1::RegisterAgentRequest req;
    req.set_name("node-x");
    v1::RegisterAgentResponse resp;
    return ingest->RegisterAgent(c, req, &resp);
  };
  calls["perfgate.v1.Ingest.OpenRun"] = [=](grpc::ClientContext* c) {
    v1::OpenRunResponse resp;
    return ingest->OpenRun(c, Open("node-x"), &resp);
  };
  calls["perfgate.v1.Ingest.StreamResults"] = [=](grpc::ClientContext* c) {
    auto stream = ingest->StreamResults(c);
    v1::ResultBatch b;
    b.set_run_id(run);
    b.set_sequence(1);
    stream->Write(b);
    stream->WritesDone();
    v1::BatchAck ack;
    while (stream->Read(&ack)) {
    }
    return stream->Finish();
  };
  calls["perfgate.v1.Ingest.CloseRun"] = [=](grpc::ClientContext* c) {
    v1::CloseRunRequest req;
    req.set_run_id(run);
    req.set_status(v1::RUN_COMPLETE);
    v1::CloseRunResponse resp;
    return ingest->CloseRun(c, req, &resp);
  };
  calls["perfgate.v1.Ingest.PutCalibration"] = [=](grpc::ClientContext* c) {
    v1::PutCalibrationRequest req;
    req.set_agent_name("node-x");
    v1::PutCalibrationResponse resp;
    return ingest->PutCalibration(c, req, &resp);
  };
  calls["perfgate.v1.Gate.Evaluate"] = [=](grpc::ClientContext* c) {
    v1::EvaluateRequest req;
    req.set_candidate_run_id(run);
    v1::GateReport resp;
    return gate->Evaluate(c, req, &resp);
  };
  calls["perfgate.v1.Gate.GetReport"] = [=](grpc::ClientContext* c) {
    v1::GetReportRequest req;
    req.set_report_id(1);
    v1::GateReport resp;
    return gate->GetReport(c, req, &resp);
  };
  calls["perfgate.v1.Query.ListRuns"] = [=](grpc::ClientContext* c) {
    v1::ListRunsResponse resp;
    return query->ListRuns(c, v1::ListRunsRequest(), &resp);
  };
  calls["perfgate.v1.Query.GetRun"] = [=](grpc::ClientContext* c) {
    v1::GetRunRequest req;
    req.set_run_id(run);
    v1::RunDetail resp;
    return query->GetRun(c, req, &resp);
  };
  calls["perfgate.v1.Query.History"] = [=](grpc::ClientContext* c) {
    v1::HistoryRequest req;
    req.set_benchmark("kernels/copy");
    req.set_metric("time");
    v1::HistoryResponse resp;
    return query->History(c, req, &resp);
  };
  calls["perfgate.v1.Query.Fleet"] = [=](grpc::ClientContext* c) {
    v1::FleetRequest req;
    req.set_sku("cpu-test");
    req.set_sweep("42");
    v1::FleetResponse resp;
    return query->Fleet(c, req, &resp);
  };
  calls["perfgate.v1.Query.ListCalibrations"] = [=](grpc::ClientContext* c) {
    v1::ListCalibrationsResponse resp;
    return query->ListCalibrations(c, v1::ListCalibrationsRequest(), &resp);
  };
  return calls;
}

grpc::Status CallWith(const Call& call, const std::string& authorization) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
  return call(&ctx);
}

TEST_F(SecurityEndToEnd, EveryCallButHealthRefusesMissingWrongUnknownAndRevokedTokens) {
  const std::string admin = Token(Issue("operator", "admin"));
  const std::string revoked = Token(Issue("old-operator", "admin"));
  CommandResult r = Coordinator({"credentials", "revoke", "old-operator"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NO_FATAL_FAILURE(Start({"--require-credentials"}));

  auto channel = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
  const std::map<std::string, Call> calls = EveryCall(channel);
  // The table covers every method the services declare, so a method added
  // without a check fails here.
  std::set<std::string> declared;
  for (const char* service : {"perfgate.v1.Ingest", "perfgate.v1.Gate", "perfgate.v1.Query"}) {
    const auto* d = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
    ASSERT_NE(d, nullptr) << service;
    for (int i = 0; i < d->method_count(); ++i) declared.insert(d->method(i)->full_name());
  }
  std::set<std::string> called;
  for (const auto& [name, call] : calls) called.insert(name);
  EXPECT_EQ(called, declared);

  // A well-formed token that was never issued.
  const std::string unknown = "perfgate_0123456789abcdef_" + std::string(64, 'a');
  for (const auto& [name, call] : calls) {
    SCOPED_TRACE(name);
    EXPECT_EQ(CallWith(call, "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(CallWith(call, "Bearer wrong").error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(CallWith(call, "Bearer " + unknown).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(CallWith(call, "Bearer " + revoked).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(CallWith(call, "Basic " + admin).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    const grpc::Status ok = CallWith(call, "Bearer " + admin);
    EXPECT_NE(ok.error_code(), grpc::StatusCode::UNAUTHENTICATED) << ok.error_message();
    EXPECT_NE(ok.error_code(), grpc::StatusCode::PERMISSION_DENIED) << ok.error_message();
  }
  // The health check is the one open call.
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckResponse resp;
  ASSERT_TRUE(health->Check(&ctx, grpc::health::v1::HealthCheckRequest(), &resp).ok());
  EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(SecurityEndToEnd, RolesAndAgentNamesBindWhatACredentialMayDo) {
  const std::string node_a = Issue("node-a", "agent");
  const std::string node_b = Issue("node-b", "agent");
  const std::string reader = Issue("dashboard", "read");
  const std::string ci = Issue("ci", "gate");
  const std::string ci2 = Issue("ci-other", "gate");
  // Reads go through the read-only role (the credentials above migrated the
  // schema it is granted on).
  auto role = CreateReadOnlyRole();
  ASSERT_TRUE(role.ok()) << role.status();
  const std::string readonly = *role;
  ASSERT_NO_FATAL_FAILURE(
      Start({"--require-credentials", "--evaluations-per-minute", "1", "--query-database", readonly}));

  // An agent credential ingests as its own agent only.
  client::CoordinatorClient a = Client(node_a);
  ASSERT_TRUE(a.RegisterAgent("node-a", "host-a", "1").ok());
  EXPECT_TRUE(absl::IsPermissionDenied(a.RegisterAgent("node-b", "host-a", "1")));
  EXPECT_TRUE(absl::IsPermissionDenied(a.OpenRun(Open("node-b"))));
  const v1::OpenRunRequest run = Open("node-a");
  ASSERT_TRUE(a.OpenRun(run).ok());
  ASSERT_TRUE(a.SendBatch(Batch(run.run_id())).ok());
  EXPECT_TRUE(absl::IsPermissionDenied(a.ListRuns(v1::ListRunsRequest()).status()));

  // Another agent can neither take over node-a's name nor write its run.
  client::CoordinatorClient b = Client(node_b);
  absl::Status takeover = b.RegisterAgent("node-a", "evil", "6.6.6");
  EXPECT_TRUE(absl::IsPermissionDenied(takeover)) << takeover;
  EXPECT_NE(takeover.message().find("may ingest only as the agent of its name"), std::string::npos) << takeover;
  ASSERT_TRUE(b.RegisterAgent("node-b", "host-b", "1").ok());
  v1::CloseRunRequest close;
  close.set_run_id(run.run_id());
  close.set_status(v1::RUN_COMPLETE);
  close.set_last_sequence(1);
  EXPECT_TRUE(absl::IsPermissionDenied(b.CloseRun(close).status()));
  v1::ResultBatch second = Batch(run.run_id());
  second.set_sequence(2);
  EXPECT_TRUE(absl::IsPermissionDenied(b.SendBatch(second).status()));
  v1::PutCalibrationRequest calibration;
  calibration.set_agent_name("node-a");
  EXPECT_TRUE(absl::IsPermissionDenied(b.PutCalibration(calibration).status()));
  {
    pqxx::connection conn(ConnInfo());
    pqxx::read_transaction txn(conn);
    EXPECT_EQ(txn.exec1("SELECT hostname FROM agents WHERE name = 'node-a'")[0].as<std::string>(), "host-a");
    EXPECT_EQ(txn.exec1("SELECT count(*) FROM batches")[0].as<int>(), 1);
  }
  ASSERT_TRUE(a.CloseRun(close).ok());

  // A read credential reads, and can neither ingest nor gate.
  client::CoordinatorClient r = Client(reader);
  auto runs = r.ListRuns(v1::ListRunsRequest());
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->runs_size(), 1);
  EXPECT_EQ(runs->runs(0).run_id(), run.run_id());
  EXPECT_TRUE(r.GetRun(run.run_id()).ok());
  {
    pqxx::connection conn(readonly);
    pqxx::work txn(conn);
    EXPECT_THROW(txn.exec("INSERT INTO agents (name) VALUES ('intruder')"), pqxx::insufficient_privilege);
  }
  EXPECT_TRUE(absl::IsPermissionDenied(r.RegisterAgent("dashboard", "h", "1")));
  v1::EvaluateRequest gate;
  gate.set_candidate_run_id(run.run_id());
  absl::Status denied = r.Evaluate(gate).status();
  EXPECT_TRUE(absl::IsPermissionDenied(denied)) << denied;
  EXPECT_NE(denied.message().find("may not evaluate gates"), std::string::npos) << denied;

  // A gate credential gates, within its bound, and cannot ingest.
  client::CoordinatorClient g = Client(ci);
  absl::Status first = g.Evaluate(gate).status();
  EXPECT_FALSE(absl::IsPermissionDenied(first) || absl::IsUnauthenticated(first)) << first;
  absl::Status again = g.Evaluate(gate).status();
  EXPECT_TRUE(absl::IsResourceExhausted(again)) << again;
  EXPECT_NE(again.message().find("--evaluations-per-minute"), std::string::npos) << again;
  absl::Status other = Client(ci2).Evaluate(gate).status();
  EXPECT_FALSE(absl::IsResourceExhausted(other) || absl::IsPermissionDenied(other)) << other;
  EXPECT_TRUE(absl::IsPermissionDenied(g.RegisterAgent("ci", "h", "1")));

  // The CLI's read commands send the token of --token-file, before or after the subcommand.
  CommandResult none = Perfgate({"runs"});
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("authorization"), std::string::npos) << none.output;
  CommandResult listed = Perfgate({"--token-file", reader, "runs"});
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find(run.run_id()), std::string::npos) << listed.output;
  CommandResult shown = Perfgate({"run", run.run_id(), "--token-file", reader});
  EXPECT_EQ(shown.exit_code, 0) << shown.output;

  // Revoked: refused from the next call on, and listed with its date.
  CommandResult revoked = Coordinator({"credentials", "revoke", "node-a"});
  ASSERT_EQ(revoked.exit_code, 0) << revoked.output;
  EXPECT_TRUE(absl::IsUnauthenticated(a.RegisterAgent("node-a", "host-a", "1")));
  CommandResult list = Coordinator({"credentials", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(list.output, m, std::regex("node-a\tagent\t[0-9TZ:-]+\t[0-9]{4}-")))
      << list.output;
  EXPECT_TRUE(std::regex_search(list.output, m, std::regex("node-b\tagent\t[0-9TZ:-]+\t-"))) << list.output;
  EXPECT_EQ(list.output.find(Token(node_b)), std::string::npos) << "a token must never be listed";
}

TEST_F(SecurityEndToEnd, TlsAndMutualTlsWithASiteCa) {
  auto pki = testing::MakeTestPki(dir_->path());
  ASSERT_TRUE(pki.ok()) << pki.status();
  const std::string reader = Issue("dashboard", "read");
  const std::string node = Issue("bench-host-3", "agent");
  ASSERT_NO_FATAL_FAILURE(
      Start({"--require-credentials", "--tls-cert", pki->server_cert, "--tls-key", pki->server_key}));
  EXPECT_TRUE(coordinator_->WaitForLine("(TLS)", std::chrono::seconds(1))) << coordinator_->OutputTail();

  CommandResult ok = Perfgate({"--tls-ca", pki->ca_cert, "--token-file", reader, "runs"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  CommandResult plain = Perfgate({"--timeout", "2", "--token-file", reader, "runs"});
  EXPECT_EQ(plain.exit_code, 2) << plain.output;
  CommandResult stranger = Perfgate({"--timeout", "2", "--tls-ca", pki->other_ca_cert, "--token-file", reader, "runs"});
  EXPECT_EQ(stranger.exit_code, 2) << stranger.output;

  // Mutual TLS: the same server, now requiring a client certificate from the site CA.
  ASSERT_NO_FATAL_FAILURE(Start({"--require-credentials", "--tls-cert", pki->server_cert, "--tls-key",
                                 pki->server_key, "--tls-client-ca", pki->ca_cert}));
  EXPECT_TRUE(coordinator_->WaitForLine("(mutual TLS)", std::chrono::seconds(1))) << coordinator_->OutputTail();
  CommandResult no_cert = Perfgate({"--timeout", "2", "--tls-ca", pki->ca_cert, "--token-file", reader, "runs"});
  EXPECT_EQ(no_cert.exit_code, 2) << no_cert.output;
  const std::vector<std::string> mtls = {"--tls-ca", pki->ca_cert, "--tls-cert", pki->client_cert,
                                         "--tls-key", pki->client_key};
  std::vector<std::string> args = mtls;
  args.insert(args.end(), {"--token-file", reader, "runs"});
  CommandResult with_cert = Perfgate(args);
  EXPECT_EQ(with_cert.exit_code, 0) << with_cert.output;
  // A whole run ingested over mutual TLS by the agent credential of its node.
  args = mtls;
  args.insert(args.end(), {"--token-file", node, "ingest", Fixture("gbench_repetitions.json"), "--branch", "main",
                           "--commit", "c0ffee", "--sku", "cpu-test", "--node", "bench-host-3"});
  CommandResult ingested = Perfgate(args);
  EXPECT_EQ(ingested.exit_code, 0) << ingested.output << coordinator_->OutputTail();
  EXPECT_NE(ingested.output.find("run_id: "), std::string::npos) << ingested.output;
}

// The coordinator's peak resident memory in bytes (VmHWM of /proc/PID/status).
int64_t PeakRss(pid_t pid) {
  auto status = testing::ReadFile("/proc/" + std::to_string(pid) + "/status");
  EXPECT_TRUE(status.ok()) << status.status();
  std::smatch m;
  if (!status.ok() || !std::regex_search(*status, m, std::regex("VmHWM:\\s*([0-9]+) kB"))) return -1;
  return std::stoll(m[1]) * 1024;
}

// Over TLS a call without a valid token is refused from its metadata, before
// gRPC reads its message: four concurrent 60 MB Gate.Evaluate calls without
// a token leave the coordinator's peak memory far below their bodies (read
// whole, they would add more than 240 MB). Health stays open; a call with a
// token still reaches the handler.
TEST_F(SecurityEndToEnd, TlsRefusesACallWithoutATokenBeforeReadingItsMessage) {
  auto pki = testing::MakeTestPki(dir_->path());
  ASSERT_TRUE(pki.ok()) << pki.status();
  const std::string gater = Issue("ci", "gate");
  ASSERT_NO_FATAL_FAILURE(
      Start({"--require-credentials", "--tls-cert", pki->server_cert, "--tls-key", pki->server_key}));
  auto ca = testing::ReadFile(pki->ca_cert);
  ASSERT_TRUE(ca.ok()) << ca.status();
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = *ca;
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  auto channel = grpc::CreateCustomChannel(address_, grpc::SslCredentials(tls), args);
  std::shared_ptr<v1::Gate::Stub> gate = v1::Gate::NewStub(channel);
  const Call evaluate_big = [gate](grpc::ClientContext* c) {
    v1::EvaluateRequest req;
    req.set_candidate_run_id(NewUuid());
    req.set_policy_yaml(std::string(60 << 20, '#'));
    v1::GateReport resp;
    return gate->Evaluate(c, req, &resp);
  };
  ASSERT_EQ(CallWith(EveryCall(channel)["perfgate.v1.Query.ListRuns"], "").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);  // the channel is up before the baseline is taken
  const int64_t before = PeakRss(coordinator_->pid());
  std::vector<std::thread> callers;
  std::vector<grpc::Status> refused(4);
  for (size_t i = 0; i < refused.size(); ++i) {
    callers.emplace_back([&, i] { refused[i] = CallWith(evaluate_big, i % 2 == 0 ? "" : "Bearer unknown"); });
  }
  for (std::thread& t : callers) t.join();
  for (const grpc::Status& s : refused) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
  }
  const int64_t growth = PeakRss(coordinator_->pid()) - before;
  EXPECT_LT(growth, int64_t{100} << 20) << "peak RSS grew by " << (growth >> 20) << " MiB";
  std::cout << "coordinator peak RSS growth: " << (growth >> 20) << " MiB\n";

  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckResponse resp;
  EXPECT_TRUE(health->Check(&ctx, grpc::health::v1::HealthCheckRequest(), &resp).ok());
  const Call evaluate = [gate](grpc::ClientContext* c) {
    v1::EvaluateRequest req;
    req.set_candidate_run_id(NewUuid());
    v1::GateReport resp;
    return gate->Evaluate(c, req, &resp);
  };
  const grpc::Status authenticated = CallWith(evaluate, "Bearer " + Token(gater));
  EXPECT_NE(authenticated.error_code(), grpc::StatusCode::UNAUTHENTICATED) << authenticated.error_message();
  EXPECT_NE(authenticated.error_code(), grpc::StatusCode::PERMISSION_DENIED) << authenticated.error_message();
  EXPECT_NE(authenticated.error_code(), grpc::StatusCode::OK);  // the handler's answer: no such run
}

// A bad token or TLS file is told, with exit 2, before the database is
// touched: the database named here does not exist.
TEST(SecurityFiles, BadFilesAreToldBeforeTheDatabaseIsTouched) {
  auto dir = TempDir::Create("perfgate-security-files-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  auto pki = testing::MakeTestPki(dir->path());
  ASSERT_TRUE(pki.ok()) << pki.status();
  const std::string garbage = dir->Join("garbage.pem");
  std::ofstream(garbage) << "not a certificate\n";
  const std::string unreachable = "host=127.0.0.1 port=1 dbname=none user=none connect_timeout=2";
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--token-file", dir->Join("missing")}, "--token-file"},
      {{"--tls-cert", pki->server_cert, "--tls-key", pki->client_key}, "is not the key of the certificate"},
      {{"--tls-cert", garbage, "--tls-key", pki->server_key}, "no PEM certificate"},
      {{"--tls-cert", pki->server_cert}, "given together"},
      {{"--tls-cert", pki->server_cert, "--tls-key", pki->server_key, "--tls-client-ca", garbage},
       "--tls-client-ca"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {Bin("coordinator/perfgate-coordinator"), "--database", unreachable, "serve",
                                     "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = RunCommand(argv);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->exit_code, 2) << r->output;
    EXPECT_NE(r->output.find(c.expected), std::string::npos) << r->output;
    EXPECT_EQ(r->output.find("database"), std::string::npos) << r->output;
  }
  // A command line CLI11 refuses is the same exit 2 in every binary, and
  // --help is a pass.
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"coordinator/perfgate-coordinator", "migrate"}, {"cli/perfgate", "runs"}, {"agent/perfgate-agent", "run"}};
  for (const auto& [bin, sub] : commands) {
    auto bad = RunCommand({Bin(bin), sub, "--no-such-option"});
    ASSERT_TRUE(bad.ok()) << bad.status();
    EXPECT_EQ(bad->exit_code, 2) << bin << ": " << bad->output;
    EXPECT_NE(bad->output.find("--no-such-option"), std::string::npos) << bad->output;
    auto help = RunCommand({Bin(bin), "--help"});
    ASSERT_TRUE(help.ok()) << help.status();
    EXPECT_EQ(help->exit_code, 0) << bin << ": " << help->output;
  }
  // The clients read theirs before any call too.
  auto cli = RunCommand({Bin("cli/perfgate"), "--coordinator", "127.0.0.1:1", "--tls-ca", garbage, "runs"});
  ASSERT_TRUE(cli.ok()) << cli.status();
  EXPECT_EQ(cli->exit_code, 2) << cli->output;
  EXPECT_NE(cli->output.find("--tls-ca " + garbage + ": no PEM certificate"), std::string::npos) << cli->output;
  auto agent = RunCommand({Bin("agent/perfgate-agent"), "run", "--coordinator", "127.0.0.1:1", "--tls-cert",
                           pki->client_cert, "--tls-key", pki->server_key, "--filter", "none"});
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_EQ(agent->exit_code, 2) << agent->output;
  EXPECT_NE(agent->output.find("is not the key of the certificate"), std::string::npos) << agent->output;
}

// `perfgate-coordinator webhooks`: an endpoint is added, listed without its
// secret and removed; a bad one (a URL the grammar refuses, a password in
// it, a metadata, loopback or private address without --allow-private) is
// refused with exit 2 naming what is wrong, and nothing of it is stored.
TEST_F(SecurityEndToEnd, WebhooksAreAddedListedWithoutTheirSecretAndRemovedAndBadOnesAreRefused) {
  ASSERT_EQ(Coordinator({"migrate"}).exit_code, 0);
  const std::string secret = dir_->Join("hook.secret"), short_secret = dir_->Join("short.secret");
  std::ofstream(secret) << "0123456789abcdef-webhook-secret\n";
  std::ofstream(short_secret) << "too-short\n";
  CommandResult r = Coordinator({"webhooks", "add", "team-a", "--url", "https://hooks.example/perf", "--secret-file",
                                 secret, "--format", "slack", "--branch", "main", "--event", "regression.new"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("webhook 'team-a' added: regression.new on branches main"), std::string::npos) << r.output;
  const struct {
    std::vector<std::string> args;
    std::string expected;
  } refused[] = {
      {{"team-b", "--url", "ftp://hooks.example/x", "--secret-file", secret}, "--url: the scheme 'ftp' is not http"},
      {{"team-b", "--url", "https://hooks.example/a b", "--secret-file", secret}, "a space at character 24"},
      {{"team-b", "--url", "https://bot:hunter2@hooks.example/x", "--secret-file", secret}, "user information"},
      {{"team-b", "--url", "http://169.254.169.254/latest/meta-data/", "--secret-file", secret, "--allow-private"},
       "instance-metadata"},
      {{"team-b", "--url", "http://127.0.0.1:8080/hook", "--secret-file", secret}, "loopback"},
      {{"team-b", "--url", "http://[::1]:8080/hook", "--secret-file", secret}, "loopback"},
      {{"team-b", "--url", "http://10.1.2.3/hook", "--secret-file", secret}, "private (RFC 1918"},
      {{"team-b", "--url", "https://hooks.example/x", "--secret-file", short_secret}, "fewer than 16 characters"},
      {{"team b", "--url", "https://hooks.example/x", "--secret-file", secret}, "webhook name 'team b'"},
      {{"team-b", "--url", "https://hooks.example/x", "--secret-file", secret, "--event", "regresion.new"},
       "regresion.new"},
      {{"team-a", "--url", "https://hooks.example/again", "--secret-file", secret}, "team-a"},  // taken
  };
  for (const auto& c : refused) {
    std::vector<std::string> args = {"webhooks", "add"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    r = Coordinator(args);
    EXPECT_EQ(r.exit_code, 2) << c.expected << ": " << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("hunter2"), std::string::npos) << r.output;
  }
  r = Coordinator({"webhooks", "add", "local", "--url", "http://127.0.0.1:8080/hook", "--secret-file", secret,
                   "--allow-private"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("private addresses allowed"), std::string::npos) << r.output;
  r = Coordinator({"webhooks", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("team-a\thttps://hooks.example/perf\tslack\tmain\t*\tregression.new\tno\t"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("local\thttp://127.0.0.1:8080/hook\tjson\t*\t*\t"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bisection.finished\tyes\t"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("team-b"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("webhook-secret"), std::string::npos) << r.output;
  ASSERT_EQ(Coordinator({"webhooks", "remove", "team-a"}).exit_code, 0);
  r = Coordinator({"webhooks", "list"});
  EXPECT_EQ(r.output.find("team-a"), std::string::npos) << r.output;
  r = Coordinator({"webhooks", "remove", "team-a"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("team-a"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace perfgate::security_e2e_test
