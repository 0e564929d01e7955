#include "formats/calibration_file.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/identity.h"
#include "common/status_macros.h"
#include "formats/result_file.h"

namespace perfgate {
namespace {

using nlohmann::json;
// The writer keeps keys in a reading order.
using ojson = nlohmann::ordered_json;

absl::Status Bad(const std::string& field, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

std::string Member(const std::string& path, const std::string& key) {
  return path.empty() ? key : absl::StrCat(path, ".", key);
}

// A required member of an object, of the type `is` accepts.
absl::StatusOr<const json*> Get(const json& obj, const std::string& path, const std::string& key,
                                bool (json::*is)() const noexcept, const char* expected) {
  auto it = obj.find(key);
  if (it == obj.end()) return Bad(Member(path, key), "missing");
  if (!((*it).*is)()) return Bad(Member(path, key), absl::StrCat("must be ", expected));
  return &*it;
}

absl::StatusOr<std::string> GetString(const json& obj, const std::string& path, const std::string& key) {
  auto v = Get(obj, path, key, &json::is_string, "a string");
  PERFGATE_RETURN_IF_ERROR(v);
  return (*v)->get<std::string>();
}

absl::StatusOr<CalibrationEntry> ParseEntry(const json& e, const std::string& path) {
  if (!e.is_object()) return Bad(path, "must be an object");
  CalibrationEntry out;
  for (auto [key, target] : {std::pair{"benchmark", &out.benchmark}, std::pair{"metric", &out.metric},
                             std::pair{"unit", &out.unit}}) {
    auto text = GetString(e, path, key);
    PERFGATE_RETURN_IF_ERROR(text);
    *target = *std::move(text);
  }
  auto direction = GetString(e, path, "direction");
  PERFGATE_RETURN_IF_ERROR(direction);
  if (!ParseDirection(*direction, &out.direction)) {
    return Bad(Member(path, "direction"), absl::StrCat("'", *direction,
                                                       "' is neither higher_is_better nor lower_is_better"));
  }
  // JSON has no NaN: a spread written as null was not a number.
  auto spread = Get(e, path, "spread", &json::is_number, "a number");
  PERFGATE_RETURN_IF_ERROR(spread);
  out.spread = (*spread)->get<double>();
  auto processes = Get(e, path, "processes", &json::is_number_unsigned, "a whole number");
  PERFGATE_RETURN_IF_ERROR(processes);
  const uint64_t n = (*processes)->get<uint64_t>();
  if (n > 1000000) return Bad(Member(path, "processes"), absl::StrCat(n, " is out of range"));
  out.processes = static_cast<unsigned>(n);
  PERFGATE_RETURN_IF_ERROR(ValidateCalibrationEntry(out, path));
  return out;
}

absl::StatusOr<CalibrationSet> Parse(const json& root) {
  if (!root.is_object()) return Bad("(top level)", "must be an object");
  auto format = GetString(root, "", "format");
  PERFGATE_RETURN_IF_ERROR(format);
  if (*format != kCalibrationFormat) {
    return Bad("format", absl::StrCat("'", *format, "' is not ", kCalibrationFormat,
                                      "; is this a calibration file?"));
  }
  auto version = Get(root, "", "version", &json::is_number_integer, "a whole number");
  PERFGATE_RETURN_IF_ERROR(version);
  if ((*version)->get<int64_t>() != kCalibrationVersion) {
    return Bad("version", absl::StrCat((*version)->dump(), " is not a version this perfgate reads (",
                                       kCalibrationVersion, ")"));
  }
  CalibrationSet set;
  auto sku = GetString(root, "", "sku");
  PERFGATE_RETURN_IF_ERROR(sku);
  if (sku->empty()) return Bad("sku", "must not be empty");
  set.environment.sku = *sku;
  auto node = GetString(root, "", "node");
  PERFGATE_RETURN_IF_ERROR(node);
  if (node->empty()) return Bad("node", "must not be empty");
  set.node = *node;
  auto fields = Get(root, "", "environment", &json::is_object, "an object of field names to values");
  PERFGATE_RETURN_IF_ERROR(fields);
  for (const auto& [k, v] : (*fields)->items()) {
    if (!v.is_string()) return Bad(Member("environment", k), "must be a string");
    set.environment.fields[k] = v.get<std::string>();
  }
  auto hash = GetString(root, "", "environment_hash");
  PERFGATE_RETURN_IF_ERROR(hash);
  if (*hash != set.environment.Hash()) {
    return Bad("environment_hash", "does not match the sku and environment fields of the file; "
                                   "calibrate again rather than editing a calibration");
  }
  auto at = GetString(root, "", "measured_at");
  PERFGATE_RETURN_IF_ERROR(at);
  auto measured = ParseUtcTime(*at);
  if (!measured.ok()) return Bad("measured_at", std::string(measured.status().message()));
  set.measured_at = *measured;
  auto entries = Get(root, "", "entries", &json::is_array, "a list");
  PERFGATE_RETURN_IF_ERROR(entries);
  for (size_t i = 0; i < (*entries)->size(); ++i) {
    auto entry = ParseEntry((**entries)[i], absl::StrCat("entries[", i, "]"));
    PERFGATE_RETURN_IF_ERROR(entry);
    set.entries.push_back(*std::move(entry));
  }
  return set;
}

}  // namespace

std::string WriteCalibrationJson(const CalibrationSet& set) {
  ojson entries = ojson::array();
  for (const CalibrationEntry& e : set.entries) {
    entries.push_back({{"benchmark", e.benchmark},
                       {"metric", e.metric},
                       {"unit", e.unit},
                       {"direction", ToString(e.direction)},
                       {"spread", e.spread},
                       {"processes", e.processes}});
  }
  ojson root = {{"format", kCalibrationFormat},
                {"version", kCalibrationVersion},
                {"sku", set.environment.sku},
                {"node", set.node},
                {"environment_hash", set.environment.Hash()},
                {"environment", set.environment.fields},
                {"measured_at", FormatUtcTime(set.measured_at)},
                {"entries", entries}};
  return root.dump(1) + "\n";
}

absl::StatusOr<CalibrationSet> ParseCalibrationJson(const std::string& text, const std::string& name) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not JSON: ", e.what()));
  }
  auto set = Parse(root);
  if (!set.ok()) return absl::InvalidArgumentError(absl::StrCat(name, ": ", set.status().message()));
  return set;
}

absl::StatusOr<CalibrationSet> ReadCalibrationFile(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("cannot read calibration file '", path, "'"));
  return ParseCalibrationJson(*text, path);
}

absl::Status WriteCalibrationFile(const std::string& path, const CalibrationSet& set) {
  return WriteFileAtomically(path, WriteCalibrationJson(set));
}

}  // namespace perfgate
