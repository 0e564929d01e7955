#include "coordinator/store/memory_credentials.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace perfgate::coordinator::store {
namespace {

// The roles the database's CHECK admits, as RoleName writes them.
bool KnownRole(const std::string& role) {
  return role == "agent" || role == "read" || role == "gate" || role == "admin";
}

}  // namespace

InMemoryCredentialRepository::InMemoryCredentialRepository(std::function<TimePoint()> now) : now_(std::move(now)) {}

absl::StatusOr<CredentialRow> InMemoryCredentialRepository::InsertCredential(const std::string& key_id,
                                                                             const std::string& name,
                                                                             const std::string& role,
                                                                             const std::string& secret_sha256) {
  std::lock_guard<std::mutex> lock(mu_);
  // The database's constraints: a unique key id, a known role, a 32-byte hash.
  for (const CredentialRow& row : rows_) {
    if (row.key_id == key_id) return absl::InternalError(absl::StrCat("key id ", key_id, " is taken"));
  }
  if (!KnownRole(role)) return absl::InternalError(absl::StrCat("no role '", role, "'"));
  if (secret_sha256.size() != 32) return absl::InternalError("a secret's hash is 32 bytes");
  CredentialRow row;
  row.id = next_id_++;
  row.key_id = key_id;
  row.name = name;
  row.role = role;
  row.created_at = now_();
  row.secret_sha256 = secret_sha256;
  rows_.push_back(row);
  row.secret_sha256.clear();  // returned without the hash, as the database's RETURNING
  return row;
}

absl::StatusOr<int> InMemoryCredentialRepository::RevokeCredentials(const std::string& name_or_key_id) {
  std::lock_guard<std::mutex> lock(mu_);
  int revoked = 0;
  for (CredentialRow& row : rows_) {
    if ((row.name == name_or_key_id || row.key_id == name_or_key_id) && !row.revoked_at) {
      row.revoked_at = now_();
      ++revoked;
    }
  }
  return revoked;
}

absl::StatusOr<std::vector<CredentialRow>> InMemoryCredentialRepository::ListCredentialRows() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<CredentialRow> out = rows_;
  for (CredentialRow& row : out) row.secret_sha256.clear();
  return out;
}

absl::StatusOr<std::optional<CredentialRow>> InMemoryCredentialRepository::FindCredentialRow(
    const std::string& key_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const CredentialRow& row : rows_) {
    if (row.key_id == key_id && !row.revoked_at) return std::optional<CredentialRow>(row);
  }
  return std::optional<CredentialRow>();
}

}  // namespace perfgate::coordinator::store
