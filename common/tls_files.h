// The TLS files of one end of a connection (a server's certificate and key,
// a client's CA bundle, a client certificate for mutual TLS), read and
// checked at start with OpenSSL so that a wrong file is named before any
// connection is made. One shape for every server and client of perfgate:
// the coordinator's gRPC port, its clients, and any other listener the
// coordinator opens, which may take the paths (TlsFiles) or the PEM text
// (TlsPem) as its library wants.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace perfgate {

/// Paths of PEM files; empty: not given.
struct TlsFiles {
  std::string cert_file;  // certificate chain presented to the peer (leaf first)
  std::string key_file;   // private key of cert_file's leaf
  std::string ca_file;    // CA certificates the peer's certificate must chain to

  bool empty() const { return cert_file.empty() && key_file.empty() && ca_file.empty(); }
};

/// The text of those files, checked.
struct TlsPem {
  std::string cert;
  std::string key;
  std::string ca;
};

/// The options that name the files, for messages.
struct TlsFlagNames {
  const char* cert = "--tls-cert";
  const char* key = "--tls-key";
  const char* ca = "--tls-ca";
};

/// Reads the files given and checks them: each is readable and holds PEM of
/// its kind (certificates, a private key), the key belongs to the leaf
/// certificate, and cert_file and key_file are given together.
/// INVALID_ARGUMENT naming the option and the file otherwise.
absl::StatusOr<TlsPem> LoadTlsFiles(const TlsFiles& files, const TlsFlagNames& flags = {});

}  // namespace perfgate
