// Credentials kept in memory: the CredentialRepository of
// coordinator/store/credentials.h without a database, for tests of the
// coordinator's domain (coordinator/credentials.h: issuing, finding and
// revoking tokens). One conformance suite holds it to the PostgreSQL
// implementation's behaviour (tests/coordinator/credential_repository_test.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "coordinator/store/credentials.h"

namespace perfgate::coordinator::store {

class InMemoryCredentialRepository final : public CredentialRepository {
 public:
  /// `now` stamps issues and revocations.
  explicit InMemoryCredentialRepository(std::function<TimePoint()> now = [] { return std::chrono::system_clock::now(); });

  absl::StatusOr<CredentialRow> InsertCredential(const std::string& key_id, const std::string& name,
                                                 const std::string& role, const std::string& secret_sha256) override;
  absl::StatusOr<int> RevokeCredentials(const std::string& name_or_key_id) override;
  absl::StatusOr<std::vector<CredentialRow>> ListCredentialRows() override;
  absl::StatusOr<std::optional<CredentialRow>> FindCredentialRow(const std::string& key_id) override;

 private:
  std::function<TimePoint()> now_;
  std::mutex mu_;
  std::vector<CredentialRow> rows_;  // by id, with their hashes
  int64_t next_id_ = 1;
};

}  // namespace perfgate::coordinator::store
