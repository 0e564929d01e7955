// A throwaway public-key infrastructure for tests of TLS: a CA, a server
// certificate for 127.0.0.1 and localhost signed by it, a client
// certificate signed by it, and a second, unrelated CA. Made with the
// openssl command (argument vectors, no shell), P-256 keys, valid one day.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace perfgate::testing {

struct TestPki {
  std::string ca_cert;        // the site CA
  std::string server_cert;    // CN localhost, SAN IP:127.0.0.1 and DNS:localhost, signed by the CA
  std::string server_key;
  std::string client_cert;    // CN perfgate-test-client, signed by the CA
  std::string client_key;
  std::string other_ca_cert;  // a CA that signed nothing here
};

/// Writes the files into `dir` (which must exist) and returns their paths.
/// Fails with the openssl command's output when one step fails.
absl::StatusOr<TestPki> MakeTestPki(const std::string& dir);

}  // namespace perfgate::testing
