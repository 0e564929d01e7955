#include "common/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/memory_bio.h"

namespace perfgate {
namespace {

absl::Status Refused(const char* what) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", LastTlsError()));
}

}  // namespace

std::string LastTlsError() {
  // The first error queued is the cause; later ones (a shutdown after a
  // failed handshake) follow from it.
  const unsigned long code = ERR_peek_error();
  std::string out;
  if (code != 0) {
    const char* reason = ERR_reason_error_string(code);
    if (reason != nullptr) {
      out = reason;
    } else {
      char text[256];
      ERR_error_string_n(code, text, sizeof text);
      out = text;
    }
  }
  ERR_clear_error();
  return out;
}

absl::Status UseCertificateChain(ssl_ctx_st* ctx, const std::string& cert_pem, const std::string& key_pem) {
  ERR_clear_error();
  Bio certs = MemoryBio(cert_pem);
  X509* leaf = PEM_read_bio_X509(certs.get(), nullptr, nullptr, nullptr);
  if (leaf == nullptr) return Refused("the certificate");
  const int used = SSL_CTX_use_certificate(ctx, leaf);
  X509_free(leaf);
  if (used != 1) return Refused("the certificate");
  // The rest of the file is the chain up to (not including) the root.
  if (SSL_CTX_clear_chain_certs(ctx) != 1) return Refused("the certificate chain");
  while (X509* x = PEM_read_bio_X509(certs.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, x) != 1) {
      X509_free(x);
      return Refused("the certificate chain");
    }
  }
  ERR_clear_error();  // the read that ended the chain
  Bio key_bio = MemoryBio(key_pem);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
  if (key == nullptr) return Refused("the private key");
  const int key_used = SSL_CTX_use_PrivateKey(ctx, key);
  EVP_PKEY_free(key);
  if (key_used != 1 || SSL_CTX_check_private_key(ctx) != 1) return Refused("the private key");
  return absl::OkStatus();
}

absl::Status TrustOnly(ssl_ctx_st* ctx, const std::string& ca_pem) {
  ERR_clear_error();
  X509_STORE* store = X509_STORE_new();
  if (store == nullptr) return Refused("the CA certificates");
  Bio bio = MemoryBio(ca_pem);
  int count = 0;
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    const int added = X509_STORE_add_cert(store, x);
    X509_free(x);
    if (added != 1) {
      X509_STORE_free(store);
      return Refused("the CA certificates");
    }
    ++count;
  }
  ERR_clear_error();
  if (count == 0) {
    X509_STORE_free(store);
    return absl::InvalidArgumentError("the CA certificates: none in the PEM text");
  }
  SSL_CTX_set_cert_store(ctx, store);  // the context owns it now
  return absl::OkStatus();
}

}  // namespace perfgate
