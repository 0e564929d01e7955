// A gate report's --json file (perfgate gate, perfgate compare,
// perfgate-agent ab), read as the commands' users read it: the schema's
// v1::GateReport through wire/gate_convert.h, into the domain's types, so a
// test compares verdicts as enums, never as the JSON's names.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "gate/report.h"

namespace perfgate::testing {

/// The report in the file at `path`; an error names the file and what in it is wrong.
absl::StatusOr<gate::GateReport> ReadGateReport(const std::string& path);

}  // namespace perfgate::testing
