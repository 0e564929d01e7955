// perfgate-coordinator: `serve` the gRPC services over PostgreSQL, `migrate`
// the schema and exit, manage the callers' `credentials`, or run the
// `maintenance` a scheduler calls (partitions ahead of time, retention).
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <set>
#include <vector>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/tls_files.h"
#include "common/token_file.h"
#include "coordinator/credentials.h"
#include "coordinator/http_server.h"
#include "coordinator/maintenance.h"
#include "coordinator/regression_watcher.h"
#include "coordinator/expiry.h"
#include "coordinator/server.h"
#include "coordinator/store.h"
#include "gate/policy.h"

namespace {

using perfgate::coordinator::Server;
using perfgate::coordinator::Store;

struct Config {
  std::string database = "host=127.0.0.1 port=5432 dbname=perfgate user=perfgate";
  std::string listen = "127.0.0.1:50051";
  std::string token_file;
  std::string query_database;
  perfgate::TlsFiles tls;
  perfgate::coordinator::AuthConfig auth;
  int pool_size = 8;
  // credentials
  std::string name, role, output;
  std::string http_listen;  // empty: no HTTP
  std::vector<std::string> track_branches{"main"};
  std::string regression_policy;
  perfgate::coordinator::MaintenanceRequest maintenance;
  uint32_t expire_days = 0;
  double expire_runs_after_s = 24 * 3600;
};

int Fail(const absl::Status& s, const char* what) {
  std::cerr << "perfgate-coordinator: " << what << ": " << s.message() << "\n";
  return 2;
}

// The `maintenance` subcommand; *expire_days is its --expire-days option.
CLI::App* AddMaintenance(CLI::App& app, Config& config, CLI::Option** expire_days) {
  CLI::App* maintenance = app.add_subcommand(
      "maintenance", "Apply migrations, make the partitions of samples ahead of time, then remove expired runs");
  maintenance->add_option("--months-ahead", config.maintenance.months_ahead,
                          "Monthly partitions made beyond the current month")
      ->check(CLI::Range(0, 120))->capture_default_str();
  *expire_days = maintenance->add_option("--expire-days", config.expire_days,
                          "Remove finished runs (samples, summaries, batches, reports) finished more than this many "
                          "days ago")
      ->check(CLI::Range(0, 1000000));
  maintenance->add_option("--expire-branch", config.maintenance.expire_branch,
                          "Remove only runs of this branch (alone: every finished run of it)");
  return maintenance;
}

void AddServe(CLI::App& app, Config& c) {
  CLI::App* serve = app.add_subcommand("serve", "Apply pending migrations, then serve gRPC");
  serve->add_option("--listen", c.listen, "host:port to listen on (port 0: any free port)")
      ->envname("PERFGATE_LISTEN")->capture_default_str();
  serve->add_option("--token-file", c.token_file,
                    "File with a token shared by every caller, with role admin (docs/security.md)")
      ->envname("PERFGATE_TOKEN_FILE");
  serve->add_option("--query-database", c.query_database,
                    "libpq connection string for Query's reads, e.g. as a read-only role (default: --database)")
      ->envname("PERFGATE_QUERY_DATABASE");
  serve->add_flag("--require-credentials", c.auth.require_credentials,
                  "Every call but the health check needs a credential (`credentials issue`) or the shared token");
  serve->add_option("--tls-cert", c.tls.cert_file, "PEM certificate chain of this server: serve TLS only")
      ->envname("PERFGATE_TLS_CERT");
  serve->add_option("--tls-key", c.tls.key_file, "PEM private key of --tls-cert")->envname("PERFGATE_TLS_KEY");
  serve->add_option("--tls-client-ca", c.tls.ca_file,
                    "PEM CA certificates: clients must present a certificate they signed (mutual TLS)")
      ->envname("PERFGATE_TLS_CLIENT_CA");
  serve->add_option("--max-evaluations-per-caller", c.auth.max_evaluations,
                    "Gate evaluations one caller may have running at once")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  serve->add_option("--evaluations-per-minute", c.auth.evaluations_per_minute,
                    "Gate evaluations one caller may start per minute (0: no bound)")
      ->check(CLI::Range(0, 100000))->capture_default_str();
  serve->add_option("--http-listen", c.http_listen,
                    "host:port for the dashboard, JSON API, /metrics and /healthz (none: no HTTP)")
      ->envname("PERFGATE_HTTP_LISTEN");
  serve->add_option("--track-branch", c.track_branches,
                    "Branch whose closed runs are checked for regressions (repeatable)")
      ->capture_default_str();
  serve->add_option("--regression-policy", c.regression_policy,
                    "Policy (YAML) whose tolerances a regression must exceed (none: the defaults)");
  serve->add_option("--expire-runs-after", c.expire_runs_after_s,
                    "Seconds without word from a running run's agent (OpenRun, a batch) after which the run "
                    "is closed as failed; 0: never")
      ->envname("PERFGATE_EXPIRE_RUNS_AFTER")->check(CLI::Range(0.0, 1e9))->capture_default_str();
}

void AddCredentials(CLI::App& app, Config& c) {
  CLI::App* creds = app.add_subcommand("credentials", "Issue, revoke and list the callers' credentials");
  creds->require_subcommand(1);
  CLI::App* issue = creds->add_subcommand("issue", "Issue a credential and print its token (shown only this once)");
  issue->add_option("name", c.name, "Its name; for role agent, the one agent name it may ingest as")->required();
  issue->add_option("--role", c.role, "agent: ingest as NAME; read: query; gate: query and gate; admin: all")
      ->check(CLI::IsMember({"agent", "read", "gate", "admin"}))->required();
  issue->add_option("--output", c.output, "Write the token to this new file (mode 0600) instead of stdout");
  CLI::App* revoke = creds->add_subcommand("revoke", "Revoke every credential of a name, or one by its key id");
  revoke->add_option("name", c.name, "Name or key id")->required();
  creds->add_subcommand("list", "List the credentials: key id, name, role, issued, revoked");
}

// Writes the token to a file only its owner may read, which must not exist yet.
absl::Status WriteTokenFile(const std::string& path, const std::string& token) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InvalidArgumentError(path + ": " + std::strerror(errno));
  const std::string line = token + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  if (::close(fd) != 0 || !ok) return absl::InternalError(path + ": cannot write the token");
  return absl::OkStatus();
}

std::string When(perfgate::TimePoint t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromChrono(t), absl::UTCTimeZone());
}

int Credentials(CLI::App& creds, const Config& c, Store& store) {
  namespace pc = perfgate::coordinator;
  if (creds.got_subcommand("issue")) {
    auto issued = pc::IssueCredential(store, c.name, pc::ParseRole(c.role).value());
    if (!issued.ok()) return Fail(issued.status(), "cannot issue the credential");
    if (!c.output.empty()) {
      if (auto s = WriteTokenFile(c.output, issued->token); !s.ok()) {
        pc::RevokeCredential(store, issued->credential.key_id).IgnoreError();
        return Fail(s, "cannot write --output (the credential was revoked again)");
      }
    } else {
      std::cout << issued->token << std::endl;
    }
    std::cerr << "perfgate-coordinator: issued credential '" << c.name << "', role " << c.role << ", key id "
              << issued->credential.key_id << "; its token is shown only this once\n";
    return 0;
  }
  if (creds.got_subcommand("revoke")) {
    auto n = pc::RevokeCredential(store, c.name);
    if (!n.ok()) return Fail(n.status(), "cannot revoke");
    std::cerr << "perfgate-coordinator: revoked " << *n << " credential(s)\n";
    return 0;
  }
  auto all = pc::ListCredentials(store);
  if (!all.ok()) return Fail(all.status(), "cannot list credentials");
  std::cout << "key_id\tname\trole\tissued\trevoked\n";
  for (const pc::Credential& k : *all) {
    std::cout << k.key_id << "\t" << k.name << "\t" << pc::RoleName(k.role) << "\t" << When(k.created_at) << "\t"
              << (k.revoked_at ? When(*k.revoked_at) : std::string("-")) << "\n";
  }
  return 0;
}

// Everything `serve` reads from files, read before the database is touched.
absl::Status ReadServeFiles(const Config& c, perfgate::coordinator::ServerConfig* out) {
  out->listen = c.listen;
  out->auth = c.auth;
  if (!c.token_file.empty()) {
    auto token = perfgate::ReadTokenFile(c.token_file);
    if (!token.ok()) return absl::InvalidArgumentError(absl::StrCat("--token-file: ", token.status().message()));
    out->auth.shared_token = *std::move(token);
  }
  if (c.tls.cert_file.empty() && !c.tls.ca_file.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)");
  }
  auto tls = perfgate::LoadTlsFiles(c.tls, {"--tls-cert", "--tls-key", "--tls-client-ca"});
  if (!tls.ok()) return tls.status();
  out->tls = *std::move(tls);
  return absl::OkStatus();
}

// Starts the HTTP side when --http-listen asks for it; null when it does not.
absl::StatusOr<std::unique_ptr<perfgate::coordinator::HttpServer>> StartHttp(
    const Config& c, const perfgate::coordinator::ServerConfig& server_config, Store& store) {
  using perfgate::coordinator::HttpServer;
  if (c.http_listen.empty()) return std::unique_ptr<HttpServer>();
  // The gRPC side's credentials, TLS files and read-only store (http_server.h).
  auto http = HttpServer::Start(
      {c.http_listen, server_config.auth, server_config.tls, server_config.query_store}, store);
  if (!http.ok()) return http.status();
  const std::string host = c.http_listen.substr(0, c.http_listen.rfind(':'));
  std::cout << "perfgate-coordinator: dashboard at " << (*http)->scheme() << "://" << host << ":" << (*http)->port()
            << "/" << std::endl;
  return http;
}

// Serves gRPC (and HTTP when asked) until SIGINT or SIGTERM; closed runs of
// tracked branches are checked for regressions.
int Serve(const Config& c, perfgate::coordinator::ServerConfig server_config, Store& store) {
  if (!server_config.auth.enabled()) {
    std::cerr << "perfgate-coordinator: warning: no --token-file and no --require-credentials: anyone who "
                 "reaches " << server_config.listen << (c.http_listen.empty() ? "" : " or " + c.http_listen)
              << " may ingest, gate, read and triage (docs/security.md)\n";
  }
  // Signals are taken by a thread of their own so shutdown runs outside a handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // OpenSSL writes HTTPS answers with write(): a client gone mid-answer must
  // be an error of that answer, not a SIGPIPE that ends the process.
  std::signal(SIGPIPE, SIG_IGN);

  // Partitions of samples for this month and the next ones, made now (a
  // failure stops the start: rows would pile up in the default partition)
  // and every hour while serving.
  if (auto made = store.EnsurePartitions(std::chrono::system_clock::now(),
                                         perfgate::coordinator::kPartitionMonthsAhead);
      !made.ok()) {
    return Fail(made.status(), "cannot make the partitions of samples");
  }
  perfgate::coordinator::PartitionKeeper partitions(store);
  auto policy = perfgate::gate::ReadPolicyFile(c.regression_policy);
  if (!policy.ok()) return Fail(policy.status(), "bad --regression-policy");
  perfgate::coordinator::RegressionWatcher watcher(
      store, policy->policy, std::set<std::string>(c.track_branches.begin(), c.track_branches.end()));
  server_config.on_run_closed = [&watcher](const std::string& run_id, perfgate::RunStatus status) {
    watcher.RunClosed(run_id, status);
  };
  // HTTP first, so that its address is printed before "listening on", the
  // line that says the coordinator is ready.
  auto http = StartHttp(c, server_config, store);
  if (!http.ok()) return Fail(http.status(), "cannot start HTTP");
  auto server = Server::Start(server_config, store);
  if (!server.ok()) return Fail(server.status(), "cannot start");
  const std::string host = server_config.listen.substr(0, server_config.listen.rfind(':'));
  std::cout << "perfgate-coordinator: listening on " << host << ":" << (*server)->port()
            << (server_config.tls.cert.empty() ? "" : server_config.tls.ca.empty() ? " (TLS)" : " (mutual TLS)")
            << std::endl;

  std::unique_ptr<perfgate::coordinator::RunExpiry> expiry;
  if (c.expire_runs_after_s > 0) {
    expiry = std::make_unique<perfgate::coordinator::RunExpiry>(store, c.expire_runs_after_s);
  }
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    std::cout << "perfgate-coordinator: shutting down" << std::endl;
    (*server)->Shutdown();
  });
  (*server)->Wait();
  waiter.join();
  if (*http) (*http)->Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  CLI::App app{"perfgate-coordinator: store benchmark runs in PostgreSQL and gate merges"};
  app.set_config("--config", "", "TOML/INI file with option values (flags and PERFGATE_* override it)");
  app.require_subcommand(1);
  app.add_option("--database", config.database, "libpq connection string of the PostgreSQL database")
      ->envname("PERFGATE_DATABASE")->capture_default_str();
  app.add_option("--pool-size", config.pool_size, "Database connections kept open")
      ->check(CLI::Range(1, 256))->capture_default_str();
  AddServe(app, config);
  app.add_subcommand("migrate", "Apply pending schema migrations and exit");
  AddCredentials(app, config);
  CLI::Option* expire_days = nullptr;
  CLI::App* maintenance = AddMaintenance(app, config, &expire_days);
  CLI11_PARSE(app, argc, argv);

  // Files first: a wrong one is told before the database is touched.
  perfgate::coordinator::ServerConfig server_config;
  const bool serve = app.got_subcommand("serve");
  if (serve) {
    if (auto s = ReadServeFiles(config, &server_config); !s.ok()) return Fail(s, "bad option");
  }
  auto store = Store::Connect(config.database, config.pool_size);
  if (!store.ok()) return Fail(store.status(), "cannot reach the database");
  if (auto s = (*store)->Migrate(); !s.ok()) return Fail(s, "migration failed");
  auto version = (*store)->SchemaVersion();
  if (!version.ok()) return Fail(version.status(), "cannot read the schema version");
  if (app.got_subcommand("credentials")) return Credentials(*app.get_subcommand("credentials"), config, **store);
  std::cout << "perfgate-coordinator: schema at version " << *version << std::endl;
  if (maintenance->parsed()) {
    if (expire_days->count() > 0) config.maintenance.expire_days = config.expire_days;
    if (auto s = perfgate::coordinator::RunMaintenance(**store, config.maintenance, std::cout); !s.ok()) {
      return Fail(s, "maintenance failed");
    }
    return 0;
  }
  if (!serve) return 0;
  std::unique_ptr<Store> query_store;
  if (!config.query_database.empty()) {
    auto connected = Store::Connect(config.query_database, config.pool_size);
    if (!connected.ok()) return Fail(connected.status(), "cannot reach the --query-database");
    // A role that cannot read the schema's version cannot serve Query either.
    auto seen = (*connected)->SchemaVersion();
    if (!seen.ok()) return Fail(seen.status(), "cannot read through --query-database");
    query_store = std::move(*connected);
    server_config.query_store = query_store.get();
  }
  return Serve(config, server_config, **store);
}
