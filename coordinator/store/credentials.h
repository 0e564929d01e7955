// Credentials as stored: a row per issued credential with the SHA-256 of its
// secret (never the secret), found by its public key id; revoked, never
// deleted. What a token is and how it is checked is coordinator/credentials.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

/// A stored credential.
struct CredentialRow {
  int64_t id = 0;
  std::string key_id;
  std::string name;
  std::string role;  // as RoleName writes it
  TimePoint created_at{};
  std::optional<TimePoint> revoked_at;
  std::string secret_sha256;  // 32 raw bytes; read only by FindCredentialRow
};

/// The credentials as the domain (coordinator/credentials.h) reads and
/// writes them: in PostgreSQL by the Store (PgCredentialRepository), or in
/// memory (InMemoryCredentialRepository, memory_credentials.h) for the
/// domain's tests without a database; one conformance suite holds both
/// (tests/coordinator/credential_repository_test.cc).
class CredentialRepository {
 public:
  virtual ~CredentialRepository() = default;
  /// Stores a new credential and returns its row (without the hash).
  virtual absl::StatusOr<CredentialRow> InsertCredential(const std::string& key_id, const std::string& name,
                                                         const std::string& role, const std::string& secret_sha256) = 0;
  /// Revokes every unrevoked credential named `name_or_key_id` or with that
  /// key id; returns how many (0: none was).
  virtual absl::StatusOr<int> RevokeCredentials(const std::string& name_or_key_id) = 0;
  /// Every credential, revoked ones included, oldest first (without hashes).
  virtual absl::StatusOr<std::vector<CredentialRow>> ListCredentialRows() = 0;
  /// The unrevoked credential with `key_id`, with its secret's hash, in one
  /// statement (every call of every caller comes here); nullopt when none.
  virtual absl::StatusOr<std::optional<CredentialRow>> FindCredentialRow(const std::string& key_id) = 0;
};

/// The PostgreSQL implementation, one of the Store's repositories.
class PgCredentialRepository : public CredentialRepository, protected Repository {
 public:
  absl::StatusOr<CredentialRow> InsertCredential(const std::string& key_id, const std::string& name,
                                                 const std::string& role, const std::string& secret_sha256) override;
  absl::StatusOr<int> RevokeCredentials(const std::string& name_or_key_id) override;
  absl::StatusOr<std::vector<CredentialRow>> ListCredentialRows() override;
  absl::StatusOr<std::optional<CredentialRow>> FindCredentialRow(const std::string& key_id) override;

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
