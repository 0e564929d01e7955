// Container images as the identity of a software stack (docs/containers.md):
// the digest a run records, and an `ab` side that runs perfgate-agent from
// an image named by digest.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace perfgate::agent {

/// What a run records as `image_digest` when it is not pinned: it runs in a
/// container, but nothing said which image.
inline constexpr char kUnpinnedImage[] = "unpinned";

/// Whether `digest` is "sha256:" and 64 lower-case hex digits.
bool IsImageDigest(const std::string& digest);

/// The digest of a reference pinned by digest, "REPO[:TAG]@sha256:HEX" ->
/// "sha256:HEX". INVALID_ARGUMENT, naming the reference, when it has no
/// digest or a malformed one: a tag alone may move, so it names no stack.
absl::StatusOr<std::string> DigestOfReference(const std::string& reference);

/// The `image_digest` a run records, from the value of PERFGATE_IMAGE_DIGEST
/// (`env_value`, null when unset) and whether this process runs in a
/// container: the digest when set; kUnpinnedImage in a container without it;
/// "" on a host (no image). INVALID_ARGUMENT when set but not a digest.
absl::StatusOr<std::string> RecordedImageDigest(const char* env_value, bool in_container);

/// Whether this process runs in a container: podman's /run/.containerenv or
/// Docker's /.dockerenv exists.
bool InContainer();

/// The command prefix of an `ab` side run from `reference` (pinned by
/// digest): `ENGINE run --rm --network=host --env PERFGATE_IMAGE_DIGEST=D
/// [ENGINE_ARGS...] REFERENCE`; the image's entrypoint is perfgate-agent, so
/// the `sample` flags follow. Argument words only, never a shell.
absl::StatusOr<std::vector<std::string>> ImageSideCommand(const std::string& engine,
                                                          const std::vector<std::string>& engine_args,
                                                          const std::string& reference);

}  // namespace perfgate::agent
