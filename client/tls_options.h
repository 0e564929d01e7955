// The TLS flags of every command that talks to the coordinator
// (perfgate-agent and perfgate), added to a CLI11 app in one place so that
// both spell and explain them alike. MakeClientOptions reads the files.
#pragma once

#include <CLI/CLI.hpp>

#include "client/coordinator_client.h"

namespace perfgate::client {

/// Adds --tls, --tls-ca, --tls-cert, --tls-key and --tls-server-name (and
/// their PERFGATE_TLS_* variables) to `app`, filling `flags`.
inline void AddTlsOptions(CLI::App* app, ConnectionFlags& flags) {
  app->add_flag("--tls", flags.tls, "Speak TLS to the coordinator, checking its certificate against the system's CAs")
      ->envname("PERFGATE_TLS");
  app->add_option("--tls-ca", flags.tls_files.ca_file,
                  "PEM CA certificates the coordinator's certificate must chain to (implies --tls)")
      ->envname("PERFGATE_TLS_CA");
  app->add_option("--tls-cert", flags.tls_files.cert_file,
                  "PEM certificate of this client, for a coordinator that requires mutual TLS")
      ->envname("PERFGATE_TLS_CERT");
  app->add_option("--tls-key", flags.tls_files.key_file, "PEM private key of --tls-cert")
      ->envname("PERFGATE_TLS_KEY");
  app->add_option("--tls-server-name", flags.tls_server_name,
                  "Name the coordinator's certificate must carry (default: the host of --coordinator, or of --http)")
      ->envname("PERFGATE_TLS_SERVER_NAME");
}

}  // namespace perfgate::client
