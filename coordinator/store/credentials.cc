#include "coordinator/store/credentials.h"

#include "absl/strings/str_cat.h"
#include "coordinator/store/database.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {
namespace {

// The columns RowToCredential reads, in its order.
const std::string& CredentialColumns() {
  static const std::string columns = absl::StrCat("id, key_id, name, role, ", MicrosFromTimestamp("created_at"), ", ",
                                                  MicrosFromTimestamp("revoked_at"));
  return columns;
}

CredentialRow RowToCredential(const pqxx::row& row) {
  CredentialRow c;
  c.id = row[0].as<int64_t>();
  c.key_id = row[1].as<std::string>();
  c.name = row[2].as<std::string>();
  c.role = row[3].as<std::string>();
  c.created_at = FromMicros(row[4].as<int64_t>());
  if (!row[5].is_null()) c.revoked_at = FromMicros(row[5].as<int64_t>());
  return c;
}

}  // namespace

absl::StatusOr<CredentialRow> PgCredentialRepository::InsertCredential(const std::string& key_id,
                                                                       const std::string& name,
                                                                       const std::string& role,
                                                                       const std::string& secret_sha256) {
  return db_.Run("issuing a credential", [&](pqxx::connection& c) -> absl::StatusOr<CredentialRow> {
    pqxx::work txn(c);
    const pqxx::binarystring hash(secret_sha256);
    pqxx::row row = txn.exec_params1(
        absl::StrCat("INSERT INTO credentials (key_id, name, role, secret_sha256) VALUES ($1, $2, $3, $4) "
                     "RETURNING ", CredentialColumns()),
        key_id, name, role, hash);
    CredentialRow out = RowToCredential(row);
    txn.commit();
    return out;
  });
}

absl::StatusOr<int> PgCredentialRepository::RevokeCredentials(const std::string& name_or_key_id) {
  return db_.Run("revoking a credential", [&](pqxx::connection& c) -> absl::StatusOr<int> {
    pqxx::work txn(c);
    const int revoked = txn.exec_params("UPDATE credentials SET revoked_at = now() "
                                        "WHERE (name = $1 OR key_id = $1) AND revoked_at IS NULL",
                                        name_or_key_id)
                            .affected_rows();
    txn.commit();
    return revoked;
  });
}

absl::StatusOr<std::vector<CredentialRow>> PgCredentialRepository::ListCredentialRows() {
  return db_.Run("listing credentials", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<CredentialRow>> {
    pqxx::read_transaction txn(c);
    std::vector<CredentialRow> out;
    for (const pqxx::row& row :
         txn.exec(absl::StrCat("SELECT ", CredentialColumns(), " FROM credentials ORDER BY id"))) {
      out.push_back(RowToCredential(row));
    }
    return out;
  });
}

absl::StatusOr<std::optional<CredentialRow>> PgCredentialRepository::FindCredentialRow(const std::string& key_id) {
  return db_.Run("checking a credential",
                 [&](pqxx::connection& c) -> absl::StatusOr<std::optional<CredentialRow>> {
                   pqxx::nontransaction txn(c);
                   pqxx::result r = txn.exec_params(
                       absl::StrCat("SELECT ", CredentialColumns(), ", secret_sha256 FROM credentials "
                                    "WHERE key_id = $1 AND revoked_at IS NULL"),
                       key_id);
                   if (r.empty()) return std::optional<CredentialRow>();
                   CredentialRow row = RowToCredential(r[0]);
                   row.secret_sha256 = pqxx::binarystring(r[0][6]).str();
                   return row;
                 });
}

}  // namespace perfgate::coordinator::store
