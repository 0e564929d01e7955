#include "common/placeholders.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/row_limits.h"

namespace perfgate {
namespace {

TEST(Placeholders, AreReplacedInsideWordsInOnePass) {
  // A value holding another placeholder's name stays as it is: a path with
  // "{out}" in it is not a second result file.
  const std::vector<std::string> argv = {"{artifact}/bench", "--benchmark_out={out}", "--n={samples}", "{commit}"};
  EXPECT_EQ(ExpandPlaceholders(argv, {{kArtifactPlaceholder, "/b/{out}"}, {kOutPlaceholder, "/r.json"},
                                      {kSamplesPlaceholder, "9"}}),
            (std::vector<std::string>{"/b/{out}/bench", "--benchmark_out=/r.json", "--n=9", "{commit}"}));
}

TEST(Placeholders, AreFoundInAWordOrAText) {
  EXPECT_TRUE(NamesPlaceholder(std::vector<std::string>{"./b", "--out={out}"}, kOutPlaceholder));
  EXPECT_FALSE(NamesPlaceholder(std::vector<std::string>{"./b", "--out=out"}, kOutPlaceholder));
  EXPECT_TRUE(NamesPlaceholder("make {commit}", kCommitPlaceholder));
  EXPECT_FALSE(NamesPlaceholder("make {commit}", kArtifactPlaceholder));
}

TEST(RowLimits, TakeTheDefaultForNoneAndRefuseMoreThanTheMostNamingIt) {
  EXPECT_EQ(*RowsFor(kRunRows, 0), kRunRows.fallback);
  EXPECT_EQ(*RowsFor(kRunRows, kRunRows.most), kRunRows.most);
  const auto over = RowsFor(kRunRows, kRunRows.most + 1);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(over.status().message(), "limit: at most 1000 runs");
  EXPECT_EQ(ClampRows(kSeriesPointRows, 0), kSeriesPointRows.fallback);
  EXPECT_EQ(ClampRows(kSeriesPointRows, 1u << 30), kSeriesPointRows.most);
  EXPECT_EQ(ClampRows(kSeriesPointRows, 7), 7u);
}

}  // namespace
}  // namespace perfgate
