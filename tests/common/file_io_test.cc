// Whole-file reads and atomic writes: the bytes come back exactly, a write
// replaces a file whole and leaves no temporary file, and a failure names
// the file and leaves nothing behind.
#include "common/file_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "tests/support/processes.h"

namespace perfgate {
namespace {

using ::testing::HasSubstr;

testing::TempDir Scratch() {
  auto dir = testing::TempDir::Create("perfgate-file-io-");
  EXPECT_TRUE(dir.ok()) << dir.status();
  return std::move(*dir);
}

size_t FilesIn(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(FileIo, AFileWrittenAtomicallyReadsBackByteForByte) {
  const testing::TempDir dir = Scratch();
  const std::string path = dir.Join("data.bin");
  const std::string bytes("a\0b\nc\xff", 6);
  ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());
  auto back = ReadWholeFile(path, 64);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, bytes);
  EXPECT_GE(back->capacity(), bytes.size() + 64);
}

TEST(FileIo, AnAtomicWriteReplacesTheOldFileAndLeavesNoTemporaryFile) {
  const testing::TempDir dir = Scratch();
  const std::string path = dir.Join("results.json");
  ASSERT_TRUE(WriteFileAtomically(path, std::string(100000, 'o')).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new", {.mode = 0600, .durable = true}).ok());
  EXPECT_EQ(*ReadWholeFile(path), "new");
  EXPECT_EQ(FilesIn(dir.path()), 1u);
}

TEST(FileIo, ANewFileGetsTheModeAsked) {
  const testing::TempDir dir = Scratch();
  const std::string path = dir.Join("private");
  ASSERT_TRUE(WriteFileAtomically(path, "x", {.mode = 0600}).ok());
  struct stat st{};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(FileIo, AWriteIntoAMissingFolderIsUnavailableNamingTheFile) {
  const testing::TempDir dir = Scratch();
  const std::string path = dir.Join("no/such/folder/out.json");
  const absl::Status s = WriteFileAtomically(path, "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("out.json"));
  EXPECT_EQ(FilesIn(dir.path()), 0u);
}

TEST(FileIo, AMissingFileIsNotFoundNamingItAndTheReason) {
  auto text = ReadWholeFile("/nonexistent/input.json");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(text.status().message(), HasSubstr("/nonexistent/input.json: cannot open: No such file"));
}

TEST(FileIo, AFileOfUnknownSizeIsReadWhole) {
  // /proc files report size 0 and hold text all the same.
  auto text = ReadWholeFile("/proc/self/status");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("Name:"));
}

}  // namespace
}  // namespace perfgate
