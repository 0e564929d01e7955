// Issuing, finding and revoking tokens (coordinator/credentials.h) on the
// in-memory repository: the domain's rules without a database.
#include "coordinator/domain/credentials.h"

#include <gtest/gtest.h>

#include "coordinator/store/memory_credentials.h"

namespace perfgate::coordinator {
namespace {

TEST(CredentialRules, AnIssuedTokenFindsItsCredentialAndNothingElseDoes) {
  store::InMemoryCredentialRepository repo;
  auto issued = IssueCredential(repo, "ci", Role::kGate);
  ASSERT_TRUE(issued.ok()) << issued.status();
  EXPECT_EQ(issued->credential.role, Role::kGate);
  const std::optional<ParsedToken> parsed = ParseToken(issued->token);
  ASSERT_TRUE(parsed.has_value()) << issued->token;
  EXPECT_EQ(parsed->key_id, issued->credential.key_id);

  auto found = FindCredential(repo, issued->token);
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  EXPECT_EQ((*found)->name, "ci");
  // The stored row holds the secret's hash, never the secret.
  auto row = repo.FindCredentialRow(parsed->key_id);
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ((*row)->secret_sha256, Sha256(parsed->secret));
  EXPECT_EQ(issued->token.find((*row)->secret_sha256), std::string::npos);

  std::string wrong = issued->token;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  EXPECT_FALSE(FindCredential(repo, wrong)->has_value()) << "a wrong secret";
  EXPECT_FALSE(FindCredential(repo, "perfgate_nonsense")->has_value()) << "malformed";
}

TEST(CredentialRules, ARevokedTokenFindsNothingAndASecondRevocationIsNotFound) {
  store::InMemoryCredentialRepository repo;
  auto a = IssueCredential(repo, "node-1", Role::kAgent);
  auto b = IssueCredential(repo, "node-1", Role::kAgent);
  ASSERT_TRUE(a.ok() && b.ok());
  auto revoked = RevokeCredential(repo, "node-1");
  ASSERT_TRUE(revoked.ok());
  EXPECT_EQ(*revoked, 2);
  EXPECT_FALSE(FindCredential(repo, a->token)->has_value());
  EXPECT_FALSE(FindCredential(repo, b->token)->has_value());
  EXPECT_EQ(RevokeCredential(repo, "node-1").status().code(), absl::StatusCode::kNotFound);
  auto listed = ListCredentials(repo);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_TRUE((*listed)[0].revoked_at.has_value());
}

TEST(CredentialRules, ANameMustBeSayableAndShortAndNothingIsStoredOtherwise) {
  store::InMemoryCredentialRepository repo;
  for (const std::string& bad : {std::string(), std::string(201, 'x'), std::string("ci\nadmin")}) {
    EXPECT_EQ(IssueCredential(repo, bad, Role::kRead).status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(repo.ListCredentialRows()->empty());
}

}  // namespace
}  // namespace perfgate::coordinator
