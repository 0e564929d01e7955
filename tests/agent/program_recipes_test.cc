// The recipes for `perfgate-agent ab --baseline-cmd/--candidate-cmd`: one
// command per tool, the same table in README.md and in
// docs/existing-benchmarks.md, and those of the tools installed here
// (Google Benchmark, hyperfine, pytest-benchmark) run once each as a block
// of `ab` runs them, with the placeholders filled in, to show that a block
// gets exactly the {samples} it asked for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/program_ab.h"
#include "common/command_line.h"
#include "tests/support/processes.h"

namespace perfgate::agent::program_recipes_test {
namespace {

using ::testing::ElementsAre;
using ::testing::Key;

constexpr char kTableHeader[] = "| tool | a side's command |";

// The recipe table's rows of a Markdown file, by tool: the command cell as
// written, after the header row and its rule, up to the first line that is
// not a row.
std::map<std::string, std::string> RecipeRows(const std::string& relative) {
  std::ifstream in(std::string(PERFGATE_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in) << relative;
  std::map<std::string, std::string> rows;
  std::string line;
  while (std::getline(in, line) && line != kTableHeader) {
  }
  EXPECT_EQ(line, kTableHeader) << relative << " has no recipe table";
  std::getline(in, line);  // |---|---|
  while (std::getline(in, line) && line.rfind("| ", 0) == 0) {
    const size_t bar = line.find(" | ", 2);
    EXPECT_NE(bar, std::string::npos) << relative << ": " << line;
    if (bar == std::string::npos) continue;
    const std::string tool = line.substr(2, bar - 2);
    EXPECT_EQ(rows.count(tool), 0u) << relative << ": " << tool << " twice";
    rows[tool] = line.substr(bar + 3);
  }
  return rows;
}

// The command of a row: its cell's first `code span`.
std::string CommandOf(const std::string& cell) {
  const size_t open = cell.find('`');
  const size_t close = cell.find('`', open + 1);
  EXPECT_NE(close, std::string::npos) << cell;
  return close == std::string::npos ? "" : cell.substr(open + 1, close - open - 1);
}

TEST(ProgramRecipes, ReadmeAndTheDocsPageGiveTheSameCommandForEveryTool) {
  const auto readme = RecipeRows("README.md");
  const auto docs = RecipeRows("docs/existing-benchmarks.md");
  EXPECT_THAT(docs, ElementsAre(Key("Bencher BMF"), Key("Google Benchmark"), Key("hyperfine"), Key("nccl-tests"),
                                Key("nvbench"), Key("pytest-benchmark")));
  EXPECT_EQ(readme, docs);
}

// A recipe of the docs page with its words that name the user's program
// replaced, run once as a block of `ab` runs it; every case it reports
// must hold exactly the samples asked for.
void RunRecipe(const std::string& tool, const std::map<std::string, std::string>& fill, const std::string& work) {
  const auto rows = RecipeRows("docs/existing-benchmarks.md");
  ASSERT_EQ(rows.count(tool), 1u) << tool;
  auto argv = SplitCommand(CommandOf(rows.at(tool)));
  ASSERT_TRUE(argv.ok()) << argv.status();
  for (std::string& word : *argv) {
    if (auto it = fill.find(word); it != fill.end()) word = it->second;
  }
  constexpr unsigned kSamples = 3;
  CommandProgram program(*argv, 120, work);
  ASSERT_TRUE(program.TakesSamples()) << tool;
  auto set = program.Run(kSamples);
  ASSERT_TRUE(set.ok()) << tool << ": " << set.status();
  ASSERT_FALSE(set->cases.empty()) << tool;
  for (const CaseResult& c : set->cases) {
    EXPECT_EQ(c.samples.size(), kSamples) << tool << " " << c.benchmark.Key() << ": " << JoinCommand(*argv);
  }
}

class RunnableRecipes : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::TempDir::Create("perfgate-recipes-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<testing::TempDir>(std::move(*dir));
  }
  std::unique_ptr<testing::TempDir> dir_;
};

TEST_F(RunnableRecipes, TheGoogleBenchmarkCommandMakesOneSampleARepetition) {
  RunRecipe("Google Benchmark", {{"./bench", PERFGATE_WORK_BENCH}}, dir_->path());
}

TEST_F(RunnableRecipes, TheHyperfineCommandMakesOneSampleARun) {
  RunRecipe("hyperfine", {{"NAME", "spin"}, {"PROGRAM ARGS", std::string(PERFGATE_SPIN) + " 200000"}}, dir_->path());
}

TEST_F(RunnableRecipes, ThePytestBenchmarkCommandMakesOneSampleARoundAndNoMore) {
  // A test that takes microseconds: without a tiny --benchmark-max-time,
  // pytest-benchmark would add rounds for a second of them.
  const std::string folder = dir_->Join("bench");
  std::filesystem::create_directories(folder);
  std::ofstream(folder + "/test_sum.py") << "def test_sum(benchmark):\n    benchmark(sum, range(100))\n";
  RunRecipe("pytest-benchmark", {{"DIR", folder}}, dir_->path());
}

}  // namespace
}  // namespace perfgate::agent::program_recipes_test
