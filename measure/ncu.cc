#include "measure/ncu.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_io.h"

namespace perfgate {
namespace {

// The fields of one CSV line (RFC 4180: quoted fields, "" for a quote).
std::vector<std::string> CsvFields(absl::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

// A metric value as ncu prints it: thousands separators dropped; nullopt
// for "n/a" or anything that is not a number.
std::optional<double> NcuNumber(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  double v = 0;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(text), &v)) return std::nullopt;
  return v;
}

int ColumnOf(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

// ncu's own error, said as what it means for a counted run.
absl::Status NcuError(absl::string_view line, const std::string& name) {
  if (absl::StrContains(line, "ERR_NVGPUCTRPERM")) {
    return absl::PermissionDeniedError(absl::StrCat(
        name, ": this node does not let the user read GPU performance counters (ERR_NVGPUCTRPERM): run as root, "
              "or load the driver with NVreg_RestrictProfilingToAdminUsers=0; a sandbox that hides the counters "
              "(gVisor) cannot count at all"));
  }
  return absl::FailedPreconditionError(absl::StrCat(name, ": ncu: ", absl::StripAsciiWhitespace(line)));
}

struct Layout {
  std::vector<std::string> header;
  int kernel = -1, id = -1, metric_name = -1, metric_value = -1;
  bool details() const { return metric_name >= 0 && metric_value >= 0; }
};

// Adds one data row to `launches` (`by_id` maps a launch ID to its index).
void AddRow(const Layout& layout, const std::vector<std::string>& row, std::vector<NcuLaunch>* launches,
            std::map<std::string, size_t>* by_id) {
  if (row.size() < layout.header.size()) return;
  const std::string id = layout.id >= 0 ? row[layout.id] : absl::StrCat(launches->size());
  auto [it, fresh] = by_id->emplace(id, launches->size());
  if (fresh) launches->push_back({row[layout.kernel], {}});
  NcuLaunch& launch = (*launches)[it->second];
  if (layout.details()) {
    if (auto v = NcuNumber(row[layout.metric_value])) launch.values[row[layout.metric_name]] = *v;
    return;
  }
  for (size_t c = 0; c < layout.header.size(); ++c) {
    // Metric columns are named as ncu's metrics are, with a double underscore.
    if (!absl::StrContains(layout.header[c], "__")) continue;
    if (auto v = NcuNumber(row[c])) launch.values[layout.header[c]] = *v;
  }
}

}  // namespace

absl::StatusOr<std::vector<NcuLaunch>> ParseNcuCsv(const std::string& text, const std::string& name) {
  std::optional<Layout> layout;
  std::vector<NcuLaunch> launches;
  std::map<std::string, size_t> by_id;
  bool none_profiled = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "==ERROR==")) return NcuError(line, name);
    none_profiled = none_profiled || absl::StrContains(line, "No kernels were profiled");
    if (!layout) {
      if (!absl::StartsWith(line, "\"")) continue;  // the program's output, ==PROF== and ==WARNING== lines
      Layout l;
      l.header = CsvFields(line);
      l.kernel = ColumnOf(l.header, "Kernel Name");
      if (l.kernel < 0) continue;
      l.id = ColumnOf(l.header, "ID");
      l.metric_name = ColumnOf(l.header, "Metric Name");
      l.metric_value = ColumnOf(l.header, "Metric Value");
      layout = std::move(l);
      continue;
    }
    if (!absl::StartsWith(line, "\"")) continue;
    const std::vector<std::string> row = CsvFields(line);
    // The raw page's second row gives the units, with the launch's columns empty.
    if (row.size() > static_cast<size_t>(layout->kernel) && row[layout->kernel].empty()) continue;
    AddRow(*layout, row, &launches, &by_id);
  }
  if (!layout && none_profiled) return launches;
  if (!layout) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": no CSV header with a \"Kernel Name\" column; is this the output of ncu --csv (--log-file)?"));
  }
  return launches;
}

absl::StatusOr<std::vector<std::pair<MetricSpec, double>>> GpuCountsPerIteration(
    const std::vector<NcuLaunch>& launches, double iterations) {
  if (!(iterations > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot count per iteration over ", iterations, " iterations"));
  }
  if (launches.empty()) {
    return absl::FailedPreconditionError(
        "ncu profiled no kernel in the counted samples: the case launches none there (a copy through "
        "cudaMemcpy is no kernel to ncu), so it has no GPU counts");
  }
  auto all_have = [&](const char* metric) {
    return std::all_of(launches.begin(), launches.end(),
                       [&](const NcuLaunch& l) { return l.values.count(metric) != 0; });
  };
  if (!all_have(kNcuInstructions)) {
    return absl::InvalidArgumentError(absl::StrCat("ncu gave no ", kNcuInstructions, " for some kernel launch"));
  }
  double instructions = 0, bytes = 0, occupancy = 0;
  for (const NcuLaunch& l : launches) {
    const double inst = l.values.at(kNcuInstructions);
    instructions += inst;
    if (auto b = l.values.find(kNcuDramBytes); b != l.values.end()) bytes += b->second;
    if (auto o = l.values.find(kNcuOccupancy); o != l.values.end()) occupancy += o->second * inst;
  }
  std::vector<std::pair<MetricSpec, double>> out;
  out.push_back({{kGpuInstructionsMetric, "warp instr/iter", Direction::kLowerIsBetter}, instructions / iterations});
  if (all_have(kNcuDramBytes)) {
    out.push_back({{kGpuDramBytesMetric, "bytes/iter", Direction::kLowerIsBetter}, bytes / iterations});
  }
  if (all_have(kNcuOccupancy) && instructions > 0) {
    out.push_back({{kGpuOccupancyMetric, "%", Direction::kHigherIsBetter}, occupancy / instructions});
  }
  return out;
}

std::vector<std::string> NcuArgv(const std::string& ncu, const std::string& log_file) {
  return {ncu,
          "--profile-from-start", "off",
          "--metrics", absl::StrJoin({kNcuInstructions, kNcuDramBytes, kNcuOccupancy}, ","),
          "--clock-control", "none",
          "--target-processes", "all",
          "--csv", "--page", "raw", "--print-units", "base",
          "--log-file", log_file};
}

namespace {

using ProfilerCall = int (*)();
std::atomic<ProfilerCall> g_profiler_start{nullptr};
std::atomic<ProfilerCall> g_profiler_stop{nullptr};

}  // namespace

bool EnableGpuCountingRange() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return false;
  auto start = reinterpret_cast<ProfilerCall>(dlsym(driver, "cuProfilerStart"));
  auto stop = reinterpret_cast<ProfilerCall>(dlsym(driver, "cuProfilerStop"));
  if (start == nullptr || stop == nullptr) return false;
  g_profiler_start = start;
  g_profiler_stop = stop;
  return true;
}

void StartGpuCountingRange() {
  if (ProfilerCall f = g_profiler_start.load(std::memory_order_relaxed)) f();
}

void StopGpuCountingRange() {
  if (ProfilerCall f = g_profiler_stop.load(std::memory_order_relaxed)) f();
}

std::string GpuCountersAccess(const std::string& params_path) {
  auto text = ReadWholeFile(params_path);
  if (!text.ok()) return "no NVIDIA driver";
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (!absl::ConsumePrefix(&line, "RmProfilingAdminOnly:")) continue;
    return absl::StripAsciiWhitespace(line) == "1" ? "admin only (RmProfilingAdminOnly: 1)" : "allowed";
  }
  return "unknown (the driver's parameters do not say RmProfilingAdminOnly)";
}

}  // namespace perfgate
