// Whole files in and out: a file read whole as bytes, and a file written
// atomically (a temporary file beside it, then a rename), so that a reader
// sees the old file or the new one, never half of one.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace perfgate {

/// The bytes of the file (a pipe or a /proc file too). NOT_FOUND "PATH:
/// cannot open: REASON" when it cannot be opened, DATA_LOSS when reading
/// fails. `spare` bytes of capacity are reserved beyond the text (a parser
/// that reads past its end, like simdjson, then takes it uncopied).
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t spare = 0);

/// How WriteFileAtomically writes.
struct AtomicWrite {
  unsigned mode = 0666;  // of a new file, less the umask
  /// The file and its directory are synced before it returns: the new file
  /// survives a crash (a spool), at the cost of waiting for the disk.
  bool durable = false;
};

/// Writes text to path atomically: a hidden temporary file beside it
/// (".NAME.tmp.PID"), then a rename over it. UNAVAILABLE naming the file
/// and the reason when a step fails; the temporary file is removed then.
absl::Status WriteFileAtomically(const std::string& path, const std::string& text, AtomicWrite how = {});

}  // namespace perfgate
