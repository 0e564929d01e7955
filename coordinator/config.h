// The configuration of perfgate-coordinator: one struct filled from
// defaults, a --config file, PERFGATE_* variables and flags (CLI11), in that
// order, and checked at start (ParseCommandLine): everything `serve` reads
// from files (the shared token, the TLS files) is read here, before the
// database is touched.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/tls_files.h"
#include "coordinator/api/auth.h"
#include "coordinator/api/http_admission.h"
#include "coordinator/domain/maintenance.h"
#include "coordinator/domain/notifier.h"
#include "coordinator/api/server.h"

namespace perfgate::coordinator {

/// The subcommands of perfgate-coordinator.
enum class Command { kServe, kMigrate, kCredentials, kMaintenance, kWebhooks };

/// What `credentials` does.
enum class CredentialsAction { kIssue, kRevoke, kList };

/// What `webhooks` does.
enum class WebhooksAction { kAdd, kList, kRemove, kOutbox };

/// Everything the coordinator's commands read.
struct CoordinatorConfig {
  std::string database = "host=127.0.0.1 port=5432 dbname=perfgate user=perfgate";
  int pool_size = 8;

  // serve
  std::string listen = "127.0.0.1:50051";
  std::string token_file;
  std::string query_database;
  TlsFiles tls;
  AuthConfig auth;
  std::string http_listen;  // empty: no HTTP
  AdmissionLimits http_admission;  // HTTP connections at once, per address and in all
  // Serve tokens over plaintext on an address other than loopback.
  bool allow_plaintext = false;
  std::vector<std::string> track_branches{"main"};
  std::string regression_policy;
  double expire_runs_after_s = 24 * 3600;
  NotifierOptions notify;
  /// Parsed at start from the options above and the files they name.
  ServerConfig server;

  // credentials
  CredentialsAction credentials = CredentialsAction::kList;
  std::string name, role, output;

  // maintenance
  MaintenanceRequest maintenance;

  // webhooks (the endpoint's secret is read from secret_file at start)
  WebhooksAction webhooks = WebhooksAction::kList;
  store::NotificationEndpoint endpoint;
  std::string secret_file;
  store::OutboxFilter outbox;
};

/// A command line, parsed and checked.
struct CommandLine {
  Command command = Command::kMigrate;
  CoordinatorConfig config;
  /// Set when the process ends here: kExitPass after --help, kExitError for
  /// a bad command line (CLI11 says why) or a file `serve` cannot read (told
  /// on stderr as "perfgate-coordinator: bad option: <reason>").
  std::optional<int> exit_code;
};

/// Parses argv (and the --config file and PERFGATE_* variables) and reads
/// the files `serve` needs.
CommandLine ParseCommandLine(int argc, char** argv);

}  // namespace perfgate::coordinator
