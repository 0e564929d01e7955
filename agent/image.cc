#include "agent/image.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace perfgate::agent {

bool IsImageDigest(const std::string& digest) {
  constexpr std::string_view kPrefix = "sha256:";
  if (digest.size() != kPrefix.size() + 64 || digest.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  for (size_t i = kPrefix.size(); i < digest.size(); ++i) {
    const char c = digest[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::StatusOr<std::string> DigestOfReference(const std::string& reference) {
  const size_t at = reference.rfind('@');
  if (at == std::string::npos || at == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image '", reference, "' is not pinned: name it by digest, REPOSITORY@sha256:<64 hex digits>"));
  }
  std::string digest = reference.substr(at + 1);
  if (!IsImageDigest(digest)) {
    return absl::InvalidArgumentError(absl::StrCat("image '", reference, "': '", digest,
                                                   "' is not a digest (sha256:<64 lower-case hex digits>)"));
  }
  return digest;
}

absl::StatusOr<std::string> RecordedImageDigest(const char* env_value, bool in_container) {
  if (env_value == nullptr || *env_value == '\0') return std::string(in_container ? kUnpinnedImage : "");
  if (!IsImageDigest(env_value)) {
    return absl::InvalidArgumentError(absl::StrCat("PERFGATE_IMAGE_DIGEST '", env_value,
                                                   "' is not a digest (sha256:<64 lower-case hex digits>)"));
  }
  return std::string(env_value);
}

bool InContainer() { return access("/run/.containerenv", F_OK) == 0 || access("/.dockerenv", F_OK) == 0; }

absl::StatusOr<std::vector<std::string>> ImageSideCommand(const std::string& engine,
                                                          const std::vector<std::string>& engine_args,
                                                          const std::string& reference) {
  auto digest = DigestOfReference(reference);
  PERFGATE_RETURN_IF_ERROR(digest);
  if (engine.empty()) return absl::InvalidArgumentError("empty container engine");
  std::vector<std::string> argv = {engine, "run", "--rm", "--network=host", "--env",
                                   absl::StrCat("PERFGATE_IMAGE_DIGEST=", *digest)};
  argv.insert(argv.end(), engine_args.begin(), engine_args.end());
  argv.push_back(reference);
  return argv;
}

}  // namespace perfgate::agent
