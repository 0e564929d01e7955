// perfgate-coordinator: `serve` the gRPC services over PostgreSQL, or
// `migrate` the schema and exit.
#include <CLI/CLI.hpp>

#include <csignal>
#include <iostream>
#include <thread>

#include "common/token_file.h"
#include "coordinator/expiry.h"
#include "coordinator/server.h"
#include "coordinator/store.h"

namespace {

struct Config {
  std::string database = "host=127.0.0.1 port=5432 dbname=perfgate user=perfgate";
  std::string listen = "127.0.0.1:50051";
  std::string token_file;
  int pool_size = 8;
  double expire_runs_after_s = 24 * 3600;
};

int Fail(const absl::Status& s, const char* what) {
  std::cerr << "perfgate-coordinator: " << what << ": " << s.message() << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using perfgate::coordinator::Server;
  using perfgate::coordinator::Store;
  Config config;
  CLI::App app{"perfgate-coordinator: store benchmark runs in PostgreSQL and gate merges"};
  app.set_config("--config", "", "TOML/INI file with option values (flags and PERFGATE_* override it)");
  app.require_subcommand(1);
  app.add_option("--database", config.database, "libpq connection string of the PostgreSQL database")
      ->envname("PERFGATE_DATABASE")->capture_default_str();
  app.add_option("--pool-size", config.pool_size, "Database connections kept open")
      ->check(CLI::Range(1, 256))->capture_default_str();
  CLI::App* serve = app.add_subcommand("serve", "Apply pending migrations, then serve gRPC");
  serve->add_option("--listen", config.listen, "host:port to listen on (port 0: any free port)")
      ->envname("PERFGATE_LISTEN")->capture_default_str();
  serve->add_option("--token-file", config.token_file,
                    "File with the bearer token agents must present (none: no check)")
      ->envname("PERFGATE_TOKEN_FILE");
  serve->add_option("--expire-runs-after", config.expire_runs_after_s,
                    "Seconds without word from a running run's agent (OpenRun, a batch) after which the run "
                    "is closed as failed; 0: never")
      ->envname("PERFGATE_EXPIRE_RUNS_AFTER")->check(CLI::Range(0.0, 1e9))->capture_default_str();
  app.add_subcommand("migrate", "Apply pending schema migrations and exit");
  CLI11_PARSE(app, argc, argv);

  auto store = Store::Connect(config.database, config.pool_size);
  if (!store.ok()) return Fail(store.status(), "cannot reach the database");
  if (auto s = (*store)->Migrate(); !s.ok()) return Fail(s, "migration failed");
  auto version = (*store)->SchemaVersion();
  if (!version.ok()) return Fail(version.status(), "cannot read the schema version");
  std::cout << "perfgate-coordinator: schema at version " << *version << std::endl;
  if (!serve->parsed()) return 0;

  perfgate::coordinator::ServerConfig server_config;
  server_config.listen = config.listen;
  if (!config.token_file.empty()) {
    auto token = perfgate::ReadTokenFile(config.token_file);
    if (!token.ok()) return Fail(token.status(), "bad --token-file");
    server_config.token = *std::move(token);
  }
  // Signals are taken by a thread of their own so shutdown runs outside a handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto server = Server::Start(server_config, **store);
  if (!server.ok()) return Fail(server.status(), "cannot start");
  const std::string host = config.listen.substr(0, config.listen.rfind(':'));
  std::cout << "perfgate-coordinator: listening on " << host << ":" << (*server)->port() << std::endl;

  std::unique_ptr<perfgate::coordinator::RunExpiry> expiry;
  if (config.expire_runs_after_s > 0) {
    expiry = std::make_unique<perfgate::coordinator::RunExpiry>(**store, config.expire_runs_after_s);
  }
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    std::cout << "perfgate-coordinator: shutting down" << std::endl;
    (*server)->Shutdown();
  });
  (*server)->Wait();
  waiter.join();
  return 0;
}
