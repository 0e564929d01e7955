// An OpenSSL memory BIO over a string, freed when it goes out of scope: how
// the TLS file checks and the TLS contexts read PEM text.
#pragma once

#include <openssl/bio.h>

#include <memory>
#include <string>

namespace perfgate {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

/// A read-only BIO over `text`, which must outlive it.
inline Bio MemoryBio(const std::string& text) {
  return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

}  // namespace perfgate
