// Images pinned by digest (agent/image.h): what a run records, and the
// command an image side of `ab` runs.
#include "agent/image.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace perfgate::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kDigest = "sha256:" + std::string(64, 'e');

TEST(ImageDigest, IsSha256AndSixtyFourLowerCaseHexDigits) {
  EXPECT_TRUE(IsImageDigest(kDigest));
  EXPECT_TRUE(IsImageDigest("sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsImageDigest("sha256:" + std::string(63, 'e')));
  EXPECT_FALSE(IsImageDigest("sha256:" + std::string(65, 'e')));
  EXPECT_FALSE(IsImageDigest("sha256:" + std::string(64, 'E')));
  EXPECT_FALSE(IsImageDigest("sha512:" + std::string(64, 'e')));
  EXPECT_FALSE(IsImageDigest("sha256:" + std::string(63, 'e') + "g"));
  EXPECT_FALSE(IsImageDigest(""));
}

TEST(ImageDigest, OfAReferenceIsWhatFollowsTheAt) {
  auto d = DigestOfReference("registry.example.com:5000/perfgate-agent:main@" + kDigest);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, kDigest);
}

TEST(ImageDigest, ATagAloneOrABadDigestIsRefusedNamingTheReference) {
  auto tag = DigestOfReference("registry.example.com/perfgate-agent:main");
  ASSERT_FALSE(tag.ok());
  EXPECT_THAT(std::string(tag.status().message()), HasSubstr("'registry.example.com/perfgate-agent:main' is not pinned"));
  auto bad = DigestOfReference("perfgate-agent@sha256:abc");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("'sha256:abc' is not a digest"));
  EXPECT_FALSE(DigestOfReference("@" + kDigest).ok());
}

TEST(ImageDigest, RecordedIsTheDigestElseUnpinnedInAContainerElseEmpty) {
  EXPECT_EQ(*RecordedImageDigest(kDigest.c_str(), true), kDigest);
  EXPECT_EQ(*RecordedImageDigest(kDigest.c_str(), false), kDigest);
  EXPECT_EQ(*RecordedImageDigest(nullptr, true), "unpinned");
  EXPECT_EQ(*RecordedImageDigest("", true), "unpinned");
  EXPECT_EQ(*RecordedImageDigest(nullptr, false), "");
  auto bad = RecordedImageDigest("latest", true);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("PERFGATE_IMAGE_DIGEST 'latest' is not a digest"));
}

TEST(ImageSide, RunsTheImageByDigestWithTheDigestInItsEnvironment) {
  const std::string ref = "127.0.0.1:5000/perfgate-agent@" + kDigest;
  auto argv = ImageSideCommand("podman", {"--tls-verify=false", "--device=nvidia.com/gpu=all"}, ref);
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_THAT(*argv, ElementsAre("podman", "run", "--rm", "--network=host", "--env",
                                 "PERFGATE_IMAGE_DIGEST=" + kDigest, "--tls-verify=false",
                                 "--device=nvidia.com/gpu=all", ref));
}

TEST(ImageSide, RefusesAnUnpinnedImageAndAnEmptyEngine) {
  EXPECT_FALSE(ImageSideCommand("podman", {}, "perfgate-agent:latest").ok());
  EXPECT_FALSE(ImageSideCommand("", {}, "perfgate-agent@" + kDigest).ok());
}

}  // namespace
}  // namespace perfgate::agent
