// The one place where a domain or storage status becomes what a caller of
// the coordinator sees: a gRPC status (bad input -> INVALID_ARGUMENT, unknown
// run -> NOT_FOUND, resend of a finished run -> ALREADY_EXISTS, database
// down -> UNAVAILABLE, a bug -> INTERNAL logged with a request id) or an
// HTTP status code. Both count storage failures in the metrics.
#pragma once

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"

namespace perfgate::coordinator {

/// The gRPC status of `status`; INTERNAL (a bug) is logged with a request
/// id that the client also sees. `method` names the call in the log and
/// the metrics.
grpc::Status ToGrpc(const absl::Status& status, const char* method);

/// The HTTP status code of a failed `status` (400, 401, 403, 404, 409, 503,
/// else 500); `what` names the route in the metrics.
int ToHttpStatus(const absl::Status& status, const char* what);

}  // namespace perfgate::coordinator
