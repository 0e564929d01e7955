// Conversion between the wire messages of perfgate.v1 and the domain types of
// common/. Conversions from the wire validate and name the offending field.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/calibration.h"
#include "common/run_types.h"
#include "google/protobuf/timestamp.pb.h"
#include "perfgate/v1/common.pb.h"
#include "perfgate/v1/ingest.pb.h"

namespace perfgate::wire {

v1::Direction ToProto(Direction d);
v1::CaseStatus ToProto(CaseStatus s);
v1::Trigger ToProto(Trigger t);
v1::RunStatus ToProto(RunStatus s);
/// A map of text as its wire entries (common.proto's TextEntry), in key order.
void ToProto(const std::map<std::string, std::string>& m, google::protobuf::RepeatedPtrField<v1::TextEntry>* out);
void ToProto(const BenchmarkId& id, v1::BenchmarkId* out);
void ToProto(const MetricSpec& m, v1::MetricSpec* out);
void ToProto(const CaseResult& c, v1::CaseResult* out);
void ToProto(const Environment& e, v1::Environment* out);
void ToProto(TimePoint t, google::protobuf::Timestamp* out);
/// The OpenRun request for `meta`.
void ToProto(const RunMeta& meta, v1::OpenRunRequest* out);
/// The wire form of one calibrated metric of one case.
void ToProto(const CalibrationEntry& e, v1::CalibrationEntry* out);
/// The PutCalibration request of `set`, sent by agent `agent_name`.
void ToProto(const CalibrationSet& set, const std::string& agent_name, v1::PutCalibrationRequest* out);

TimePoint FromProto(const google::protobuf::Timestamp& t);
/// A map of text from its wire entries; of a key given twice, the last
/// (as a protobuf map reads it; Ingest refuses such a request first).
std::map<std::string, std::string> FromProto(const google::protobuf::RepeatedPtrField<v1::TextEntry>& entries);
Environment FromProto(const v1::Environment& e);
BenchmarkId FromProto(const v1::BenchmarkId& id);

/// A case's bound (none when it gives none); INVALID_ARGUMENT naming the
/// field when its kind is unspecified, its value not finite, its metric not
/// one of the case's, or the case carries samples.
absl::StatusOr<std::optional<ValueBound>> BoundFromProto(const v1::CaseResult& c, const std::string& field);
/// Validates and converts a case; `field` prefixes messages ("cases[2]").
absl::StatusOr<CaseResult> FromProto(const v1::CaseResult& c, const std::string& field);
/// Validates and converts an OpenRun request.
absl::StatusOr<RunMeta> FromProto(const v1::OpenRunRequest& r);
absl::StatusOr<Direction> FromProto(v1::Direction d, const std::string& field);
absl::StatusOr<RunStatus> FromProto(v1::RunStatus s, const std::string& field);
/// Validates and converts a calibration entry; `field` prefixes messages ("entries[0]").
absl::StatusOr<CalibrationEntry> FromProto(const v1::CalibrationEntry& e, const std::string& field);
/// Validates and converts a PutCalibration request (agent_name, node, SKU,
/// measured_at and at least one valid entry); errors name the field.
absl::StatusOr<CalibrationSet> FromProto(const v1::PutCalibrationRequest& r);

}  // namespace perfgate::wire
