#include <pthread.h>

#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "common/exit_codes.h"
#include "common/status_macros.h"
#include "coordinator/commands.h"
#include "coordinator/domain/expiry.h"
#include "coordinator/api/http_server.h"
#include "coordinator/domain/maintenance.h"
#include "coordinator/domain/notifier.h"
#include "coordinator/domain/regression_watcher.h"
#include "coordinator/api/server.h"
#include "gate/policy.h"

namespace perfgate::coordinator {
namespace {

// Starts the HTTP side when --http-listen asks for it; null when it does not.
absl::StatusOr<std::unique_ptr<HttpServer>> StartHttp(const CoordinatorConfig& c,
                                                      const ServerConfig& server_config, Store& store) {
  if (c.http_listen.empty()) return std::unique_ptr<HttpServer>();
  // The gRPC side's credentials, TLS files and read-only store (http_server.h).
  auto http = HttpServer::Start(
      {c.http_listen, server_config.auth, server_config.tls, server_config.query_store, c.http_admission}, store);
  PERFGATE_RETURN_IF_ERROR(http);
  const std::string host = c.http_listen.substr(0, c.http_listen.rfind(':'));
  std::cout << "perfgate-coordinator: dashboard at " << (*http)->scheme() << "://" << host << ":" << (*http)->port()
            << "/" << std::endl;
  return http;
}

// Serves gRPC (and HTTP when asked) until SIGINT or SIGTERM; closed runs of
// tracked branches are checked for regressions; the notification outbox is
// delivered.
int Serve(const CoordinatorConfig& c, ServerConfig server_config, Store& store) {
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
                                         kPartitionMonthsAhead);
      !made.ok()) {
    return Fail(made.status(), "cannot make the partitions of samples");
  }
  PartitionKeeper partitions(store);
  auto policy = gate::ReadPolicyFile(c.regression_policy);
  if (!policy.ok()) return Fail(policy.status(), "bad --regression-policy");
  RegressionWatcher watcher(
      store, policy->policy, std::set<std::string>(c.track_branches.begin(), c.track_branches.end()));
  server_config.on_run_closed = [&watcher](const std::string& run_id, RunStatus status) {
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

  // The outbox is delivered by every replica; rows are claimed one replica each.
  Notifier notifier(store, c.notify);
  notifier.Start();
  std::unique_ptr<RunExpiry> expiry;
  if (c.expire_runs_after_s > 0) {
    expiry = std::make_unique<RunExpiry>(store, c.expire_runs_after_s);
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
  return kExitPass;
}

}  // namespace

int ServeCommand(const CoordinatorConfig& config) {
  auto store = OpenStoreAndTellVersion(config);
  if (!store.ok()) return kExitError;
  ServerConfig server_config = config.server;
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

}  // namespace perfgate::coordinator
