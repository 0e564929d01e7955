// The HTTP side's security over real processes: the coordinator binary with
// --require-credentials and --http-listen over a private PostgreSQL,
// credentials issued and revoked with `perfgate-coordinator credentials`;
// every kind of route asked with no, a malformed, an unknown, a revoked and
// a wrong-role token; reads through the read-only database role of
// --query-database and triage through the main one; `perfgate regressions`
// and `perfgate triage` sending the credential; the webhook outbox as the
// read role sees it; HTTPS with the gRPC certificate and mutual TLS with a
// throwaway CA (real handshakes).
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <pqxx/pqxx>
#include <condition_variable>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <mutex>
#include <regex>
#include <thread>

#include "tests/coordinator/webhook_receiver.h"
#include "tests/support/coordinator.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"
#include "tests/support/raw_http.h"
#include "tests/support/tls.h"
#include "perfgate/v1/api.pb.h"
#include "perfgate/v1/query.pb.h"
#include "wire/api_json.h"

namespace perfgate::http_security_e2e_test {
namespace {

using Json = nlohmann::json;
using testing::Bin;
using testing::RawConnection;
using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

class HttpSecurityEndToEnd : public testing::PostgresDirTest {
 protected:
  CommandResult Run(std::vector<std::string> args) {
    auto r = RunCommand(args);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  // A credential issued by `perfgate-coordinator credentials issue`: the
  // path of the file holding its token.
  std::string Issue(const std::string& name, const std::string& role) {
    const std::string path = dir_->Join(name + ".token");
    CommandResult r = Run({Bin("coordinator/perfgate-coordinator"), "--database", ConnInfo(), "credentials",
                           "issue", name, "--role", role, "--output", path});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return path;
  }

  std::string Token(const std::string& path) {
    auto text = testing::ReadFile(path);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? text->substr(0, text->find('\n')) : "";
  }

  // Starts the coordinator with HTTP on a free port; `scheme` is what its
  // dashboard line must print.
  void Start(std::vector<std::string> extra, const std::string& scheme) {
    coordinator_.reset();
    extra.insert(extra.end(), {"--http-listen", "127.0.0.1:0"});
    auto started = testing::StartCoordinator(ConnInfo(), dir_->Join("coordinator.log"), extra);
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(started->process);
    address_ = started->address;
    std::smatch m;
    const std::string log = coordinator_->Output();
    ASSERT_TRUE(std::regex_search(log, m, std::regex("dashboard at " + scheme + R"(://127\.0\.0\.1:(\d+)/)")))
        << log;
    http_ = "127.0.0.1:" + m[1].str();
    port_ = std::stoi(m[1]);
  }

  httplib::Result Get(const std::string& path, const std::string& authorization) {
    httplib::Client c("127.0.0.1", port_);
    httplib::Headers headers;
    if (!authorization.empty()) headers.emplace("Authorization", authorization);
    return c.Get(path.c_str(), headers);
  }

  httplib::Result Triage(int64_t id, const std::string& token, const std::string& type = "application/json") {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth(token);
    const Json body = {{"state", "REGRESSION_STATE_ACKNOWLEDGED"}, {"note", "seen"}, {"by", "alice"}};
    return c.Post(("/api/v1/regressions/" + std::to_string(id) + "/triage").c_str(), body.dump(), type.c_str());
  }

  // `perfgate ARGS...` against the HTTP address.
  CommandResult Perfgate(std::vector<std::string> args) {
    args.insert(args.begin(), {Bin("cli/perfgate"), "--coordinator", address_, "--timeout", "5"});
    args.insert(args.end(), {"--http", http_});
    return Run(args);
  }

  std::unique_ptr<testing::ChildProcess> coordinator_;
  std::string address_, http_;
  int port_ = 0;
};

// The error of an answer: its status and the JSON body's "error".
std::string Error(const httplib::Result& res) {
  if (!res) return "no answer: " + httplib::to_string(res.error());
  const Json body = Json::parse(res->body, nullptr, false);
  return body.is_object() && body.contains("error") ? body["error"].get<std::string>() : res->body;
}

// A line of /proc/PID/status in kB ("VmHWM", the peak resident size).
int64_t ProcessKb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  }
  return -1;
}

TEST_F(HttpSecurityEndToEnd, RoutesNeedTheRoleTheyReadOrWriteWithAndReadsUseTheReadOnlyRole) {
  const std::string reader = Issue("dashboard", "read");
  const std::string agent = Issue("bench-host-3", "agent");
  const std::string ci = Issue("ci", "gate");
  const std::string old = Issue("old-dashboard", "read");
  ASSERT_EQ(Run({Bin("coordinator/perfgate-coordinator"), "--database", ConnInfo(), "credentials", "revoke",
                 "old-dashboard"}).exit_code, 0);
  // Reads go through the read-only role (the credentials above migrated the
  // schema it is granted on).
  auto role = CreateReadOnlyRole();
  ASSERT_TRUE(role.ok()) << role.status();
  const std::string readonly = *role;
  // --require-credentials with HTTP and no shared token.
  ASSERT_NO_FATAL_FAILURE(Start({"--require-credentials", "--query-database", readonly}, "http"));
  CommandResult ingested = Run({Bin("cli/perfgate"), "--coordinator", address_, "--token-file", agent, "ingest",
                                std::string(PERFGATE_FORMATS_DIR) + "/gbench_repetitions.json", "--branch", "main",
                                "--commit", "c0ffee", "--sku", "cpu-test", "--node", "bench-host-3"});
  ASSERT_EQ(ingested.exit_code, 0) << ingested.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ingested.output, m, std::regex("run_id: ([0-9a-f-]{36})"))) << ingested.output;
  const std::string run_id = m[1];

  // Open: the health check and the page's files.
  auto health = Get("/healthz", "");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto page = Get("/", "");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("data-testid=\"login\""), std::string::npos);

  // Refused reads: 401 with what is wrong, 403 for the agent's role.
  auto none = Get("/api/v1/runs", "");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_NE(Error(none).find("missing 'authorization: Bearer <token>' header"), std::string::npos) << Error(none);
  auto basic = Get("/api/v1/runs", "Basic " + Token(reader));
  EXPECT_EQ(basic->status, 401);
  EXPECT_NE(Error(basic).find("is not 'Bearer <token>'"), std::string::npos) << Error(basic);
  const std::string unknown = "perfgate_0123456789abcdef_" + std::string(64, 'a');
  for (const std::string& token : {unknown, Token(old), Token(reader) + "x"}) {
    auto res = Get("/api/v1/runs", "Bearer " + token);
    EXPECT_EQ(res->status, 401) << token;
    EXPECT_NE(Error(res).find("does not match any valid credential"), std::string::npos) << Error(res);
  }
  auto wrong_role = Get("/api/v1/runs/" + run_id, "Bearer " + Token(agent));
  EXPECT_EQ(wrong_role->status, 403);
  EXPECT_NE(Error(wrong_role).find("credential 'bench-host-3' (role agent) may not read"), std::string::npos)
      << Error(wrong_role);

  // Reads with role read (and gate), through the read-only database role.
  auto runs = Get("/api/v1/runs", "Bearer " + Token(reader));
  ASSERT_EQ(runs->status, 200) << runs->body;
  v1::ListRunsResponse runs_answer;
  ASSERT_TRUE(wire::FromApiJson(runs->body, &runs_answer, "runs").ok()) << runs->body;
  ASSERT_GE(runs_answer.runs_size(), 1) << runs->body;
  EXPECT_EQ(runs_answer.runs(0).run_id(), run_id) << runs->body;
  EXPECT_FALSE(runs_answer.has_data_as_of()) << "the primary answered";
  EXPECT_EQ(Get("/api/v1/runs/" + run_id, "Bearer " + Token(ci))->status, 200);
  auto report = Get("/api/v1/reports/424242", "Bearer " + Token(reader));
  EXPECT_EQ(report->status, 404) << report->body;
  // The read goes through perfgate_read: without its grant the same read fails.
  {
    pqxx::connection conn(ConnInfo());
    pqxx::work txn(conn);
    txn.exec("REVOKE SELECT ON gate_reports FROM perfgate_read");
    txn.commit();
  }
  report = Get("/api/v1/reports/424242", "Bearer " + Token(reader));
  EXPECT_EQ(report->status, 500) << report->body;
  EXPECT_NE(Error(report).find("permission denied for table gate_reports"), std::string::npos) << Error(report);

  // /metrics: a read credential, as a Prometheus scraper sends it.
  EXPECT_EQ(Get("/metrics", "")->status, 401);
  EXPECT_EQ(Get("/metrics", "Bearer " + Token(agent))->status, 403);
  auto metrics = Get("/metrics", "Bearer " + Token(reader));
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("perfgate_ingest_batches_total 1\n"), std::string::npos) << metrics->body;

  // Triage: gate or admin, through the main role (the read-only one may not
  // lock the row: the 404 is the main role's answer).
  auto refused = Triage(1, Token(reader));
  EXPECT_EQ(refused->status, 403);
  EXPECT_NE(Error(refused).find("(role read) may not triage regressions"), std::string::npos) << Error(refused);
  EXPECT_EQ(Triage(1, "")->status, 401);
  EXPECT_EQ(Triage(1, Token(ci), "text/plain")->status, 400);
  auto missing = Triage(424242, Token(ci));
  EXPECT_EQ(missing->status, 404) << missing->body;
  EXPECT_NE(Error(missing).find("regression 424242 does not exist"), std::string::npos) << Error(missing);

  // The CLI sends --token-file's credential and prints the server's refusal.
  CommandResult anonymous = Perfgate({"regressions"});
  EXPECT_EQ(anonymous.exit_code, 2) << anonymous.output;
  EXPECT_NE(anonymous.output.find("missing 'authorization: Bearer <token>' header"), std::string::npos)
      << anonymous.output;
  CommandResult listed = Perfgate({"--token-file", reader, "regressions"});
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("no regressions"), std::string::npos) << listed.output;
  CommandResult denied = Perfgate({"--token-file", reader, "triage", "7", "--state", "acknowledged", "--note", "x",
                                   "--by", "bob"});
  EXPECT_EQ(denied.exit_code, 2) << denied.output;
  EXPECT_NE(denied.output.find("(role read) may not triage regressions"), std::string::npos) << denied.output;
  CommandResult allowed = Perfgate({"--token-file", ci, "triage", "7", "--state", "acknowledged", "--note", "x",
                                    "--by", "bob"});
  EXPECT_EQ(allowed.exit_code, 2) << allowed.output;
  EXPECT_NE(allowed.output.find("regression 7 does not exist"), std::string::npos) << allowed.output;
}

// A failed webhook delivery as the read role sees it: the endpoint's name
// and the answer's status line, never the URL (whose path is the secret,
// as a Slack hook's is), the signing secret or what the receiver wrote in
// its body. The receiver is on loopback, so the endpoint needs
// --allow-private.
TEST_F(HttpSecurityEndToEnd, TheOutboxShowsTheReadRoleNoWebhookUrlSecretOrAnswerBody) {
  const std::string reader = Issue("dashboard", "read");
  coordinator::WebhookReceiver receiver(500, "internal-answer-body");
  ASSERT_TRUE(receiver.Start());
  const std::string signing = dir_->Join("hook.secret");
  std::ofstream(signing) << "signing-secret-0123456789abcdef\n";
  const std::vector<std::string> add = {Bin("coordinator/perfgate-coordinator"), "--database", ConnInfo(), "webhooks",
                                        "add", "team-kernels", "--url", receiver.url("/services/T000/s3cr3tpath"),
                                        "--secret-file", signing};
  CommandResult r = Run(add);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("loopback (127.0.0.0/8) address; add the endpoint with --allow-private"), std::string::npos)
      << r.output;
  std::vector<std::string> allowed = add;
  allowed.push_back("--allow-private");
  r = Run(allowed);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  {  // an event in the outbox, as a failed gate leaves one
    pqxx::connection c(ConnInfo());
    pqxx::work txn(c);
    txn.exec("INSERT INTO notification_outbox (endpoint_id, event_type, payload) "
             "SELECT id, 'gate.failed', '{\"type\": \"gate.failed\"}' FROM notification_endpoints");
    txn.commit();
  }
  ASSERT_NO_FATAL_FAILURE(
      Start({"--require-credentials", "--notify-interval", "0.05", "--notify-max-attempts", "1"}, "http"));
  std::string answer;
  v1::ListOutboxResponse outbox;
  ASSERT_TRUE(coordinator::WaitUntil([&] {
    const auto res = Get("/api/v1/notifications/outbox", "Bearer " + Token(reader));
    answer = res ? res->body : "";
    return res && res->status == 200 && wire::FromApiJson(answer, &outbox, "outbox").ok() &&
           outbox.outbox_size() == 1 && outbox.outbox(0).state() == v1::DELIVERY_STATE_FAILED;
  }, std::chrono::seconds(30))) << answer;
  const v1::OutboxEntry& entry = outbox.outbox(0);
  EXPECT_EQ(entry.endpoint(), "team-kernels");
  EXPECT_EQ(entry.payload().fields().at("type").string_value(), "gate.failed");  // the payload as stored
  const auto failed = Get("/api/v1/notifications/outbox?state=failed", "Bearer " + Token(reader));
  ASSERT_TRUE(failed && failed->status == 200);
  v1::ListOutboxResponse only_failed;
  ASSERT_TRUE(wire::FromApiJson(failed->body, &only_failed, "outbox").ok()) << failed->body;
  EXPECT_EQ(only_failed.outbox_size(), 1);
  const auto typo = Get("/api/v1/notifications/outbox?state=faild", "Bearer " + Token(reader));
  ASSERT_TRUE(typo);
  EXPECT_EQ(typo->status, 400) << typo->body;
  EXPECT_NE(typo->body.find("state: 'faild' is not one of pending, delivered, failed"), std::string::npos)
      << typo->body;
  EXPECT_EQ(entry.last_error(), "endpoint 'team-kernels': HTTP 500 Internal Server Error");
  for (const std::string& secret :
       {std::string("s3cr3tpath"), std::string("/services/"), std::to_string(receiver.port()),
        std::string("internal-answer-body"), std::string("signing-secret")}) {
    EXPECT_EQ(answer.find(secret), std::string::npos) << secret << " in " << answer;
  }
  ASSERT_EQ(receiver.deliveries().size(), 1u);
  EXPECT_EQ(receiver.deliveries()[0].path, "/hook/services/T000/s3cr3tpath");
}

TEST_F(HttpSecurityEndToEnd, HttpsWithTheGrpcCertificateAndMutualTls) {
  auto pki = testing::MakeTestPki(dir_->path());
  ASSERT_TRUE(pki.ok()) << pki.status();
  const std::string reader = Issue("dashboard", "read");
  ASSERT_NO_FATAL_FAILURE(
      Start({"--require-credentials", "--tls-cert", pki->server_cert, "--tls-key", pki->server_key}, "https"));

  // A plain-HTTP client gets no answer; a TLS client that trusts the CA does.
  httplib::Client plain("127.0.0.1", port_);
  plain.set_connection_timeout(5);
  plain.set_read_timeout(5);
  auto clear = plain.Get("/healthz");
  EXPECT_FALSE(clear && clear->status == 200) << "HTTPS answered plain HTTP";
  httplib::SSLClient tls("127.0.0.1", port_);
  tls.set_ca_cert_path(pki->ca_cert.c_str());
  tls.enable_server_certificate_verification(true);
  tls.set_bearer_token_auth(Token(reader));
  auto over_tls = tls.Get("/api/v1/runs");
  ASSERT_TRUE(over_tls) << httplib::to_string(over_tls.error());
  EXPECT_EQ(over_tls->status, 200) << over_tls->body;

  // The CLI: the CA of --tls-ca and the credential; a wrong CA, a wrong name
  // and plain HTTP are refused.
  CommandResult ok = Perfgate({"--tls-ca", pki->ca_cert, "--token-file", reader, "regressions"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("no regressions"), std::string::npos) << ok.output;
  CommandResult stranger = Perfgate({"--tls-ca", pki->other_ca_cert, "--token-file", reader, "regressions"});
  EXPECT_EQ(stranger.exit_code, 2) << stranger.output;
  EXPECT_NE(stranger.output.find("certificate verify failed"), std::string::npos) << stranger.output;
  CommandResult renamed = Perfgate({"--tls-ca", pki->ca_cert, "--tls-server-name", "elsewhere.example",
                                    "--token-file", reader, "regressions"});
  EXPECT_EQ(renamed.exit_code, 2) << renamed.output;
  CommandResult unencrypted = Perfgate({"--token-file", reader, "regressions"});
  EXPECT_EQ(unencrypted.exit_code, 2) << unencrypted.output;

  // Mutual TLS: a client certificate of the site CA is required on HTTPS too.
  ASSERT_NO_FATAL_FAILURE(Start({"--require-credentials", "--tls-cert", pki->server_cert, "--tls-key",
                                 pki->server_key, "--tls-client-ca", pki->ca_cert},
                                "https"));
  CommandResult no_cert = Perfgate({"--tls-ca", pki->ca_cert, "--token-file", reader, "regressions"});
  EXPECT_EQ(no_cert.exit_code, 2) << no_cert.output;
  EXPECT_NE(no_cert.output.find("perfgate: regressions: "), std::string::npos) << no_cert.output;
  CommandResult with_cert = Perfgate({"--tls-ca", pki->ca_cert, "--tls-cert", pki->client_cert, "--tls-key",
                                      pki->client_key, "--token-file", reader, "regressions"});
  EXPECT_EQ(with_cert.exit_code, 0) << with_cert.output;
  EXPECT_NE(with_cert.output.find("no regressions"), std::string::npos) << with_cert.output;
}

// Every answer, the open ones, the refusals and the parser's own errors,
// tells the browser not to guess types, not to run or frame anything from
// elsewhere and not to leak its URL; /healthz, which anyone may ask, says
// the database is away without the database's own words.
TEST_F(HttpSecurityEndToEnd, EveryAnswerCarriesSecurityHeadersAndHealthHidesTheDatabaseError) {
  ASSERT_NO_FATAL_FAILURE(Start({"--require-credentials"}, "http"));
  httplib::Client c("127.0.0.1", port_);
  std::vector<std::pair<std::string, httplib::Result>> answers;
  answers.emplace_back("page", c.Get("/"));
  answers.emplace_back("script", c.Get("/app.js"));
  answers.emplace_back("health", c.Get("/healthz"));
  answers.emplace_back("refused read", c.Get("/api/v1/runs"));
  answers.emplace_back("unknown route", c.Get("/no/such/page"));
  answers.emplace_back("refused write", c.Post("/api/v1/regressions/1/triage", std::string(100000, 'x'),
                                               "application/json"));
  for (const auto& [what, res] : answers) {
    ASSERT_TRUE(res) << what << ": " << httplib::to_string(res.error());
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff") << what;
    const std::string csp = res->get_header_value("Content-Security-Policy");
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << what << ": " << csp;
    EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << what << ": " << csp;
    EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << what << ": " << csp;
    EXPECT_EQ(res->get_header_value("Referrer-Policy"), "no-referrer") << what;
    EXPECT_EQ(res->get_header_value("X-Frame-Options"), "DENY") << what;
  }
  EXPECT_EQ(answers[0].second->status, 200);
  EXPECT_EQ(answers[3].second->status, 401);
  EXPECT_EQ(answers[4].second->status, 404);
  EXPECT_EQ(answers[5].second->status, 413);

  // The database stops: the health answer is fixed text, the detail is in
  // the coordinator's log.
  server().Stop();
  auto down = c.Get("/healthz");
  ASSERT_TRUE(down) << httplib::to_string(down.error());
  EXPECT_EQ(down->status, 503);
  EXPECT_EQ(down->body, "database unavailable (see the coordinator log)\n");
  EXPECT_EQ(down->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_TRUE(coordinator_->WaitForLine("/healthz: database unavailable: ", std::chrono::seconds(10)))
      << coordinator_->Output();
  ASSERT_TRUE(server().StartAgain().ok());
}

// A body is bounded before anything else looks at the request: a chunked
// body (no size up front), a body on a GET and one beyond the limit are
// refused as soon as their headers arrive, without a token, and the
// connection is closed instead of reading on. 300 MB sent at each leaves
// the coordinator's peak memory within 100 MB of where it was.
TEST_F(HttpSecurityEndToEnd, BodiesAreRefusedBeforeTheyAreReadChunkedOnesAndOnesOnAGetToo) {
  ASSERT_NO_FATAL_FAILURE(Start({"--require-credentials"}, "http"));
  const pid_t pid = coordinator_->pid();
  const int64_t before_kb = ProcessKb(pid, "VmRSS");
  ASSERT_GT(before_kb, 0);
  const std::string megabyte(1 << 20, 'x');
  struct Case {
    std::string head;
    std::string chunk;
    std::string status;
  };
  const std::vector<Case> cases = {
      {"POST /api/v1/regressions/1/triage HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
       "Transfer-Encoding: chunked\r\n\r\n",
       "100000\r\n" + megabyte + "\r\n", "HTTP/1.1 411"},
      {"GET /healthz HTTP/1.1\r\nHost: h\r\nContent-Length: 314572800\r\n\r\n", megabyte, "HTTP/1.1 413"},
      {"GET /healthz HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", "100000\r\n" + megabyte + "\r\n",
       "HTTP/1.1 411"},
      {"POST /api/v1/regressions/1/triage HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
       "Content-Length: 314572800\r\n\r\n",
       megabyte, "HTTP/1.1 413"},
  };
  for (const Case& c : cases) {
    RawConnection conn(port_);
    ASSERT_TRUE(conn.connected());
    ASSERT_TRUE(conn.Send(c.head));
    // The answer comes before any of the body is sent.
    const std::string answer = conn.Receive(std::chrono::seconds(10));
    EXPECT_EQ(answer.substr(0, c.status.size()), c.status) << c.head << "\n" << answer;
    EXPECT_NE(answer.find("X-Content-Type-Options: nosniff"), std::string::npos) << answer;
    int sent = 0;
    while (sent < 300 && conn.Send(c.chunk)) ++sent;
    EXPECT_LT(sent, 300) << c.head << ": the coordinator read a 300 MB body";
  }
  const int64_t peak_kb = ProcessKb(pid, "VmHWM");
  std::cout << "coordinator resident before: " << before_kb << " kB, peak after 4 x 300 MB: " << peak_kb << " kB\n";
  EXPECT_LT(peak_kb - before_kb, 100 * 1024) << "resident " << before_kb << " kB before, peak " << peak_kb << " kB";
  auto health = Get("/healthz", "");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// Slow clients, each trickling a header line faster than any per-read
// timeout, and idle ones take no more than their share: /healthz answers
// while they hang on, and each is disconnected once its request has taken
// longer than the request limit (10 s) or, idle, the idle limit (5 s).
TEST_F(HttpSecurityEndToEnd, SlowAndIdleClientsDoNotStopTheHttpPort) {
  ASSERT_NO_FATAL_FAILURE(Start({"--require-credentials"}, "http"));
  constexpr int kSlow = 12;
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  std::vector<double> held_s(kSlow, -1);
  RawConnection idle(port_);
  EXPECT_TRUE(idle.connected());
  std::vector<std::thread> slow;
  for (int i = 0; i < kSlow; ++i) {
    slow.emplace_back([&, i] {
      RawConnection conn(port_);
      const auto begin = std::chrono::steady_clock::now();
      const bool ok = conn.connected() && conn.Send("GET /healthz HTTP/1.1\r\nHost: h\r\n");
      {
        std::lock_guard<std::mutex> lock(mu);
        ++started;
      }
      cv.notify_all();
      if (!ok) return;
      // A header line every 300 ms, for at most 40 s, until the server hangs up.
      for (int line = 0; line < 133; ++line) {
        if (conn.ClosedWithin(std::chrono::milliseconds(300)) || !conn.Send("X-Slow: " + std::to_string(line) + "\r\n")) {
          held_s[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
          return;
        }
      }
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return started == kSlow; });
  }
  httplib::Client c("127.0.0.1", port_);
  c.set_connection_timeout(5);
  c.set_read_timeout(5);
  for (int i = 0; i < 3; ++i) {
    const auto asked = std::chrono::steady_clock::now();
    auto health = c.Get("/healthz");
    std::cout << "/healthz with " << kSlow << " slow clients: "
              << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked).count()
              << " ms\n";
    EXPECT_TRUE(health && health->status == 200)
        << "with " << kSlow << " slow clients: " << (health ? health->body : httplib::to_string(health.error()));
  }
  EXPECT_TRUE(idle.ClosedWithin(std::chrono::seconds(20))) << "an idle connection was kept";
  for (std::thread& t : slow) t.join();
  for (int i = 0; i < kSlow; ++i) {
    EXPECT_GE(held_s[i], 0) << "slow client " << i << " was never disconnected";
    EXPECT_LT(held_s[i], 30) << "slow client " << i;
  }
  std::cout << "slow clients disconnected after " << *std::min_element(held_s.begin(), held_s.end()) << " to "
            << *std::max_element(held_s.begin(), held_s.end()) << " s\n";
}

}  // namespace
}  // namespace perfgate::http_security_e2e_test
