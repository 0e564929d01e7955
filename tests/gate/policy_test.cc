#include "gate/policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace perfgate::gate {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kFile[] = "perfgate.yaml";

// The example of docs/policy.md, line numbers matter to the tests below.
constexpr char kFullPolicy[] = R"(version: 1
defaults:
  tolerance: 3%
  gating: true
  history: 7
  match: [cpu_model, kernel]
rules:
  - benchmark: "kernels/sgemm*"
    metric: "*"
    tolerance: 5%
skus:
  - pattern: "h100-*"
    tolerance: 2%
    match: [driver_version, cuda_runtime]
    rules:
      - benchmark: "kernels/gemm{dtype=bf16,*"
        metric: tflops
        floor: 700
        gating: false
  - pattern: "a100-*"
    gating: false
)";

Policy MustParse(const std::string& text) {
  absl::StatusOr<Policy> policy = ParsePolicy(text, kFile);
  EXPECT_TRUE(policy.ok()) << policy.status();
  return policy.ok() ? *policy : Policy{};
}

// Parses text that must be refused and returns the message.
std::string Refusal(const std::string& text) {
  absl::StatusOr<Policy> policy = ParsePolicy(text, kFile);
  EXPECT_FALSE(policy.ok()) << "accepted:\n" << text;
  if (policy.ok()) return "";
  EXPECT_EQ(policy.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(policy.status().message());
}

TEST(Policy, FullPolicyParsesWithEveryValue) {
  const Policy p = MustParse(kFullPolicy);
  EXPECT_EQ(p.version, 1);
  EXPECT_DOUBLE_EQ(p.tolerance, 0.03);
  EXPECT_TRUE(p.gating);
  EXPECT_EQ(p.history, 7u);
  EXPECT_THAT(p.match, ElementsAre("cpu_model", "kernel"));

  ASSERT_EQ(p.rules.size(), 1u);
  EXPECT_EQ(p.rules[0].benchmark, "kernels/sgemm*");
  EXPECT_EQ(p.rules[0].metric, "*");
  EXPECT_DOUBLE_EQ(p.rules[0].tolerance.value(), 0.05);
  EXPECT_FALSE(p.rules[0].floor.has_value());
  EXPECT_FALSE(p.rules[0].gating.has_value());
  EXPECT_EQ(p.rules[0].line, 8);

  ASSERT_EQ(p.skus.size(), 2u);
  const SkuPolicy& h100 = p.skus[0];
  EXPECT_EQ(h100.pattern, "h100-*");
  EXPECT_EQ(h100.line, 12);
  EXPECT_DOUBLE_EQ(h100.tolerance.value(), 0.02);
  EXPECT_FALSE(h100.gating.has_value());
  ASSERT_TRUE(h100.match.has_value());
  EXPECT_THAT(*h100.match, ElementsAre("driver_version", "cuda_runtime"));
  ASSERT_EQ(h100.rules.size(), 1u);
  EXPECT_EQ(h100.rules[0].benchmark, "kernels/gemm{dtype=bf16,*");
  EXPECT_EQ(h100.rules[0].metric, "tflops");
  EXPECT_DOUBLE_EQ(h100.rules[0].floor.value(), 700);
  EXPECT_EQ(h100.rules[0].gating, std::optional<bool>(false));
  EXPECT_FALSE(h100.rules[0].tolerance.has_value());
  EXPECT_EQ(h100.rules[0].line, 16);

  EXPECT_EQ(p.skus[1].pattern, "a100-*");
  EXPECT_EQ(p.skus[1].gating, std::optional<bool>(false));
  EXPECT_FALSE(p.skus[1].match.has_value());
}

TEST(Policy, EmptyFileIsTheDefaultPolicy) {
  for (const std::string text : {"", "\n", "# nothing here yet\n"}) {
    const Policy p = MustParse(text);
    EXPECT_DOUBLE_EQ(p.tolerance, 0.03);
    EXPECT_TRUE(p.gating);
    EXPECT_EQ(p.history, 5u);
    EXPECT_TRUE(p.match.empty());
    EXPECT_TRUE(p.rules.empty());
    EXPECT_TRUE(p.skus.empty());
  }
}

TEST(Policy, VersionAloneIsTheDefaultPolicy) {
  const Policy p = MustParse("version: 1\n");
  EXPECT_DOUBLE_EQ(p.tolerance, 0.03);
  EXPECT_EQ(p.history, 5u);
  const ResolvedRule r = p.Resolve("h100-sxm5-80gb", "kernels/copy{bytes=1}", "time");
  EXPECT_DOUBLE_EQ(r.tolerance, 0.03);
  EXPECT_TRUE(r.gating);
  EXPECT_FALSE(r.floor.has_value());
}

// docs/existing-benchmarks.md's rule for single-threaded Google Benchmark
// cases on shared runners: real_time advisory there, cpu_time still gating,
// and real_time gating everywhere else.
TEST(PolicyResolve, ARuleCanMakeWallTimeAdvisoryOnSharedRunnersOnly) {
  const Policy p = MustParse(
      "version: 1\nskus:\n  - pattern: \"cpu-*\"\n    rules:\n"
      "      - benchmark: \"gbench/*\"\n        metric: real_time\n        gating: false\n");
  const std::string c = "gbench/BM_Work{a0=262144}";
  EXPECT_FALSE(p.Resolve("cpu-xeon", c, "real_time").gating);
  EXPECT_TRUE(p.Resolve("cpu-xeon", c, "cpu_time").gating);
  EXPECT_TRUE(p.Resolve("h100-sxm5-80gb", c, "real_time").gating);
}

TEST(Policy, FractionalAndZeroPercentagesAreAccepted) {
  const Policy p = MustParse(
      "version: 1\ndefaults:\n  tolerance: 2.5%\nrules:\n"
      "  - benchmark: \"x/*\"\n    tolerance: 0%\n");
  EXPECT_DOUBLE_EQ(p.tolerance, 0.025);
  EXPECT_DOUBLE_EQ(p.rules[0].tolerance.value(), 0.0);
}

TEST(PolicyResolve, DefaultsApplyWhereNoRuleMatches) {
  const Policy p = MustParse(kFullPolicy);
  const ResolvedRule r = p.Resolve("l4-24gb", "kernels/copy{bytes=1024}", "bandwidth");
  EXPECT_DOUBLE_EQ(r.tolerance, 0.03);
  EXPECT_TRUE(r.gating);
  EXPECT_FALSE(r.floor.has_value());
}

TEST(PolicyResolve, TopLevelRuleOverridesDefaultsOnEverySku) {
  const Policy p = MustParse(kFullPolicy);
  const ResolvedRule r = p.Resolve("l4-24gb", "kernels/sgemm{n=4096}", "time");
  EXPECT_DOUBLE_EQ(r.tolerance, 0.05);
}

TEST(PolicyResolve, SkuSectionOverridesTopLevelRule) {
  const Policy p = MustParse(kFullPolicy);
  // The h100 section's 2 % comes after the top-level sgemm rule's 5 %.
  EXPECT_DOUBLE_EQ(p.Resolve("h100-sxm5-80gb", "kernels/sgemm{n=4096}", "time").tolerance, 0.02);
  EXPECT_DOUBLE_EQ(p.Resolve("h100-sxm5-80gb", "kernels/copy{bytes=1}", "time").tolerance, 0.02);
}

TEST(PolicyResolve, SkuRuleSetsFloorAndAdvisoryForMatchingMetricOnly) {
  const Policy p = MustParse(kFullPolicy);
  const std::string gemm = "kernels/gemm{dtype=bf16,k=8192,m=8192,n=8192}";
  const ResolvedRule tflops = p.Resolve("h100-pcie-80gb", gemm, "tflops");
  EXPECT_EQ(tflops.floor, std::optional<double>(700));
  EXPECT_FALSE(tflops.gating);
  EXPECT_DOUBLE_EQ(tflops.tolerance, 0.02);  // the rule leaves the section's tolerance

  // Metric glob: "tflops" does not match "time".
  const ResolvedRule time = p.Resolve("h100-pcie-80gb", gemm, "time");
  EXPECT_FALSE(time.floor.has_value());
  EXPECT_TRUE(time.gating);

  // Benchmark glob: fp16 is not bf16.
  const ResolvedRule fp16 = p.Resolve("h100-pcie-80gb", "kernels/gemm{dtype=fp16,k=1}", "tflops");
  EXPECT_FALSE(fp16.floor.has_value());
}

TEST(PolicyResolve, NonMatchingSkuIsUnaffectedBySection) {
  const Policy p = MustParse(kFullPolicy);
  const ResolvedRule r =
      p.Resolve("h200-141gb", "kernels/gemm{dtype=bf16,k=8192,m=8192,n=8192}", "tflops");
  EXPECT_DOUBLE_EQ(r.tolerance, 0.03);
  EXPECT_FALSE(r.floor.has_value());
  EXPECT_TRUE(r.gating);
  EXPECT_FALSE(p.Resolve("a100-sxm4-80gb", "kernels/copy{bytes=1}", "time").gating);
}

TEST(PolicyResolve, LaterRulesWinPerField) {
  const Policy p = MustParse(R"(version: 1
rules:
  - benchmark: "nccl/*"
    tolerance: 4%
    floor: 100
  - benchmark: "nccl/all_reduce*"
    metric: busbw
    tolerance: 8%
skus:
  - pattern: "h100-*"
    rules:
      - benchmark: "*"
        metric: busbw
        gating: false
)");
  const ResolvedRule r = p.Resolve("h100-sxm5-80gb", "nccl/all_reduce{bytes=268435456}", "busbw");
  EXPECT_DOUBLE_EQ(r.tolerance, 0.08);             // second rule
  EXPECT_EQ(r.floor, std::optional<double>(100));  // first rule, not overridden
  EXPECT_FALSE(r.gating);                          // SKU rule
  const ResolvedRule other = p.Resolve("h100-sxm5-80gb", "nccl/all_gather{bytes=1}", "busbw");
  EXPECT_DOUBLE_EQ(other.tolerance, 0.04);
}

TEST(PolicyMatchFields, SkuSectionReplacesDefaults) {
  const Policy p = MustParse(kFullPolicy);
  EXPECT_THAT(p.MatchFields("h100-sxm5-80gb"), ElementsAre("driver_version", "cuda_runtime"));
  EXPECT_THAT(p.MatchFields("a100-sxm4-40gb"), ElementsAre("cpu_model", "kernel"));
}

TEST(PolicyErrors, MalformedYamlNamesItsLine) {
  const std::string msg = Refusal("version: 1\ndefaults:\n  tolerance: [3%\n  gating: true\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:"));
  EXPECT_THAT(msg, HasSubstr("malformed YAML"));
  const std::string indent = Refusal("version: 1\ndefaults:\n  tolerance: 3%\n gating: true\n");
  EXPECT_THAT(indent, HasSubstr("perfgate.yaml:4:"));
  EXPECT_THAT(indent, HasSubstr("malformed YAML"));
}

TEST(PolicyErrors, UnknownKeySuggestsTheClosestAndListsAllowed) {
  const std::string msg = Refusal(R"(version: 1
defaults:
  gating: true
rules:
  - benchmark: "x/*"
    metric: time
    tolerence: 5%
)");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:7:"));
  EXPECT_THAT(msg, HasSubstr("unknown key 'tolerence' (did you mean 'tolerance'?)"));
  EXPECT_THAT(msg, HasSubstr("benchmark, metric, tolerance, floor, gating"));
}

TEST(PolicyErrors, UnknownKeyFarFromAnyHasNoSuggestion) {
  const std::string msg = Refusal("version: 1\nthreshold: 5%\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:2:"));
  EXPECT_THAT(msg, HasSubstr("unknown key 'threshold'"));
  EXPECT_THAT(msg, Not(HasSubstr("did you mean")));
  EXPECT_THAT(msg, HasSubstr("version, defaults, rules, skus"));
}

TEST(PolicyErrors, UnknownKeyInSkuSectionIsRefused) {
  const std::string msg = Refusal("version: 1\nskus:\n  - pattern: \"h100-*\"\n    histroy: 3\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:4:"));
  EXPECT_THAT(msg, HasSubstr("unknown key 'histroy'"));
}

TEST(PolicyErrors, BadPercentagesAreRefusedWithAnExample) {
  for (const std::string bad : {"abc", "5", "-3%", "150%", "100%", "5 %%", "\"\"", "5%%", ".5%"}) {
    const std::string msg =
        Refusal("version: 1\ndefaults:\n  gating: true\n  tolerance: " + bad + "\n");
    EXPECT_THAT(msg, HasSubstr("perfgate.yaml:4:")) << bad;
    EXPECT_THAT(msg, HasSubstr("tolerance")) << bad;
    EXPECT_THAT(msg, HasSubstr("e.g. 3%")) << bad;
  }
  EXPECT_THAT(Refusal("version: 1\ndefaults:\n  tolerance: abc\n"), HasSubstr("'abc'"));
}

TEST(PolicyErrors, ListWhereMapExpectedIsRefused) {
  const std::string msg = Refusal("version: 1\ndefaults:\n  - tolerance: 3%\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:3:"));
  EXPECT_THAT(msg, HasSubstr("defaults must be a map"));
  EXPECT_THAT(msg, HasSubstr("got a list"));
}

TEST(PolicyErrors, MapWhereListExpectedIsRefused) {
  const std::string msg = Refusal("version: 1\nrules:\n  benchmark: \"x\"\n  tolerance: 3%\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:3:"));
  EXPECT_THAT(msg, HasSubstr("must be a list"));
}

TEST(PolicyErrors, GatingMustBeABoolean) {
  const std::string msg =
      Refusal("version: 1\nrules:\n  - benchmark: \"x/*\"\n    gating: \"yes-ish\"\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:4:"));
  EXPECT_THAT(msg, HasSubstr("gating must be true or false"));
  EXPECT_THAT(msg, HasSubstr("yes-ish"));
}

TEST(PolicyErrors, FloorMustBeANumber) {
  const std::string msg = Refusal("version: 1\nrules:\n  - benchmark: \"x/*\"\n    floor: fast\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:4:"));
  EXPECT_THAT(msg, HasSubstr("floor must be a number"));
  EXPECT_THAT(msg, HasSubstr("'fast'"));
}

TEST(PolicyErrors, MissingVersionIsRefused) {
  const std::string msg = Refusal("defaults:\n  tolerance: 3%\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:1:"));
  EXPECT_THAT(msg, HasSubstr("missing 'version'"));
  EXPECT_THAT(msg, HasSubstr("version: 1"));
}

TEST(PolicyErrors, VersionWithoutValueIsRefusedOnItsLine) {
  const std::string msg = Refusal("version:\ndefaults:\n  gating: true\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:1:"));
  EXPECT_THAT(msg, HasSubstr("'version'"));
  EXPECT_THAT(msg, HasSubstr("has no value"));
}

TEST(Policy, EmptySectionsChangeNothing) {
  const Policy p = MustParse("version: 1\ndefaults:\nrules:\nskus:\n");
  EXPECT_DOUBLE_EQ(p.tolerance, 0.03);
  EXPECT_TRUE(p.rules.empty());
  EXPECT_TRUE(p.skus.empty());
}

TEST(PolicyErrors, UnsupportedVersionIsRefused) {
  const std::string msg = Refusal("# policy\nversion: 2\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:2:"));
  EXPECT_THAT(msg, HasSubstr("unsupported policy version '2'"));
  EXPECT_THAT(Refusal("version: one\n"), HasSubstr("'one'"));
}

TEST(PolicyErrors, SkuPatternMatchingNoKnownSkuIsRefused) {
  const std::string msg = Refusal(R"(version: 1
skus:
  - pattern: "h100-*"
    tolerance: 2%
  - pattern: "h10-*"
    tolerance: 2%
)");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:5:"));
  EXPECT_THAT(msg, HasSubstr("SKU pattern 'h10-*' matches no known SKU (known: h100-sxm5-80gb"));
}

TEST(PolicyErrors, SkuPatternForOneCpuModelIsAccepted) {
  const Policy p =
      MustParse("version: 1\nskus:\n  - pattern: cpu-amd-epyc-7b13\n    gating: false\n");
  EXPECT_FALSE(p.Resolve("cpu-amd-epyc-7b13", "x/y", "time").gating);
  EXPECT_TRUE(p.Resolve("cpu-amd-epyc-9654", "x/y", "time").gating);
}

TEST(PolicyErrors, SkuSectionWithoutPatternIsRefused) {
  const std::string msg = Refusal("version: 1\nskus:\n  - tolerance: 2%\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:3:"));
  EXPECT_THAT(msg, HasSubstr("no pattern"));
}

TEST(PolicyErrors, RuleWithoutEffectIsRefused) {
  const std::string msg = Refusal(R"(version: 1
rules:
  - benchmark: "kernels/*"
    tolerance: 4%
  - benchmark: "kernels/copy*"
    metric: time
)");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:5:"));
  EXPECT_THAT(msg, HasSubstr("has no effect"));
  EXPECT_THAT(msg, HasSubstr("kernels/copy*"));
}

TEST(PolicyErrors, HistoryOutOfRangeIsRefused) {
  for (const std::string bad : {"0", "101", "-1"}) {
    const std::string msg = Refusal("version: 1\ndefaults:\n  history: " + bad + "\n");
    EXPECT_THAT(msg, HasSubstr("perfgate.yaml:3:")) << bad;
    EXPECT_THAT(msg, HasSubstr("1..100")) << bad;
  }
  EXPECT_THAT(Refusal("version: 1\ndefaults:\n  history: 2.5\n"), HasSubstr("whole number"));
  EXPECT_EQ(MustParse("version: 1\ndefaults:\n  history: 100\n").history, 100u);
}

TEST(PolicyErrors, KeyWithoutValueIsBlamedOnItsOwnLine) {
  const std::string msg = Refusal("version: 1\ndefaults:\n  tolerance:\n  gating: true\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:3:"));
  EXPECT_THAT(msg, HasSubstr("key 'tolerance' in defaults has no value"));
}

TEST(PolicyErrors, MatchMustBeAListOfNames) {
  const std::string msg = Refusal("version: 1\ndefaults:\n  match: driver_version\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:3:"));
  EXPECT_THAT(msg, HasSubstr("match must be a list"));
}

TEST(PolicyErrors, DuplicateKeyIsRefused) {
  const std::string msg =
      Refusal("version: 1\ndefaults:\n  tolerance: 3%\n  gating: true\n  tolerance: 5%\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:5:"));
  EXPECT_THAT(msg, HasSubstr("'tolerance' appears twice"));
}

TEST(PolicyErrors, TopLevelListIsRefused) {
  const std::string msg = Refusal("- version: 1\n");
  EXPECT_THAT(msg, HasSubstr("perfgate.yaml:1:"));
  EXPECT_THAT(msg, HasSubstr("must be a map"));
}

TEST(Policy, CalibrationMaxAgeIsDaysAndThirtyByDefault) {
  EXPECT_EQ(MustParse("version: 1\n").calibration_max_age, std::chrono::hours(24 * 30));
  EXPECT_EQ(MustParse("version: 1\ndefaults:\n  calibration_max_age: 7d\n").calibration_max_age,
            std::chrono::hours(24 * 7));
  EXPECT_EQ(MustParse("version: 1\ndefaults:\n  calibration_max_age: 1.5d\n").calibration_max_age,
            std::chrono::hours(36));
}

TEST(PolicyErrors, CalibrationMaxAgeNeedsAPositiveNumberOfDays) {
  for (const char* bad : {"30", "0d", "-1d", "30 days", "d", "99999d"}) {
    const std::string msg =
        Refusal(std::string("version: 1\ndefaults:\n  calibration_max_age: ") + bad + "\n");
    EXPECT_THAT(msg, HasSubstr("perfgate.yaml:3:")) << bad;
    EXPECT_THAT(msg, HasSubstr("calibration_max_age")) << bad;
  }
}

TEST(PolicyErrors, MessageUsesTheGivenFileName) {
  absl::StatusOr<Policy> p = ParsePolicy("version: 3\n", "ci/perf-policy.yml");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("ci/perf-policy.yml:1:"));
}

}  // namespace
}  // namespace perfgate::gate
