#include "coordinator/api/error_mapping.h"

#include <atomic>
#include <cstdint>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "coordinator/domain/metrics.h"

namespace perfgate::coordinator {
namespace {

std::atomic<uint64_t> g_request_ids{1};

// A failure of the storage below (or a bug), counted per call.
void CountStoreError(absl::StatusCode code, const char* what) {
  if (code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kAborted ||
      code == absl::StatusCode::kInternal || code == absl::StatusCode::kUnknown) {
    DefaultMetrics().StoreError(what);
  }
}

}  // namespace

grpc::Status ToGrpc(const absl::Status& status, const char* method) {
  if (status.ok()) return grpc::Status::OK;
  CountStoreError(status.code(), method);
  if (status.code() == absl::StatusCode::kInternal || status.code() == absl::StatusCode::kUnknown) {
    const uint64_t id = g_request_ids.fetch_add(1);
    std::cerr << "perfgate-coordinator: " << method << " request " << id << ": " << status.message()
              << std::endl;
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        absl::StrCat("internal error (request ", id, "; see the coordinator log)"));
  }
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

int ToHttpStatus(const absl::Status& status, const char* what) {
  CountStoreError(status.code(), what);
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAlreadyExists: return 409;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kAborted: return 503;
    default: return 500;
  }
}

}  // namespace perfgate::coordinator
