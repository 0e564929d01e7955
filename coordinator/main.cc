// perfgate-coordinator: `serve` the gRPC services over PostgreSQL, or
// `migrate` the schema and exit, or run the `maintenance` a scheduler calls
// (partitions ahead of time, retention).
#include <CLI/CLI.hpp>

#include <csignal>
#include <iostream>
#include <thread>

#include "common/token_file.h"
#include "coordinator/maintenance.h"
#include "coordinator/server.h"
#include "coordinator/store.h"

namespace {

struct Config {
  std::string database = "host=127.0.0.1 port=5432 dbname=perfgate user=perfgate";
  std::string listen = "127.0.0.1:50051";
  std::string token_file;
  int pool_size = 8;
  perfgate::coordinator::MaintenanceRequest maintenance;
  uint32_t expire_days = 0;
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
  app.add_subcommand("migrate", "Apply pending schema migrations and exit");
  CLI::Option* expire_days = nullptr;
  CLI::App* maintenance = AddMaintenance(app, config, &expire_days);
  CLI11_PARSE(app, argc, argv);

  auto store = Store::Connect(config.database, config.pool_size);
  if (!store.ok()) return Fail(store.status(), "cannot reach the database");
  if (auto s = (*store)->Migrate(); !s.ok()) return Fail(s, "migration failed");
  auto version = (*store)->SchemaVersion();
  if (!version.ok()) return Fail(version.status(), "cannot read the schema version");
  std::cout << "perfgate-coordinator: schema at version " << *version << std::endl;
  if (maintenance->parsed()) {
    if (expire_days->count() > 0) config.maintenance.expire_days = config.expire_days;
    if (auto s = perfgate::coordinator::RunMaintenance(**store, config.maintenance, std::cout); !s.ok()) {
      return Fail(s, "maintenance failed");
    }
    return 0;
  }
  if (!serve->parsed()) return 0;
  // Partitions of samples for this month and the next ones, made now (a
  // failure stops the start: rows would pile up in the default partition)
  // and every hour while serving.
  if (auto made = (*store)->EnsurePartitions(std::chrono::system_clock::now(),
                                             perfgate::coordinator::kPartitionMonthsAhead);
      !made.ok()) {
    return Fail(made.status(), "cannot make the partitions of samples");
  }
  perfgate::coordinator::PartitionKeeper partitions(**store);

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
