#include "coordinator/domain/credentials.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace perfgate::coordinator {
namespace {

constexpr char kPrefix[] = "perfgate_";
constexpr size_t kKeyIdHex = 16;
constexpr size_t kSecretHex = 64;

bool IsLowerHex(const std::string& s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::StatusOr<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    return absl::InternalError("OpenSSL's random generator failed (RAND_bytes)");
  }
  return absl::BytesToHexString(raw);
}

absl::Status CheckName(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("a credential needs a name");
  if (name.size() > 200) return absl::InvalidArgumentError("a credential's name has at most 200 characters");
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError("a credential's name may not hold control characters");
    }
  }
  return absl::OkStatus();
}

// The credential of a stored row.
Credential FromRow(const store::CredentialRow& row) {
  Credential c;
  c.id = row.id;
  c.key_id = row.key_id;
  c.name = row.name;
  c.role = ParseRole(row.role).value_or(Role::kRead);
  c.created_at = row.created_at;
  c.revoked_at = row.revoked_at;
  return c;
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kAgent:
      return "agent";
    case Role::kRead:
      return "read";
    case Role::kGate:
      return "gate";
    case Role::kAdmin:
      return "admin";
  }
  return "read";
}

absl::StatusOr<Role> ParseRole(const std::string& name) {
  for (Role r : {Role::kAgent, Role::kRead, Role::kGate, Role::kAdmin}) {
    if (name == RoleName(r)) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role '", name, "' (expected agent, read, gate or admin)"));
}

std::optional<ParsedToken> ParseToken(const std::string& token) {
  const size_t prefix = sizeof(kPrefix) - 1;
  if (token.size() != prefix + kKeyIdHex + 1 + kSecretHex) return std::nullopt;
  if (token.compare(0, prefix, kPrefix) != 0 || token[prefix + kKeyIdHex] != '_') return std::nullopt;
  ParsedToken t{token.substr(prefix, kKeyIdHex), token.substr(prefix + kKeyIdHex + 1)};
  if (!IsLowerHex(t.key_id) || !IsLowerHex(t.secret)) return std::nullopt;
  return t;
}

std::string Sha256(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

absl::StatusOr<IssuedCredential> IssueCredential(store::CredentialRepository& store, const std::string& name, Role role) {
  PERFGATE_RETURN_IF_ERROR(CheckName(name));
  PERFGATE_ASSIGN_OR_RETURN(const std::string key_id, RandomHex(kKeyIdHex / 2));
  PERFGATE_ASSIGN_OR_RETURN(const std::string secret, RandomHex(kSecretHex / 2));
  PERFGATE_ASSIGN_OR_RETURN(const store::CredentialRow row,
                            store.InsertCredential(key_id, name, RoleName(role), Sha256(secret)));
  return IssuedCredential{FromRow(row), absl::StrCat(kPrefix, key_id, "_", secret)};
}

absl::StatusOr<int> RevokeCredential(store::CredentialRepository& store, const std::string& name_or_key_id) {
  auto revoked = store.RevokeCredentials(name_or_key_id);
  PERFGATE_RETURN_IF_ERROR(revoked);
  if (*revoked == 0) {
    return absl::NotFoundError(
        absl::StrCat("no unrevoked credential is named '", name_or_key_id, "' or has that key id"));
  }
  return *revoked;
}

absl::StatusOr<std::vector<Credential>> ListCredentials(store::CredentialRepository& store) {
  PERFGATE_ASSIGN_OR_RETURN(const std::vector<store::CredentialRow> rows, store.ListCredentialRows());
  std::vector<Credential> out;
  for (const store::CredentialRow& row : rows) out.push_back(FromRow(row));
  return out;
}

absl::StatusOr<std::optional<Credential>> FindCredential(store::CredentialRepository& store, const std::string& token) {
  const std::optional<ParsedToken> parsed = ParseToken(token);
  if (!parsed) return std::optional<Credential>();
  auto row = store.FindCredentialRow(parsed->key_id);
  PERFGATE_RETURN_IF_ERROR(row);
  if (!*row || !ConstantTimeEquals(Sha256(parsed->secret), (*row)->secret_sha256)) {
    return std::optional<Credential>();
  }
  return std::optional<Credential>(FromRow(**row));
}

}  // namespace perfgate::coordinator
