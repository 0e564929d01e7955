#include "common/tls_files.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/memory_bio.h"
#include "common/status_macros.h"

namespace perfgate {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
absl::StatusOr<std::string> ReadWhole(const char* flag, const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text.ok()) return absl::InvalidArgumentError(absl::StrCat(flag, " ", text.status().message()));
  if (text->size() > (1 << 20)) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": larger than 1 MiB; not a PEM file"));
  }
  return text;
}

// Every certificate in text; the first is returned (the leaf of a chain).
absl::StatusOr<std::unique_ptr<X509, X509Free>> Certificates(const char* flag, const std::string& path,
                                                              const std::string& text) {
  Bio bio = MemoryBio(text);
  std::unique_ptr<X509, X509Free> first;
  int count = 0;
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    if (count++ == 0) first.reset(x); else X509_free(x);
  }
  ERR_clear_error();  // the read that ended the loop
  if (count == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": no PEM certificate in it (expected -----BEGIN CERTIFICATE-----)"));
  }
  return first;
}

}  // namespace

absl::StatusOr<TlsPem> LoadTlsFiles(const TlsFiles& files, const TlsFlagNames& flags) {
  if (files.cert_file.empty() != files.key_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(flags.cert, " and ", flags.key, " are given together"));
  }
  TlsPem pem;
  if (!files.ca_file.empty()) {
    auto ca = ReadWhole(flags.ca, files.ca_file);
    PERFGATE_RETURN_IF_ERROR(ca);
    if (auto certs = Certificates(flags.ca, files.ca_file, *ca); !certs.ok()) return certs.status();
    pem.ca = *std::move(ca);
  }
  if (files.cert_file.empty()) return pem;
  auto cert = ReadWhole(flags.cert, files.cert_file);
  PERFGATE_RETURN_IF_ERROR(cert);
  auto leaf = Certificates(flags.cert, files.cert_file, *cert);
  PERFGATE_RETURN_IF_ERROR(leaf);
  auto key = ReadWhole(flags.key, files.key_file);
  PERFGATE_RETURN_IF_ERROR(key);
  Bio bio = MemoryBio(*key);
  std::unique_ptr<EVP_PKEY, KeyFree> pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (!pkey) {
    return absl::InvalidArgumentError(absl::StrCat(
        flags.key, " ", files.key_file, ": no unencrypted PEM private key in it (expected -----BEGIN PRIVATE KEY-----)"));
  }
  if (X509_check_private_key(leaf->get(), pkey.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(flags.key, " ", files.key_file, " is not the key of the certificate in ",
                                                   flags.cert, " ", files.cert_file));
  }
  pem.cert = *std::move(cert);
  pem.key = *std::move(key);
  return pem;
}

}  // namespace perfgate
