// `perfgate`'s command line: what is checked before any server is asked
// exits 2 with "perfgate: <reason>", and a valid line fills one Config.
#include "cli/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/processes.h"

namespace perfgate::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct Parsed {
  std::optional<int> exit_code;
  Config config;
  std::string out, err;
};

Parsed Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "perfgate");
  Parsed p;
  std::ostringstream out, err;
  p.exit_code = ParseCommandLine(static_cast<int>(args.size()), args.data(), p.config, out, err);
  p.out = out.str();
  p.err = err.str();
  return p;
}

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::TempDir::Create("perfgate-config-test-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<testing::TempDir>(std::move(*dir));
    policy_ = dir_->Join("perfgate.yaml");
    std::ofstream(policy_) << "version: 1\ndefaults:\n  tolerance: 5%\n";
  }

  std::unique_ptr<testing::TempDir> dir_;
  std::string policy_;
};

TEST_F(ConfigTest, AnUnknownGateModeExits2NamingIt) {
  const Parsed p = Parse({"gate", "--run", "r", "--policy", policy_.c_str(), "--mode", "sideways"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, StartsWith("perfgate: "));
  EXPECT_THAT(p.err, HasSubstr("'sideways'"));
}

// A state is checked before anything is asked of the coordinator: the
// coordinator answers states by their enum names, and a typo must be named
// in the words the user typed.
TEST_F(ConfigTest, ARegressionStateWithATypoExits2NamingItAndTheStates) {
  const Parsed p = Parse({"triage", "7", "--state", "fixd", "--note", "why", "--by", "me"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, HasSubstr("'fixd' is not one of new, acknowledged, investigating, fixed, accepted, invalid"));
  const Parsed list = Parse({"regressions", "--state", "open"});
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_THAT(list.err, HasSubstr("'open' is not one of new"));
  const Parsed ok = Parse({"triage", "7", "--state", "fixed", "--note", "why", "--by", "me", "--commit", "c1"});
  EXPECT_FALSE(ok.exit_code.has_value()) << ok.err;
  EXPECT_EQ(ok.config.state, "fixed");
}

TEST_F(ConfigTest, HistoryTakesFromAndToAsSecondsOrRfc3339) {
  const Parsed p = Parse({"history", "--benchmark", "s/c", "--metric", "time", "--from", "1764295200",
                          "--to", "28/11/2025 03:00"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, HasSubstr("--to: '28/11/2025 03:00' is not a time"));
  const Parsed ok = Parse({"history", "--benchmark", "s/c", "--metric", "time", "--from", "1764295200",
                           "--to", "2025-11-28T04:00:00+01:00"});
  ASSERT_EQ(ok.exit_code, std::nullopt) << ok.err;
  EXPECT_EQ(ok.config.history_from, TimePoint(std::chrono::seconds(1764295200)));
  EXPECT_EQ(ok.config.history_to, TimePoint(std::chrono::seconds(1764295200 + 3600)));
  const Parsed none = Parse({"history", "--benchmark", "s/c", "--metric", "time"});
  ASSERT_EQ(none.exit_code, std::nullopt) << none.err;
  EXPECT_FALSE(none.config.history_from.has_value());
  EXPECT_FALSE(none.config.history_to.has_value());
  const Parsed backwards = Parse({"history", "--benchmark", "s/c", "--metric", "time", "--from", "1764295200",
                                  "--to", "1764295100"});
  EXPECT_EQ(backwards.exit_code, 2);
  EXPECT_THAT(backwards.err, HasSubstr("--to must be later than --from"));
}

TEST_F(ConfigTest, AnUnknownCommandIsNamedWithTheCommandsThereAre) {
  const Parsed p = Parse({"gates", "--run", "r"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, StartsWith("perfgate: unknown command 'gates'\n"));
  EXPECT_THAT(p.err, HasSubstr("Commands: gate report simulate"));
  EXPECT_THAT(p.err, HasSubstr("perfgate --help"));
  EXPECT_THAT(p.err, Not(HasSubstr("A subcommand is required")));
}

TEST_F(ConfigTest, AnUnknownCommandAfterAGlobalOptionIsNamedToo) {
  const Parsed p = Parse({"--coordinator", "localhost:1", "gates"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, StartsWith("perfgate: unknown command 'gates'\n"));
}

TEST_F(ConfigTest, NoCommandAtAllStillSaysOneIsRequired) {
  const Parsed p = Parse({});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, HasSubstr("A subcommand is required"));
}

TEST_F(ConfigTest, AnAbGateNeedsItsBaselineRun) {
  const Parsed p = Parse({"gate", "--run", "r", "--policy", policy_.c_str(), "--mode", "ab"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, HasSubstr("perfgate: --mode ab needs --baseline-run"));
  const Parsed ab = Parse({"gate", "--run", "r", "--policy", policy_.c_str(), "--mode", "ab", "--baseline-run", "b"});
  EXPECT_EQ(ab.exit_code, std::nullopt) << ab.err;
  EXPECT_EQ(ab.config.mode, gate::Mode::kAb);
  EXPECT_EQ(Parse({"gate", "--run", "r", "--policy", policy_.c_str()}).config.mode, gate::Mode::kHistory);
}

TEST_F(ConfigTest, AnUnreadablePolicyIsRefusedBeforeAnyCall) {
  const std::string missing = dir_->Join("absent.yaml");
  const Parsed p = Parse({"--coordinator", "127.0.0.1:1", "gate", "--run", "r", "--policy", missing.c_str()});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, StartsWith("perfgate: "));
  EXPECT_THAT(p.err, HasSubstr(missing));
}

TEST_F(ConfigTest, AnInvalidPolicyNamesItsLine) {
  const std::string bad = dir_->Join("bad.yaml");
  std::ofstream(bad) << "version: 1\ntolerence: 0.05\n";
  const Parsed p = Parse({"calibrations", "--policy", bad.c_str()});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, HasSubstr("bad.yaml:2"));
}

TEST_F(ConfigTest, AnUnknownSimulationModeExits2NamingIt) {
  const Parsed p = Parse({"simulate", "--modes", "single,sideways"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, HasSubstr("perfgate: unknown mode 'sideways'"));
}

TEST_F(ConfigTest, CompareNeedsTwoSides) {
  const Parsed p = Parse({"compare", "only-one.json"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, HasSubstr("perfgate: compare takes A B"));
}

TEST_F(ConfigTest, ExportTakesFilesAndAnOutputAndRefusesAFormatOtherThanBmf) {
  const Parsed p = Parse({"export", "--format", "bmf", "a.json", "b.txt", "--output", "out.json"});
  ASSERT_FALSE(p.exit_code.has_value()) << p.err;
  EXPECT_EQ(p.config.command, Command::kExport);
  EXPECT_EQ(p.config.export_files, (std::vector<std::string>{"a.json", "b.txt"}));
  EXPECT_EQ(p.config.export_output, "out.json");
  const Parsed csv = Parse({"export", "--format", "csv", "a.json"});
  EXPECT_EQ(csv.exit_code, 2);
  EXPECT_THAT(csv.err, HasSubstr("csv"));
}

TEST_F(ConfigTest, AValidGateFillsTheConfigWithItsPolicy) {
  const Parsed p = Parse({"--coordinator", "coord:50051", "gate", "--run", "cand", "--policy", policy_.c_str(),
                          "--mode", "ab", "--baseline-run", "base"});
  ASSERT_EQ(p.exit_code, std::nullopt) << p.err;
  EXPECT_EQ(p.config.command, Command::kGate);
  EXPECT_EQ(p.config.coordinator, "coord:50051");
  EXPECT_EQ(p.config.run_id, "cand");
  EXPECT_EQ(p.config.baseline_run_id, "base");
  EXPECT_EQ(p.config.policy.text, "version: 1\ndefaults:\n  tolerance: 5%\n");
  EXPECT_DOUBLE_EQ(p.config.policy.policy.tolerance, 0.05);
}

TEST_F(ConfigTest, SimulationPercentagesBecomeFractions) {
  const Parsed p = Parse({"simulate", "--modes", "ab,files", "--noise", "1,2", "--burst-samples", "20"});
  ASSERT_EQ(p.exit_code, std::nullopt) << p.err;
  EXPECT_EQ(p.config.command, Command::kSimulate);
  EXPECT_EQ(p.config.sim.modes.size(), 2u);
  EXPECT_EQ(p.config.sim.noise_levels, (std::vector<double>{0.01, 0.02}));
  EXPECT_DOUBLE_EQ(p.config.sim.burst_sample, 0.2);
}

TEST_F(ConfigTest, CompareAndIngestTakeTheCoordinatorFromEitherSide) {
  const Parsed compare = Parse({"--coordinator", "a:1", "compare", "x.json", "y.json", "--timeout", "7"});
  ASSERT_EQ(compare.exit_code, std::nullopt) << compare.err;
  EXPECT_EQ(compare.config.command, Command::kCompare);
  EXPECT_EQ(compare.config.compare.coordinator, "a:1");
  EXPECT_DOUBLE_EQ(compare.config.compare.timeout_s, 7);

  const Parsed ingest = Parse({"ingest", "r.json", "--branch", "main", "--commit", "c0ffee", "--coordinator", "b:2"});
  ASSERT_EQ(ingest.exit_code, std::nullopt) << ingest.err;
  EXPECT_EQ(ingest.config.command, Command::kIngest);
  EXPECT_EQ(ingest.config.ingest.coordinator, "b:2");
  EXPECT_EQ(ingest.config.ingest.files, std::vector<std::string>{"r.json"});
}

TEST_F(ConfigTest, HelpExits0AndAMissingSubcommandExits2) {
  const Parsed help = Parse({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("gate"));
  const Parsed none = Parse({});
  EXPECT_EQ(none.exit_code, 2);
}

TEST_F(ConfigTest, BisectRefusesAnIncompleteOrAmbiguousRequestNamingWhatIsWrong) {
  // Neither a regression nor a range, or both.
  EXPECT_THAT(Parse({"bisect", "--cmd", "{artifact}/bench"}).err, HasSubstr("bisect takes one of"));
  EXPECT_THAT(Parse({"bisect", "7", "--good", "a", "--bad", "b"}).err, HasSubstr("bisect takes one of"));
  EXPECT_THAT(Parse({"bisect", "--good", "a"}).err, HasSubstr("--good and --bad go together"));
  // Images only by digest, and not with commits or --into-merges.
  const std::string good_image = "stack@sha256:" + std::string(64, 'a');
  const std::string bad_image = "stack@sha256:" + std::string(64, 'b');
  const char* digest = good_image.c_str();
  EXPECT_THAT(Parse({"bisect", "--good-image", "stack:latest", "--bad-image", digest, "--cmd", "{image}"}).err,
              HasSubstr("--good-image 'stack:latest' is not an image digest"));
  for (const std::string& bad : {"@sha256:" + std::string(64, 'a'), "st ack@sha256:" + std::string(64, 'a'),
                                 "a@b@sha256:" + std::string(64, 'a'), "stack@sha256:" + std::string(63, 'a'),
                                 "stack@sha256:" + std::string(64, 'A'), "stack@sha256:" + std::string(65, 'a'),
                                 "-stack@sha256:" + std::string(64, 'a')}) {
    EXPECT_THAT(Parse({"bisect", "--good-image", bad.c_str(), "--bad-image", digest, "--cmd", "{image}"}).err,
                HasSubstr("is not an image digest"))
        << bad;
  }
  EXPECT_THAT(Parse({"bisect", "--good", "a", "--bad", "b", "--good-image", digest, "--bad-image", digest}).err,
              HasSubstr("bisect takes one of"));
  EXPECT_THAT(Parse({"bisect", "--good-image", digest, "--bad-image", digest, "--cmd", "{image}"}).err,
              HasSubstr("are the same"));
  EXPECT_THAT(Parse({"bisect", "--good-image", digest, "--bad-image", bad_image.c_str(),
                     "--into-merges", "--cmd", "{image}"}).err,
              HasSubstr("--into-merges applies to commits"));
  EXPECT_THAT(Parse({"bisect", "--good-image", digest, "--bad-image", bad_image.c_str(), "--count", "--cmd",
                     "{image}"}).err,
              HasSubstr("cannot count a program inside an image"));
  // Counted probes judge instructions only.
  EXPECT_THAT(Parse({"bisect", "--good", "a", "--bad", "b", "--count", "--case", "gbench/BM_Work", "--metric",
                     "real_time"}).err,
              HasSubstr("--count judges instructions, not 'real_time'"));
  // How commits are built and run.
  const char* repo = ".";
  Parsed p = Parse({"bisect", "--good", "a", "--bad", "b", "--repo", repo, "--cmd", "{artifact}/bench"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, HasSubstr("give one of --build"));
  p = Parse({"bisect", "--good", "a", "--bad", "b", "--build", "make", "--cmd", "{artifact}/bench"});
  EXPECT_THAT(p.err, HasSubstr("--build: the command must name {artifact}"));
  p = Parse({"bisect", "--good", "a", "--bad", "b", "--artifact", "/builds/bench", "--cmd", "{artifact}/bench"});
  EXPECT_THAT(p.err, HasSubstr("{commit}"));
  p = Parse({"bisect", "--good", "a", "--bad", "b", "--artifact", "/b/{commit}", "--cmd", "./bench 'open"});
  EXPECT_THAT(p.err, HasSubstr("unterminated single quote"));
  p = Parse({"bisect", "--good", "a", "--bad", "b", "--artifact", "/b/{commit}", "--cmd", "./bench"});
  EXPECT_THAT(p.err, HasSubstr("{artifact}"));
  p = Parse({"bisect", "--good", "a", "--bad", "b", "--artifact", "/b/{commit}", "--cmd", "{artifact}",
             "--repo", "/nonexistent/repo"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_THAT(p.err, HasSubstr("/nonexistent/repo"));
  // --status needs nothing else.
  EXPECT_FALSE(Parse({"bisect", "--status", "3"}).exit_code.has_value());
}

TEST_F(ConfigTest, WhoIsTheLoginNameWhenUserIsUnset) {
  const char* user = std::getenv("USER");
  const std::string saved = user == nullptr ? "" : user;
  unsetenv("USER");
  const Parsed bisect = Parse({"bisect", "--status", "3"});
  const Parsed triage = Parse({"triage", "4", "--state", "fixed", "--note", "n"});
  if (user != nullptr) setenv("USER", saved.c_str(), 1);
  const passwd* pw = getpwuid(getuid());
  const std::string expected = pw != nullptr ? pw->pw_name : "uid " + std::to_string(getuid());
  EXPECT_FALSE(bisect.exit_code.has_value()) << bisect.err;
  EXPECT_EQ(bisect.config.by, expected);
  EXPECT_EQ(triage.config.by, expected);
  EXPECT_EQ(Parse({"triage", "4", "--state", "fixed", "--note", "n", "--by", "ana"}).config.by, "ana");
}

TEST_F(ConfigTest, AResumedBisectionKeepsTheAgentOfTheFlag) {
  const Parsed p = Parse({"bisect", "--resume", "3", "--agent", "/new/build/perfgate-agent"});
  EXPECT_FALSE(p.exit_code.has_value()) << p.err;
  EXPECT_EQ(p.config.bisect.agent, "/new/build/perfgate-agent");
}

TEST_F(ConfigTest, AnUnknownResultFormatExits2ListingTheFormats) {
  for (const std::vector<const char*>& args :
       {std::vector<const char*>{"compare", "a.json", "b.json", "--format", "gbench"},
        std::vector<const char*>{"ingest", "a.json", "--branch", "main", "--commit", "c", "--format", "gbench"},
        std::vector<const char*>{"export", "a.json", "--input-format", "gbench"}}) {
    const Parsed p = Parse(args);
    EXPECT_EQ(p.exit_code, 2) << args[0];
    EXPECT_THAT(p.err, StartsWith("perfgate: "));
    EXPECT_THAT(p.err, HasSubstr("unknown result format 'gbench'"));
    for (const char* name : {"perfgate", "google-benchmark", "nvbench", "pytest-benchmark", "hyperfine",
                             "nccl-tests", "bencher-bmf"}) {
      EXPECT_THAT(p.err, HasSubstr(name)) << args[0];
    }
  }
}

TEST_F(ConfigTest, AKnownResultFormatIsKeptForTheCommandThatReadsFiles) {
  Parsed p = Parse({"compare", "a.json", "b.json", "--format", "hyperfine"});
  EXPECT_FALSE(p.exit_code.has_value()) << p.err;
  EXPECT_EQ(p.config.compare.format, "hyperfine");
  p = Parse({"ingest", "a.json", "--branch", "main", "--commit", "c", "--format", "nccl-tests"});
  EXPECT_FALSE(p.exit_code.has_value()) << p.err;
  EXPECT_EQ(p.config.ingest.format, "nccl-tests");
  p = Parse({"export", "a.json", "--input-format", "bencher-bmf"});
  EXPECT_FALSE(p.exit_code.has_value()) << p.err;
  EXPECT_EQ(p.config.export_input_format, "bencher-bmf");
}

}  // namespace
}  // namespace perfgate::cli
