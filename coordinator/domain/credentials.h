// Per-caller credentials: issued, listed and revoked by
// `perfgate-coordinator credentials`, stored in PostgreSQL as the SHA-256 of
// their secret, and found again from a token presented on a call.
//
// A token reads "perfgate_<key id>_<secret>": the key id (16 hex digits) is
// public and finds the row; the secret (64 hex digits, 256 random bits from
// OpenSSL) is never stored, only its SHA-256, compared in constant time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/store/credentials.h"

namespace perfgate::coordinator {

/// What a credential allows (docs/security.md has the table).
enum class Role {
  kAgent,  // Ingest, only as the agent of the credential's name
  kRead,   // Query and Gate.GetReport
  kGate,   // what kRead may, and Gate.Evaluate
  kAdmin,  // everything, Ingest as any agent
};

/// "agent", "read", "gate", "admin".
const char* RoleName(Role role);
/// The role of a name RoleName gives; INVALID_ARGUMENT naming the choices.
absl::StatusOr<Role> ParseRole(const std::string& name);

/// A stored credential (never its secret).
struct Credential {
  int64_t id = 0;
  std::string key_id;
  std::string name;  // for kAgent: the agent name it may ingest as
  Role role = Role::kRead;
  TimePoint created_at{};
  std::optional<TimePoint> revoked_at;
};

/// The parts of a token.
struct ParsedToken {
  std::string key_id;
  std::string secret;
};

/// Splits "perfgate_<16 hex>_<64 hex>"; nullopt for anything else.
std::optional<ParsedToken> ParseToken(const std::string& token);
/// SHA-256 of text, 32 raw bytes.
std::string Sha256(const std::string& text);
/// True when a and b are equal, in time that depends on their lengths only.
bool ConstantTimeEquals(const std::string& a, const std::string& b);

/// A credential just issued, with the token shown this once.
struct IssuedCredential {
  Credential credential;
  std::string token;
};

/// Makes a credential of `role` named `name` (INVALID_ARGUMENT for an empty
/// name, one over 200 characters, or one with a control character).
absl::StatusOr<IssuedCredential> IssueCredential(store::CredentialRepository& store, const std::string& name, Role role);
/// Revokes every unrevoked credential named `name`, or with `key_id`;
/// returns how many. NOT_FOUND when none was.
absl::StatusOr<int> RevokeCredential(store::CredentialRepository& store, const std::string& name_or_key_id);
/// Every credential, revoked ones included, oldest first.
absl::StatusOr<std::vector<Credential>> ListCredentials(store::CredentialRepository& store);
/// The unrevoked credential a token names, or nullopt when it names none
/// (malformed, unknown, wrong secret or revoked).
absl::StatusOr<std::optional<Credential>> FindCredential(store::CredentialRepository& store, const std::string& token);

}  // namespace perfgate::coordinator
