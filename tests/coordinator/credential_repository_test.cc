// One conformance suite for every CredentialRepository
// (coordinator/store/credentials.h), run against the PostgreSQL store and
// the in-memory repository alike (repository_backends.h).
#include <gtest/gtest.h>

#include "tests/coordinator/repository_backends.h"

namespace perfgate::coordinator {
namespace {

class CredentialRepositoryConformance : public RepositoryConformance {
 protected:
  store::CredentialRepository& Repo() { return backend_->Credentials(); }
};

const std::string kHashA(32, 'a');
const std::string kHashB(32, 'b');

TEST_P(CredentialRepositoryConformance, StoresARowAndFindsItByKeyIdWithItsHashOnly) {
  auto row = Repo().InsertCredential("00112233aabbccdd", "ci", "gate", kHashA);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_GT(row->id, 0);
  EXPECT_EQ(row->key_id, "00112233aabbccdd");
  EXPECT_EQ(row->name, "ci");
  EXPECT_EQ(row->role, "gate");
  EXPECT_FALSE(row->revoked_at.has_value());
  EXPECT_EQ(row->secret_sha256, "") << "returned without the hash";
  auto found = Repo().FindCredentialRow("00112233aabbccdd");
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  EXPECT_EQ((*found)->secret_sha256, kHashA);
  EXPECT_EQ((*found)->id, row->id);
  auto unknown = Repo().FindCredentialRow("ffffffffffffffff");
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->has_value());
}

TEST_P(CredentialRepositoryConformance, RevokesByNameOrKeyIdOnceAndKeepsTheRow) {
  ASSERT_TRUE(Repo().InsertCredential("1111111111111111", "node-7", "agent", kHashA).ok());
  ASSERT_TRUE(Repo().InsertCredential("2222222222222222", "node-7", "agent", kHashB).ok());
  ASSERT_TRUE(Repo().InsertCredential("3333333333333333", "ci", "read", kHashB).ok());
  auto by_name = Repo().RevokeCredentials("node-7");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(*by_name, 2);
  EXPECT_EQ(*Repo().RevokeCredentials("node-7"), 0) << "already revoked";
  EXPECT_EQ(*Repo().RevokeCredentials("3333333333333333"), 1);
  EXPECT_FALSE(Repo().FindCredentialRow("1111111111111111")->has_value());
  auto all = Repo().ListCredentialRows();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].key_id, "1111111111111111") << "oldest first";
  EXPECT_EQ((*all)[2].key_id, "3333333333333333");
  for (const store::CredentialRow& r : *all) {
    EXPECT_TRUE(r.revoked_at.has_value()) << r.key_id;
    EXPECT_EQ(r.secret_sha256, "") << "listed without hashes";
  }
}

INSTANTIATE_TEST_SUITE_P(Implementations, CredentialRepositoryConformance, ConformanceBackends(), BackendName);

}  // namespace
}  // namespace perfgate::coordinator
