#include "coordinator/credentials.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

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

TimePoint FromMicros(int64_t us) { return TimePoint(std::chrono::microseconds(us)); }

constexpr char kColumns[] =
    "id, key_id, name, role, (extract(epoch FROM created_at) * 1e6)::bigint, "
    "(extract(epoch FROM revoked_at) * 1e6)::bigint";

Credential RowToCredential(const pqxx::row& row) {
  Credential c;
  c.id = row[0].as<int64_t>();
  c.key_id = row[1].as<std::string>();
  c.name = row[2].as<std::string>();
  c.role = ParseRole(row[3].as<std::string>()).value_or(Role::kRead);
  c.created_at = FromMicros(row[4].as<int64_t>());
  if (!row[5].is_null()) c.revoked_at = FromMicros(row[5].as<int64_t>());
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

absl::StatusOr<IssuedCredential> IssueCredential(Store& store, const std::string& name, Role role) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  auto key_id = RandomHex(kKeyIdHex / 2);
  if (!key_id.ok()) return key_id.status();
  auto secret = RandomHex(kSecretHex / 2);
  if (!secret.ok()) return secret.status();
  IssuedCredential out;
  out.token = absl::StrCat(kPrefix, *key_id, "_", *secret);
  absl::Status s = store.WithConnection("issuing a credential", [&](pqxx::connection& c) {
    pqxx::work txn(c);
    const pqxx::binarystring hash(Sha256(*secret));
    pqxx::row row = txn.exec_params1(
        absl::StrCat("INSERT INTO credentials (key_id, name, role, secret_sha256) VALUES ($1, $2, $3, $4) "
                     "RETURNING ", kColumns),
        *key_id, name, RoleName(role), hash);
    out.credential = RowToCredential(row);
    txn.commit();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<int> RevokeCredential(Store& store, const std::string& name_or_key_id) {
  int revoked = 0;
  absl::Status s = store.WithConnection("revoking a credential", [&](pqxx::connection& c) {
    pqxx::work txn(c);
    revoked = txn.exec_params("UPDATE credentials SET revoked_at = now() "
                              "WHERE (name = $1 OR key_id = $1) AND revoked_at IS NULL",
                              name_or_key_id)
                  .affected_rows();
    txn.commit();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  if (revoked == 0) {
    return absl::NotFoundError(
        absl::StrCat("no unrevoked credential is named '", name_or_key_id, "' or has that key id"));
  }
  return revoked;
}

absl::StatusOr<std::vector<Credential>> ListCredentials(Store& store) {
  std::vector<Credential> out;
  absl::Status s = store.WithConnection("listing credentials", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    for (const pqxx::row& row : txn.exec(absl::StrCat("SELECT ", kColumns, " FROM credentials ORDER BY id"))) {
      out.push_back(RowToCredential(row));
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::optional<Credential>> FindCredential(Store& store, const std::string& token) {
  const std::optional<ParsedToken> parsed = ParseToken(token);
  if (!parsed) return std::optional<Credential>();
  std::optional<Credential> found;
  absl::Status s = store.WithConnection("checking a credential", [&](pqxx::connection& c) {
    // One statement, one round trip: every call of every caller comes here.
    pqxx::nontransaction txn(c);
    pqxx::result r = txn.exec_params(
        absl::StrCat("SELECT ", kColumns, ", secret_sha256 FROM credentials "
                     "WHERE key_id = $1 AND revoked_at IS NULL"),
        parsed->key_id);
    if (r.empty()) return absl::OkStatus();
    const pqxx::binarystring stored(r[0][6]);
    if (ConstantTimeEquals(Sha256(parsed->secret), stored.str())) found = RowToCredential(r[0]);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return found;
}

}  // namespace perfgate::coordinator
