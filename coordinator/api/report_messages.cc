#include "coordinator/api/report_messages.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "wire/api_json.h"

namespace perfgate::coordinator {

std::string StoredReportJson(const v1::GateReport& report) { return wire::ToApiJson(report); }

absl::StatusOr<v1::GateReport> StoredReport(store::ReportRepository& reports, int64_t id) {
  if (id <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("report_id: ", id, " is not a report id; ids are positive and printed by `perfgate gate`"));
  }
  PERFGATE_ASSIGN_OR_RETURN(const std::string json, reports.GetGateReport(id));
  v1::GateReport report;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // a report stored by a newer coordinator
  if (!google::protobuf::util::JsonStringToMessage(json, &report, options).ok()) {
    return absl::InternalError(absl::StrCat("stored report ", id, " cannot be decoded"));
  }
  report.set_report_id(id);
  return report;
}

}  // namespace perfgate::coordinator
