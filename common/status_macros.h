// The two ways a function that returns absl::Status or absl::StatusOr<T>
// passes an error on: PERFGATE_RETURN_IF_ERROR(expr) returns the status of
// expr when it is not OK; PERFGATE_ASSIGN_OR_RETURN(lhs, expr) returns it
// likewise, else moves the value into lhs ("auto x" or an existing name).
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace perfgate::status_internal {

/// The status of a StatusOr, for PERFGATE_RETURN_IF_ERROR.
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}
/// A status itself: an absl::Status, or another type with ok() that a
/// function returns as its error (a grpc::Status in a gRPC handler).
template <typename S>
const S& StatusOf(const S& s) {
  return s;
}

}  // namespace perfgate::status_internal

#define PERFGATE_STATUS_CONCAT_INNER(a, b) a##b
#define PERFGATE_STATUS_CONCAT(a, b) PERFGATE_STATUS_CONCAT_INNER(a, b)

/// Returns the status of `expr` (an absl::Status, an absl::StatusOr, or a
/// grpc::Status in a gRPC handler) when it is not OK.
#define PERFGATE_RETURN_IF_ERROR(expr)                                                   \
  do {                                                                                   \
    if (const auto& perfgate_status_ = (expr); !perfgate_status_.ok()) {                 \
      return ::perfgate::status_internal::StatusOf(perfgate_status_);                   \
    }                                                                                    \
  } while (false)

/// Evaluates `expr` (an absl::StatusOr<T>): returns its status when it is not
/// OK, else moves its value into `lhs`.
#define PERFGATE_ASSIGN_OR_RETURN(lhs, expr) \
  PERFGATE_ASSIGN_OR_RETURN_IMPL(PERFGATE_STATUS_CONCAT(perfgate_statusor_, __LINE__), lhs, expr)
#define PERFGATE_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()
