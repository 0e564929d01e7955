// What the shared driver (collectives.cc) needs from a backend: fill the
// inputs, run the operation a number of times and say how long it took,
// check the result. Internal to the suite.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "suites/collectives/ops.h"

namespace perfgate::suites::collectives {

/// One prepared case on one backend.
class Backend {
 public:
  virtual ~Backend() = default;
  /// Ranks taking part (the n of the bus factors).
  virtual int ranks() const = 0;
  /// Writes the exact input pattern (and clears the outputs).
  virtual absl::Status Fill() = 0;
  /// Runs `iters` operations back to back; seconds from first start to last
  /// completion, on this rank (device events, or the host clock).
  virtual absl::StatusOr<double> Time(int iters) = 0;
  /// Compares this process's results with ExpectedValue(); an empty string
  /// when right, else what was wrong (op, size, rank, first wrong index).
  virtual absl::StatusOr<std::string> Check(int corrupt_rank) = 0;
};

/// "OP: BYTES B, rank R: element I is V, expected E": the message of a wrong result.
std::string Mismatch(Op op, size_t bytes, int rank, size_t index, double got, int32_t expected);

}  // namespace perfgate::suites::collectives
