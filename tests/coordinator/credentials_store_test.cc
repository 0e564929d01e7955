// Credentials in a real PostgreSQL: issued with a token shown once and
// stored as the SHA-256 of its secret, found again, refused when wrong or
// revoked.
#include "coordinator/domain/credentials.h"

#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include "tests/coordinator/migrated_store_test.h"

namespace perfgate::coordinator {
namespace {

using CredentialStoreTest = MigratedStoreTest;

TEST_F(CredentialStoreTest, IssuedTokenIsFoundAndOnlyItsHashIsStored) {
  auto issued = IssueCredential(*store_, "node-1", Role::kAgent);
  ASSERT_TRUE(issued.ok()) << issued.status();
  auto parsed = ParseToken(issued->token);
  ASSERT_TRUE(parsed.has_value()) << issued->token;
  EXPECT_EQ(parsed->key_id, issued->credential.key_id);

  auto found = FindCredential(*store_, issued->token);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->name, "node-1");
  EXPECT_EQ((*found)->role, Role::kAgent);
  EXPECT_EQ((*found)->id, issued->credential.id);

  pqxx::connection conn(ConnInfo());
  pqxx::read_transaction txn(conn);
  pqxx::row row = txn.exec1("SELECT secret_sha256, key_id FROM credentials");
  EXPECT_EQ(pqxx::binarystring(row[0]).str(), Sha256(parsed->secret));
  EXPECT_EQ(txn.exec1("SELECT count(*) FROM credentials WHERE position($$" + parsed->secret +
                      "$$ IN encode(secret_sha256, 'hex') || key_id || name) > 0")[0]
                .as<int>(),
            0);

  // Another secret under the same key id is refused.
  std::string forged = issued->token;
  forged.back() = forged.back() == '0' ? '1' : '0';
  auto refused = FindCredential(*store_, forged);
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_FALSE(refused->has_value());
}

TEST_F(CredentialStoreTest, RevokedCredentialsAreFoundNoMoreButListedAndBadNamesAreRefused) {
  auto first = IssueCredential(*store_, "ci", Role::kGate);
  auto second = IssueCredential(*store_, "ci", Role::kGate);  // a rotation: two at once
  auto reader = IssueCredential(*store_, "dashboard", Role::kRead);
  ASSERT_TRUE(first.ok() && second.ok() && reader.ok());
  auto n = RevokeCredential(*store_, "ci");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 2);
  EXPECT_FALSE(FindCredential(*store_, first->token)->has_value());
  EXPECT_FALSE(FindCredential(*store_, second->token)->has_value());
  EXPECT_TRUE(FindCredential(*store_, reader->token)->has_value());
  EXPECT_TRUE(absl::IsNotFound(RevokeCredential(*store_, "ci").status()));
  ASSERT_TRUE(RevokeCredential(*store_, reader->credential.key_id).ok());  // by key id
  EXPECT_FALSE(FindCredential(*store_, reader->token)->has_value());

  auto all = ListCredentials(*store_);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  for (const Credential& c : *all) EXPECT_TRUE(c.revoked_at.has_value()) << c.name;

  // Names that are empty, too long or hold a control character are refused.
  EXPECT_TRUE(absl::IsInvalidArgument(IssueCredential(*store_, "", Role::kRead).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(IssueCredential(*store_, std::string(201, 'x'), Role::kRead).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(IssueCredential(*store_, std::string("a\0b", 3), Role::kRead).status()));
}

}  // namespace
}  // namespace perfgate::coordinator
