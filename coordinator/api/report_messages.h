// Stored gate reports as messages: the reports table keeps each report's
// v1::GateReport in protobuf's JSON mapping (the API's JSON since reports
// joined the schema; in its lowerCamelCase names before, which the parser
// reads as well), read back for Gate.GetReport and for the HTTP API's
// `/api/v1/reports/ID`, which answers the API's JSON as `perfgate gate
// --json` writes it.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/store/reports.h"
#include "perfgate/v1/gate.pb.h"

namespace perfgate::coordinator {

/// The report's text as it is stored.
std::string StoredReportJson(const v1::GateReport& report);

/// Stored report `id`, with its id set. INVALID_ARGUMENT for an id that is
/// not positive, NOT_FOUND for an unknown one, INTERNAL for a stored text
/// that is no report; a field of a newer coordinator's report is skipped.
absl::StatusOr<v1::GateReport> StoredReport(store::ReportRepository& reports, int64_t id);

}  // namespace perfgate::coordinator
