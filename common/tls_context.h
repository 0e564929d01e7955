// The TLS files (tls_files.h) put on an OpenSSL context, for the listeners
// and clients that take a context rather than paths (the coordinator's HTTP
// side and its client, through cpp-httplib): one way to present a
// certificate chain and to trust a site CA alone, for both ends.
#pragma once

#include <string>

#include "absl/status/status.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace perfgate {

/// Presents `cert_pem` (the leaf, then its chain) with its private key
/// `key_pem` on `ctx`. INVALID_ARGUMENT naming what OpenSSL refused.
absl::Status UseCertificateChain(ssl_ctx_st* ctx, const std::string& cert_pem, const std::string& key_pem);

/// Makes the certificates of `ca_pem` the only ones `ctx` trusts for its
/// peer's chain (the system's roots are not added).
absl::Status TrustOnly(ssl_ctx_st* ctx, const std::string& ca_pem);

/// The reason of the first OpenSSL error queued on this thread (the cause
/// of a failed handshake), or "" when none; clears the queue.
std::string LastTlsError();

}  // namespace perfgate
