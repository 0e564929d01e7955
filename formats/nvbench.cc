// nvbench's JSON (--json; nvbench/json_printer.cu): one case per state,
// one sample per cold sample time when the sample-time file is beside the
// JSON, else nvbench's means as one sample.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "common/identity.h"
#include "formats/format_registry.h"
#include "formats/json_fields.h"

namespace perfgate::formats {
namespace {

constexpr char kColdMean[] = "nv/cold/time/gpu/mean";
constexpr char kBatchMean[] = "nv/batch/time/gpu/mean";
constexpr char kColdBandwidth[] = "nv/cold/bw/global/bytes_per_second";
constexpr char kColdSampleFile[] = "nv/json/bin:nv/cold/sample_times";

// data[] of a summary (or axis_values[]) as name -> the entry.
std::map<std::string, const json*> NamedValues(const json& list, const std::string& path) {
  std::map<std::string, const json*> out;
  Array(list, path);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = Index(path, i);
    out[String(Field(list[i], p, "name"), Member(p, "name"))] = &Field(list[i], p, "value");
  }
  return out;
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool Readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

// nvbench names the file "<json as given on its command line>-bin/N.bin",
// relative to where it ran; beside the JSON it is "<json>-bin/N.bin".
std::string FindSampleFile(const std::string& json_path, const std::string& filename) {
  std::vector<std::string> candidates;
  if (!filename.empty() && filename[0] == '/') candidates.push_back(filename);
  candidates.push_back(absl::StrCat(json_path, "-bin/", Basename(filename)));
  candidates.push_back(absl::StrCat(Dirname(json_path), "/", filename));
  for (const std::string& c : candidates) {
    if (Readable(c)) return c;
  }
  return "";
}

// Sample times in seconds: little-endian float32, as json_printer writes them.
std::vector<double> ReadSampleTimes(const std::string& file, const std::string& path, int64_t expected) {
  auto read = ReadWholeFile(file);
  if (!read.ok()) Throw(path, absl::StrCat("cannot read ", file));
  const std::string& bytes = *read;
  if (bytes.size() % 4 != 0) Throw(path, absl::StrCat(file, " is ", bytes.size(), " bytes, not a whole number of float32"));
  const size_t n = bytes.size() / 4;
  if (expected >= 0 && static_cast<size_t>(expected) != n) {
    Throw(path, absl::StrCat(file, " holds ", n, " samples where the JSON says ", expected));
  }
  std::vector<double> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + 4 * i);
    const uint32_t word = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
    float f;
    std::memcpy(&f, &word, 4);
    if (!std::isfinite(f) || f <= 0) Throw(path, absl::StrCat(file, ": sample ", i, " is ", f, ", not a positive time"));
    out.push_back(f);
  }
  return out;
}

struct NvbenchDevice {
  std::string name;
  uint64_t memory = 0;
};

std::map<int64_t, NvbenchDevice> ReadDevices(const json& root, ResultSet* set) {
  std::map<int64_t, NvbenchDevice> devices;
  const json* list = OptionalField(root, "", "devices");
  if (list == nullptr) return devices;
  Array(*list, "devices");
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string path = Index("devices", i);
    const json& d = (*list)[i];
    const json& id = Field(d, path, "id");
    if (!id.is_number_integer()) Throw(Member(path, "id"), "not an integer");
    NvbenchDevice& dev = devices[id.get<int64_t>()];
    dev.name = String(Field(d, path, "name"), Member(path, "name"));
    dev.memory = static_cast<uint64_t>(
        NumberOrNumericString(Field(d, path, "global_memory_size"), Member(path, "global_memory_size")));
    for (const auto& [k, v] : d.items()) {
      if (k != "id") set->context[absl::StrCat("device.", id.get<int64_t>(), ".", k)] = Text(v);
    }
  }
  return devices;
}

void ReadMeta(const json& root, ResultSet* set) {
  const json* meta = OptionalField(root, "", "meta");
  if (meta == nullptr || !meta->is_object()) return;
  if (auto v = meta->find("version"); v != meta->end() && v->is_object() && v->contains("nvbench")) {
    const json& nv = (*v)["nvbench"];
    if (nv.is_object() && nv.contains("string")) set->context["nvbench_version"] = Text(nv["string"]);
  }
  if (auto argv = meta->find("argv"); argv != meta->end() && argv->is_array()) {
    std::vector<std::string> args;
    for (const json& a : *argv) args.push_back(Text(a));
    set->context["argv"] = absl::StrJoin(args, " ");
  }
}

// The devices the states were measured on.
std::set<int64_t> UsedDevices(const json& benchmarks) {
  std::set<int64_t> used;
  for (const json& b : benchmarks) {
    if (!b.is_object() || !b.contains("states") || !b["states"].is_array()) continue;
    for (const json& st : b["states"]) {
      if (st.is_object() && st.contains("device") && st["device"].is_number_integer()) {
        used.insert(st["device"].get<int64_t>());
      }
    }
  }
  return used;
}

// A state's summaries: tag -> (data[] by name, path of the summary).
using Summaries = std::map<std::string, std::pair<std::map<std::string, const json*>, std::string>>;

Summaries ReadSummaries(const json& st, const std::string& path) {
  Summaries summaries;
  const json& list = Array(Field(st, path, "summaries"), Member(path, "summaries"));
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string spath = Index(Member(path, "summaries"), k);
    const std::string tag = String(Field(list[k], spath, "tag"), Member(spath, "tag"));
    std::map<std::string, const json*> data;
    if (const json* d = OptionalField(list[k], spath, "data")) data = NamedValues(*d, Member(spath, "data"));
    summaries[tag] = {std::move(data), spath};
  }
  return summaries;
}

// The summary's positive value, or nothing when the state has no such summary.
std::optional<double> SummaryValue(const Summaries& summaries, const char* tag) {
  auto it = summaries.find(tag);
  if (it == summaries.end()) return std::nullopt;
  const auto& [data, spath] = it->second;
  auto v = data.find("value");
  if (v == data.end()) Throw(Member(spath, "data"), absl::StrCat("no 'value' in summary ", tag));
  return PositiveFinite(NumberOrNumericString(*v->second, absl::StrCat(spath, ".data.value")),
                        absl::StrCat(spath, ".data.value"), "value");
}

// The cold sample times of a state, when its sample-time file is found;
// otherwise empty, with `missing_file` set when the JSON names one.
std::vector<double> ColdSampleTimes(const Summaries& summaries, const std::string& json_path,
                                    std::string* missing_file) {
  auto it = summaries.find(kColdSampleFile);
  if (it == summaries.end()) return {};
  const auto& [data, spath] = it->second;
  auto f = data.find("filename");
  if (f == data.end()) Throw(Member(spath, "data"), "no 'filename' of the sample-time file");
  const std::string filename = String(*f->second, absl::StrCat(spath, ".data.filename"));
  int64_t expected = -1;
  if (auto size = data.find("size"); size != data.end()) {
    expected = static_cast<int64_t>(NumberOrNumericString(*size->second, absl::StrCat(spath, ".data.size")));
  }
  const std::string file = FindSampleFile(json_path, filename);
  if (file.empty()) {
    *missing_file = filename;
    return {};
  }
  return ReadSampleTimes(file, absl::StrCat(spath, ".data.filename"), expected);
}

// The samples of a measured state: one per cold sample time, or one of
// nvbench's means when only the summary is there.
void AddSamples(const Summaries& summaries, const std::string& path, const std::string& json_path, CaseResult* r) {
  const std::optional<double> mean = SummaryValue(summaries, kColdMean);
  if (!mean) {
    Throw(Member(path, "summaries"), absl::StrCat("no ", kColdMean, " summary: the state was not measured with the cold timer"));
  }
  const std::optional<double> bandwidth = SummaryValue(summaries, kColdBandwidth);
  const std::optional<double> batch = SummaryValue(summaries, kBatchMean);
  if (bandwidth) r->metrics.push_back({"global_bandwidth", "GB/s", Direction::kHigherIsBetter});
  std::string missing_file;
  const std::vector<double> times = ColdSampleTimes(summaries, json_path, &missing_file);
  if (!times.empty()) {
    // nvbench's bandwidth is bytes / mean time; the same bytes over each
    // sample's time give the bandwidth of that sample.
    const double bytes = bandwidth ? *bandwidth * *mean : 0;
    for (size_t k = 0; k < times.size(); ++k) {
      Sample s;
      s.index = static_cast<uint32_t>(k);
      s.values.push_back(times[k] * 1e3);
      if (bandwidth) s.values.push_back(bytes / times[k] / 1e9);
      r->samples.push_back(std::move(s));
    }
    return;
  }
  // Only nvbench's means: one sample, and the batch time, which exists
  // only as a mean, can go with it.
  if (batch) r->metrics.push_back({"batch_gpu_time", "ms", Direction::kLowerIsBetter});
  Sample s;
  s.values.push_back(*mean * 1e3);
  if (bandwidth) s.values.push_back(*bandwidth / 1e9);
  if (batch) s.values.push_back(*batch * 1e3);
  r->samples.push_back(std::move(s));
  r->reason = missing_file.empty()
                  ? "summary only"
                  : absl::StrCat("summary only: sample-time file ", missing_file, " not found beside ", json_path);
}

CaseResult ReadState(const json& st, const std::string& path, const std::string& name, bool device_param,
                     const std::string& json_path) {
  CaseResult r;
  r.benchmark.suite = "nvbench";
  r.benchmark.name = NameToken(name);
  if (const json* axes = OptionalField(st, path, "axis_values")) {
    for (const auto& [axis, value] : NamedValues(*axes, Member(path, "axis_values"))) {
      r.benchmark.params[NameToken(axis)] = Token(Text(*value));
    }
  }
  if (device_param) r.benchmark.params["device"] = Text(Field(st, path, "device"));
  r.metrics.push_back({"gpu_time", "ms", Direction::kLowerIsBetter});
  bool skipped = false;
  if (const json* s = OptionalField(st, path, "is_skipped")) skipped = Bool(*s, Member(path, "is_skipped"));
  if (skipped) {
    r.status = CaseStatus::kSkipped;
    if (const json* reason = OptionalField(st, path, "skip_reason")) r.reason = String(*reason, Member(path, "skip_reason"));
    return r;
  }
  AddSamples(ReadSummaries(st, path), path, json_path, &r);
  r.status = CaseStatus::kOk;
  r.noise = NoiseOfFirstMetric(r);
  return r;
}

ResultSet ReadNvbench(const json& root, const std::string& json_path) {
  ResultSet set;
  const std::map<int64_t, NvbenchDevice> devices = ReadDevices(root, &set);
  ReadMeta(root, &set);
  const json& benchmarks = ResultList(root, "benchmarks");
  // A state measured on more than one device gets the device as a parameter,
  // so that its cases stay apart.
  const std::set<int64_t> used_devices = UsedDevices(benchmarks);
  const bool device_param = used_devices.size() > 1;
  const int64_t sku_device = used_devices.empty() ? (devices.empty() ? -1 : devices.begin()->first)
                                                  : *used_devices.begin();
  if (auto d = devices.find(sku_device); d != devices.end()) {
    set.sku = GpuSkuKey(d->second.name, d->second.memory);
    set.context["gpu_name"] = d->second.name;
  }
  std::set<std::string> keys;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const std::string bpath = Index("benchmarks", i);
    const std::string name = String(Field(benchmarks[i], bpath, "name"), Member(bpath, "name"));
    const json& states = Array(Field(benchmarks[i], bpath, "states"), Member(bpath, "states"));
    for (size_t j = 0; j < states.size(); ++j) {
      const std::string path = Index(Member(bpath, "states"), j);
      CaseResult r = ReadState(states[j], path, name, device_param, json_path);
      if (!keys.insert(r.benchmark.Key()).second) Throw(path, absl::StrCat(r.benchmark.Key(), " appears twice"));
      set.cases.push_back(std::move(r));
    }
  }
  size_t summary_only = 0;
  for (const CaseResult& c : set.cases) summary_only += c.reason.rfind("summary only", 0) == 0 ? 1 : 0;
  if (summary_only != 0) {
    set.notes.push_back(absl::StrCat(summary_only, " states without per-sample times (nvbench --jsonbin writes them "
                                     "to F-bin/N.bin beside the JSON): one sample each, nvbench's means"));
  }
  return set;
}

bool LooksLikeNvbench(const json& root) {
  return root.contains("benchmarks") && (root.contains("devices") || FirstEntryHas(root, "benchmarks", "states"));
}

}  // namespace

extern const Format kNvbenchFormat{
    "nvbench",
    "nvbench JSON (--json F: \"devices\" and \"benchmarks\"[].\"states\")",
    LooksLikeNvbench,
    ReadNvbench,
    nullptr,
    nullptr,
};

}  // namespace perfgate::formats
