#include "tests/support/gate_reports.h"

#include "tests/support/processes.h"
#include "wire/gate_convert.h"

namespace perfgate::testing {

absl::StatusOr<gate::GateReport> ReadGateReport(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  return wire::GateReportFromJson(*text, path);
}

}  // namespace perfgate::testing
