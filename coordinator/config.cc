#include "coordinator/config.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iostream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/exit_codes.h"
#include "common/parse_errors.h"
#include "common/status_macros.h"
#include "common/token_file.h"
#include "coordinator/commands.h"

namespace perfgate::coordinator {
namespace {

// The `maintenance` subcommand; --expire-days goes to *expire_days_value,
// and *expire_days tells whether it was given.
CLI::App* AddMaintenance(CLI::App& app, CoordinatorConfig& config, uint32_t* expire_days_value,
                         CLI::Option** expire_days) {
  CLI::App* maintenance = app.add_subcommand(
      "maintenance", "Apply migrations, make the partitions of samples ahead of time, then remove expired runs");
  maintenance->add_option("--months-ahead", config.maintenance.months_ahead,
                          "Monthly partitions made beyond the current month")
      ->check(CLI::Range(0, 120))->capture_default_str();
  *expire_days = maintenance->add_option("--expire-days", *expire_days_value,
                          "Remove finished runs (samples, summaries, batches, reports) finished more than this many "
                          "days ago")
      ->check(CLI::Range(0, 1000000));
  maintenance->add_option("--expire-branch", config.maintenance.expire_branch,
                          "Remove only runs of this branch (alone: every finished run of it)");
  return maintenance;
}

// How many HTTP connections one client and all together may hold.
void AddHttpLimits(CLI::App& serve, CoordinatorConfig& c) {
  serve.add_option("--http-connections-per-address", c.http_admission.max_per_address,
                   "HTTP connections served at once from one client address (an IPv6 /64)")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  serve.add_option("--http-max-connections", c.http_admission.max_connections,
                   "HTTP connections served at once in all (a thread each)")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  serve.add_option("--http-trusted-proxy", c.http_admission.trusted_proxies,
                   "Numeric address of a reverse proxy in front whose connections count only toward "
                   "--http-max-connections (repeatable)");
}

CLI::App* AddServe(CLI::App& app, CoordinatorConfig& c) {
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
  AddHttpLimits(*serve, c);
  serve->add_flag("--allow-plaintext", c.allow_plaintext,
                  "With --token-file or --require-credentials, serve without TLS on an address other than "
                  "loopback (tokens then cross the network in clear; docs/security.md)");
  serve->add_option("--track-branch", c.track_branches,
                    "Branch whose closed runs are checked for regressions (repeatable)")
      ->capture_default_str();
  serve->add_option("--regression-policy", c.regression_policy,
                    "Policy (YAML) whose tolerances a regression must exceed (none: the defaults)");
  serve->add_option("--public-url", c.notify.public_url,
                    "The dashboard's address as people reach it, for links in notifications")
      ->envname("PERFGATE_PUBLIC_URL");
  serve->add_option("--webhook-ca", c.notify.ca_file,
                    "PEM CA bundle HTTPS webhook endpoints are verified with (default: the system's)")
      ->check(CLI::ExistingFile);
  serve->add_option("--notify-interval", c.notify.poll_interval_s, "Seconds between looks at the outbox")
      ->check(CLI::Range(0.01, 3600.0))->capture_default_str();
  serve->add_option("--notify-backoff", c.notify.backoff_initial_s,
                    "Seconds before the first retry of a failed delivery; doubled each time up to an hour")
      ->check(CLI::Range(0.01, 3600.0))->capture_default_str();
  serve->add_option("--notify-max-attempts", c.notify.max_attempts,
                    "Attempts after which a delivery is marked failed")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  serve->add_option("--expire-runs-after", c.expire_runs_after_s,
                    "Seconds without word from a running run's agent (OpenRun, a batch) after which the run "
                    "is closed as failed; 0: never")
      ->envname("PERFGATE_EXPIRE_RUNS_AFTER")->check(CLI::Range(0.0, 1e9))->capture_default_str();
  return serve;
}

CLI::App* AddCredentials(CLI::App& app, CoordinatorConfig& c) {
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
  return creds;
}

CLI::App* AddWebhooks(CLI::App& app, CoordinatorConfig& c) {
  CLI::App* hooks = app.add_subcommand("webhooks", "Add, list and remove webhook endpoints; show the outbox");
  hooks->require_subcommand(1);
  CLI::App* add = hooks->add_subcommand("add", "Add an endpoint told of the events of matching branches and SKUs");
  add->add_option("name", c.endpoint.name, "Its name (letters, digits, '.', '_', '-')")->required();
  add->add_option("--url", c.endpoint.url, "http:// or https:// URL each event is POSTed to")->required();
  add->add_option("--secret-file", c.secret_file, "File whose first line is the signing secret (16+ characters)")
      ->required();
  add->add_flag("--allow-private", c.endpoint.allow_private,
                "Allow loopback, private and link-local addresses (a receiver on this host or network); "
                "cloud metadata addresses stay refused");
  add->add_option("--format", c.endpoint.format, "json (the event) or slack (a Slack-compatible message)")
      ->check(CLI::IsMember({"json", "slack"}))->capture_default_str();
  add->add_option("--branch", c.endpoint.branch, "Glob of the branches it wants ('*': any)")->capture_default_str();
  add->add_option("--sku", c.endpoint.sku, "Glob of the SKUs it wants ('*': any)")->capture_default_str();
  const std::vector<std::string> events(std::begin(store::kNotificationEvents), std::end(store::kNotificationEvents));
  c.endpoint.events = events;
  add->add_option("--event", c.endpoint.events, "An event it wants (repeatable; default: all)")
      ->check(CLI::IsMember(events));
  CLI::App* remove = hooks->add_subcommand("remove", "Remove an endpoint and its deliveries");
  remove->add_option("name", c.endpoint.name, "Its name")->required();
  hooks->add_subcommand("list", "List the endpoints (never their secrets)");
  CLI::App* outbox = hooks->add_subcommand("outbox", "List deliveries, newest first: state, attempts, last error");
  outbox->add_option("--endpoint", c.outbox.endpoint, "Only this endpoint's");
  outbox->add_option_function<std::string>(
            "--state", [&c](const std::string& name) { c.outbox.state = store::ParseDeliveryState(name); },
            "Only deliveries in this state: pending, delivered or failed")
      ->check(CLI::IsMember({"pending", "delivered", "failed"}));
  outbox->add_option("--limit", c.outbox.limit, "At most this many")->check(CLI::Range(1, 10000))->capture_default_str();
  return hooks;
}

// Reads and checks what `webhooks add` stores, before the database is touched.
absl::Status ReadWebhookFiles(CoordinatorConfig& c) {
  auto secret = ReadTokenFile(c.secret_file);
  if (!secret.ok()) return absl::InvalidArgumentError(absl::StrCat("--secret-file: ", secret.status().message()));
  c.endpoint.secret = *std::move(secret);
  return CheckEndpoint(c.endpoint);
}

// True for an address only this host can reach.
bool IsLoopback(const std::string& listen) {
  const std::string host = listen.substr(0, listen.rfind(':'));
  return host == "localhost" || host == "[::1]" || absl::StartsWith(host, "127.");
}

// Tokens in clear on a network: refused unless asked for. Without TLS a
// caller's token can be read off the wire, and gRPC reads a whole message
// (up to 64 MiB) before the token is checked (docs/security.md).
absl::Status CheckPlaintext(const CoordinatorConfig& c, const ServerConfig& server) {
  if (!server.auth.enabled() || !server.tls.cert.empty() || c.allow_plaintext) return absl::OkStatus();
  for (const std::string& listen : {c.listen, c.http_listen}) {
    if (listen.empty() || IsLoopback(listen)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "tokens would be sent in clear to ", listen,
        ": serve TLS (--tls-cert and --tls-key), listen on loopback behind a TLS proxy, or say "
        "--allow-plaintext"));
  }
  return absl::OkStatus();
}

// Everything `serve` reads from files, read before the database is touched.
absl::Status ReadServeFiles(const CoordinatorConfig& c, ServerConfig* out) {
  out->listen = c.listen;
  out->auth = c.auth;
  if (!c.token_file.empty()) {
    auto token = ReadTokenFile(c.token_file);
    if (!token.ok()) return absl::InvalidArgumentError(absl::StrCat("--token-file: ", token.status().message()));
    out->auth.shared_token = *std::move(token);
  }
  if (c.tls.cert_file.empty() && !c.tls.ca_file.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)");
  }
  auto tls = LoadTlsFiles(c.tls, {"--tls-cert", "--tls-key", "--tls-client-ca"});
  PERFGATE_RETURN_IF_ERROR(tls);
  out->tls = *std::move(tls);
  for (const std::string& proxy : c.http_admission.trusted_proxies) {
    if (!IsNumericAddress(proxy)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--http-trusted-proxy: '", proxy, "' is not a numeric IPv4 or IPv6 address"));
    }
  }
  return CheckPlaintext(c, *out);
}

}  // namespace

CommandLine ParseCommandLine(int argc, char** argv) {
  CommandLine line;
  CoordinatorConfig& config = line.config;
  CLI::App app{"perfgate-coordinator: store benchmark runs in PostgreSQL and gate merges"};
  app.set_config("--config", "", "TOML/INI file with option values (flags and PERFGATE_* override it)");
  app.require_subcommand(1);
  app.add_option("--database", config.database, "libpq connection string of the PostgreSQL database")
      ->envname("PERFGATE_DATABASE")->capture_default_str();
  app.add_option("--pool-size", config.pool_size, "Database connections kept open")
      ->check(CLI::Range(1, 256))->capture_default_str();
  CLI::App* serve = AddServe(app, config);
  app.add_subcommand("migrate", "Apply pending schema migrations and exit");
  CLI::App* credentials = AddCredentials(app, config);
  uint32_t expire_days = 0;
  CLI::Option* expire_days_option = nullptr;
  CLI::App* maintenance = AddMaintenance(app, config, &expire_days, &expire_days_option);
  CLI::App* webhooks = AddWebhooks(app, config);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    line.exit_code = ReportParseError(app, e, "perfgate-coordinator", std::cout, std::cerr);
    return line;
  }
  if (serve->parsed()) {
    line.command = Command::kServe;
    // Files first: a wrong one is told before the database is touched.
    if (absl::Status s = ReadServeFiles(config, &config.server); !s.ok()) line.exit_code = Fail(s, "bad option");
  } else if (credentials->parsed()) {
    line.command = Command::kCredentials;
    config.credentials = credentials->got_subcommand("issue")    ? CredentialsAction::kIssue
                         : credentials->got_subcommand("revoke") ? CredentialsAction::kRevoke
                                                                 : CredentialsAction::kList;
  } else if (maintenance->parsed()) {
    line.command = Command::kMaintenance;
    if (expire_days_option->count() > 0) config.maintenance.expire_days = expire_days;
  } else if (webhooks->parsed()) {
    line.command = Command::kWebhooks;
    config.webhooks = webhooks->got_subcommand("add")      ? WebhooksAction::kAdd
                      : webhooks->got_subcommand("remove") ? WebhooksAction::kRemove
                      : webhooks->got_subcommand("outbox") ? WebhooksAction::kOutbox
                                                           : WebhooksAction::kList;
    if (config.webhooks == WebhooksAction::kAdd) {
      if (absl::Status s = ReadWebhookFiles(config); !s.ok()) line.exit_code = Fail(s, "bad option");
    }
  }
  return line;
}

}  // namespace perfgate::coordinator
