// Tokens, roles and the per-caller bound on gate evaluations, without a
// server or a database.
#include "coordinator/api/auth.h"

#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "coordinator/domain/credentials.h"

namespace perfgate::coordinator::auth_test {
namespace {

const std::string kKey = "0123456789abcdef";
const std::string kSecret = std::string(32, 'a') + std::string(32, '9');

TEST(Credentials, TokenIsPrefixKeyIdAndSecretInLowerHex) {
  auto t = ParseToken("perfgate_" + kKey + "_" + kSecret);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->key_id, kKey);
  EXPECT_EQ(t->secret, kSecret);
  for (const std::string& bad : {
           std::string(""),
           "perfgate_" + kKey + "_" + kSecret + "0",            // too long
           "perfgate_" + kKey + "_" + kSecret.substr(1),        // too short
           "perfgate-" + kKey + "_" + kSecret,                  // prefix
           "perfgate_" + kKey + "-" + kSecret,                  // separator
           "perfgate_0123456789ABCDEF_" + kSecret,              // upper case
           "perfgate_" + kKey + "_" + std::string(63, 'a') + "g",  // not hex
           "Perfgate_" + kKey + "_" + kSecret,
       }) {
    EXPECT_FALSE(ParseToken(bad).has_value()) << bad;
  }
}

TEST(Credentials, Sha256MatchesTheStandardVectors) {
  EXPECT_EQ(absl::BytesToHexString(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(absl::BytesToHexString(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Credentials, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secret2"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(Credentials, RolesRoundTripAndUnknownOnesAreNamed) {
  for (Role r : {Role::kAgent, Role::kRead, Role::kGate, Role::kAdmin}) {
    auto parsed = ParseRole(RoleName(r));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, r);
  }
  auto bad = ParseRole("root");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'root'"), std::string::npos) << bad.status();
}

TEST(Auth, EachRoleMayDoWhatTheTableSays) {
  EXPECT_TRUE(RoleAllows(Role::kAgent, Action::kIngest));
  EXPECT_FALSE(RoleAllows(Role::kAgent, Action::kRead));
  EXPECT_FALSE(RoleAllows(Role::kAgent, Action::kGate));
  EXPECT_FALSE(RoleAllows(Role::kRead, Action::kIngest));
  EXPECT_TRUE(RoleAllows(Role::kRead, Action::kRead));
  EXPECT_FALSE(RoleAllows(Role::kRead, Action::kGate));
  EXPECT_FALSE(RoleAllows(Role::kGate, Action::kIngest));
  EXPECT_TRUE(RoleAllows(Role::kGate, Action::kRead));
  EXPECT_TRUE(RoleAllows(Role::kGate, Action::kGate));
  // A triage of a regression (HTTP) is a gate's decision.
  EXPECT_FALSE(RoleAllows(Role::kAgent, Action::kTriage));
  EXPECT_FALSE(RoleAllows(Role::kRead, Action::kTriage));
  EXPECT_TRUE(RoleAllows(Role::kGate, Action::kTriage));
  for (Action a : {Action::kIngest, Action::kRead, Action::kGate, Action::kTriage}) {
    EXPECT_TRUE(RoleAllows(Role::kAdmin, a));
  }
}

TEST(EvaluationLimiter, BoundsRunningEvaluationsPerCaller) {
  EvaluationLimiter limiter(/*max_running=*/2, /*per_minute=*/0);
  const Caller ci{Role::kGate, "credential 'ci' (role gate)", "credential 1", ""};
  const Caller other{Role::kGate, "credential 'other' (role gate)", "credential 2", ""};
  auto first = limiter.Admit(ci);
  auto second = limiter.Admit(ci);
  ASSERT_TRUE(first.ok() && second.ok());
  auto third = limiter.Admit(ci);
  ASSERT_TRUE(absl::IsResourceExhausted(third.status())) << third.status();
  EXPECT_NE(third.status().message().find("credential 'ci' (role gate) has 2 gate evaluations running"),
            std::string::npos)
      << third.status();
  EXPECT_TRUE(limiter.Admit(other).ok());  // another caller has bounds of its own
  { auto released = std::move(*first); }
  EXPECT_TRUE(limiter.Admit(ci).ok());  // one ended: room again
}

TEST(EvaluationLimiter, BoundsEvaluationsStartedPerMinute) {
  EvaluationLimiter limiter(/*max_running=*/100, /*per_minute=*/3);
  const Caller ci{Role::kGate, "credential 'ci' (role gate)", "credential 1", ""};
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Admit(ci).ok()) << i;
  auto fourth = limiter.Admit(ci);
  ASSERT_TRUE(absl::IsResourceExhausted(fourth.status())) << fourth.status();
  EXPECT_NE(fourth.status().message().find("next one is allowed in"), std::string::npos) << fourth.status();
}

}  // namespace
}  // namespace perfgate::coordinator::auth_test
