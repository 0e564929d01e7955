// Strict, bounded checks of the Ingest requests, before anything is
// converted or stored: every text field valid UTF-8 without NUL and within
// its limit, every map and list bounded, timestamps in range, benchmark ids in
// the one key grammar (common/identity.h), sample indices in range and unique
// within a case. Each error is INVALID_ARGUMENT naming the field. The
// coordinator runs these first on every Ingest call; the agent runs
// ValidateBatch before a batch leaves it, so a batch the coordinator would
// refuse is known as such. The limits are listed in the proto comments and
// docs/limits-and-faults.md.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/timestamp.pb.h"
#include "perfgate/v1/common.pb.h"
#include "perfgate/v1/ingest.pb.h"

namespace perfgate::wire {

// Limits, in bytes of UTF-8 unless they count entries.
inline constexpr size_t kMaxAgentName = 200;
inline constexpr size_t kMaxHostname = 255;
inline constexpr size_t kMaxVersion = 64;
inline constexpr size_t kMaxSku = 200;
inline constexpr size_t kMaxRepo = 512;
inline constexpr size_t kMaxBranch = 255;
inline constexpr size_t kMaxCommit = 128;
inline constexpr size_t kMaxCiJob = 255;
inline constexpr size_t kMaxNode = 255;
inline constexpr size_t kMaxParentCommits = 1000;
inline constexpr size_t kMaxDetails = 512;
inline constexpr size_t kMaxDetailKey = 200;
inline constexpr size_t kMaxDetailValue = 1024;
inline constexpr size_t kMaxDetailsBytes = 16384;
inline constexpr size_t kMaxEnvironmentFields = 256;
inline constexpr size_t kMaxEnvironmentValue = 4096;
inline constexpr size_t kMaxEnvironmentBytes = 65536;
inline constexpr size_t kMaxReason = 4096;
inline constexpr size_t kMaxInvalidReasons = 64;
inline constexpr size_t kMaxInvalidReason = 1024;
inline constexpr size_t kMaxCasesPerBatch = 1024;
inline constexpr size_t kMaxMetricsPerCase = 64;
inline constexpr size_t kMaxMetricName = 128;
inline constexpr size_t kMaxUnit = 64;
inline constexpr size_t kMaxCalibrationEntries = 100000;
// Timestamps: from the epoch to 2100-01-01T00:00:00Z.
inline constexpr int64_t kMaxTimestampSeconds = 4102444800;

/// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates,
/// nothing above U+10FFFF).
bool IsUtf8(std::string_view s);

/// OK when `s` is UTF-8 without NUL, at most `max` bytes, non-empty when
/// `required`, and, for a `line`, without control characters.
absl::Status CheckText(std::string_view s, const std::string& field, size_t max, bool required, bool line);
/// OK when `t` lies from 1970 to 2100 with nanos in [0, 1e9).
absl::Status CheckTimestamp(const google::protobuf::Timestamp& t, const std::string& field);

absl::Status ValidateRegisterAgent(const v1::RegisterAgentRequest& r);
absl::Status ValidateOpenRun(const v1::OpenRunRequest& r);
/// A batch: run id, sequence, 1 to kMaxCasesPerBatch cases each checked by
/// ValidateCase, and no (benchmark, sample index) twice in it.
absl::Status ValidateBatch(const v1::ResultBatch& b);
/// One case; `field` prefixes messages ("cases[2]").
absl::Status ValidateCase(const v1::CaseResult& c, const std::string& field);
absl::Status ValidateCloseRun(const v1::CloseRunRequest& r);
absl::Status ValidatePutCalibration(const v1::PutCalibrationRequest& r);

}  // namespace perfgate::wire
