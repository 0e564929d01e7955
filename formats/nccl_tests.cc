// nccl-tests' text output (the stdout of all_reduce_perf and its siblings;
// src/common.cu and src/util.cu): one case per row and side (out-of-place,
// in-place) with time, algbw and busbw; one file is one process, so each case
// has one sample (nccl-tests averages its iterations itself).
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "formats/format_registry.h"
#include "formats/json_fields.h"

namespace perfgate::formats {
namespace {

std::vector<std::string> Words(const std::string& line) {
  return absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
}

bool IsTimeColumn(const std::string& w) { return w == "time" || w == "cputime"; }

// The column header: "# size count type redop root time algbw busbw #wrong
// time algbw busbw #wrong" (older releases: "bytes N type op ... res").
struct Columns {
  std::vector<std::string> keys;    // size, count, type, redop, root (as the file names them)
  std::vector<std::string> metric;  // one side's columns: time, algbw, busbw, #wrong, [i_min ...]
  size_t sides = 0;                 // 2: out-of-place and in-place; 1: out-of-place only
  bool timestamp = false;
  double time_to_us = 1;  // (us), or (ms) in the oldest releases
};

std::optional<Columns> ReadHeader(const std::vector<std::string>& w) {
  Columns c;
  size_t i = 1;  // after "#"
  for (; i < w.size() && !IsTimeColumn(w[i]); ++i) c.keys.push_back(w[i]);
  if (i == w.size() || c.keys.empty()) return std::nullopt;
  std::vector<std::string> rest(w.begin() + static_cast<long>(i), w.end());
  if (!rest.empty() && rest.back() == "timestamp") {
    c.timestamp = true;
    rest.pop_back();
  }
  size_t times = 0;
  for (const std::string& r : rest) times += IsTimeColumn(r) ? 1 : 0;
  if (times == 0 || rest.size() % times != 0) return std::nullopt;
  c.sides = times;
  c.metric.assign(rest.begin(), rest.begin() + static_cast<long>(rest.size() / times));
  bool algbw = false, busbw = false;
  for (const std::string& m : c.metric) {
    algbw = algbw || m == "algbw";
    busbw = busbw || m == "busbw";
  }
  if (!algbw || !busbw) return std::nullopt;
  // The oldest releases wrote "res" (a maximum deviation) and times in ms.
  for (const std::string& m : c.metric) c.time_to_us = m == "res" ? 1e3 : c.time_to_us;
  return c;
}

size_t Find(const std::vector<std::string>& v, std::initializer_list<const char*> names) {
  for (size_t i = 0; i < v.size(); ++i) {
    for (const char* n : names) {
      if (v[i] == n) return i;
    }
  }
  return v.size();
}

double Value(const std::string& word, const std::string& path, const char* what) {
  double d = 0;
  if (!absl::SimpleAtod(word, &d) || !std::isfinite(d) || d < 0) {
    Throw(path, absl::StrCat(what, " '", word, "' is not a non-negative number"));
  }
  return d;
}

// "# Collective test starting: all_reduce_perf" (nccl-tests 2.15 on).
std::string CollectiveOf(const std::string& program) {
  std::string name = program.substr(program.rfind('/') == std::string::npos ? 0 : program.rfind('/') + 1);
  for (const char* suffix : {"_mpi", "_perf"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) name.erase(name.size() - s.size());
  }
  return NameToken(name);
}

struct Parser {
  ResultSet set;
  std::optional<Columns> columns;
  std::string collective;
  std::map<std::string, size_t> case_of_key;
  size_t unchecked = 0;
  std::map<std::string, std::string> devices;  // rank -> device name

  void HeaderLine(const std::string& line, const std::vector<std::string>& w);
  void Row(const std::vector<std::string>& w, const std::string& path);
  void AddSide(const BenchmarkId& id, const std::vector<std::string>& values, const std::string& path);
  void Finish();
};

void Parser::HeaderLine(const std::string& line, const std::vector<std::string>& w) {
  const std::string body = line.substr(line.find('#') + 1);
  if (auto h = ReadHeader(w)) {
    columns = h;
    return;
  }
  if (w.size() >= 2 && w[1].front() == '(' && columns) {
    // "# (B) (elements) ... (us) (GB/s)": the time unit of this release.
    size_t time_at = columns->keys.size() + 1;
    for (size_t i = 1; i < w.size(); ++i) {
      if (w[i] == "(us)" || w[i] == "(ms)") {
        time_at = i;
        break;
      }
    }
    if (time_at < w.size()) columns->time_to_us = w[time_at] == "(ms)" ? 1e3 : 1;
    return;
  }
  const size_t colon = body.find(':');
  const std::string key = colon == std::string::npos ? "" : std::string(absl::StripAsciiWhitespace(body.substr(0, colon)));
  const std::string value = colon == std::string::npos ? "" : std::string(absl::StripAsciiWhitespace(body.substr(colon + 1)));
  if (key == "Collective test starting") {
    collective = CollectiveOf(value);
  } else if (key == "Avg bus bandwidth") {
    set.context["avg_bus_bandwidth"] = value;
  } else if (key == "Out of bounds values") {
    set.context["out_of_bounds_values"] = value;
    if (value.rfind("0", 0) != 0) set.notes.push_back(absl::StrCat("nccl-tests reported out of bounds values: ", value));
  } else if (w.size() >= 2 && (w[1] == "nThread" || (w[1] == "nccl-tests" && w.size() > 2 && w[2] == "version"))) {
    set.context[w[1] == "nThread" ? "nccl_tests.setup" : "nccl_tests.version"] =
        std::string(absl::StripAsciiWhitespace(body));
  } else if (w.size() >= 4 && w[1] == "Rank") {
    // "#  Rank  0 Group  0 Pid 1234 on host-1 device  0 [0000:19:00] NVIDIA H100 80GB HBM3"
    const size_t on = Find(w, {"on"});
    const size_t bracket = body.find(']');
    if (on + 1 < w.size()) set.context[absl::StrCat("rank.", w[2], ".host")] = w[on + 1];
    if (bracket != std::string::npos) {
      const std::string device(absl::StripAsciiWhitespace(body.substr(bracket + 1)));
      set.context[absl::StrCat("rank.", w[2], ".device")] = device;
      devices[w[2]] = device;
    }
    if (on + 1 < w.size() && !set.context.count("host_name")) set.context["host_name"] = w[on + 1];
  }
}

void Parser::AddSide(const BenchmarkId& id, const std::vector<std::string>& values, const std::string& path) {
  const Columns& c = *columns;
  auto [it, added] = case_of_key.try_emplace(id.Key(), set.cases.size());
  if (added) {
    CaseResult r;
    r.benchmark = id;
    r.metrics = {{"time", "us", Direction::kLowerIsBetter},
                 {"algbw", "GB/s", Direction::kHigherIsBetter},
                 {"busbw", "GB/s", Direction::kHigherIsBetter}};
    r.status = CaseStatus::kOk;
    set.cases.push_back(std::move(r));
  }
  CaseResult& r = set.cases[it->second];
  Sample s;
  s.index = static_cast<uint32_t>(r.samples.size());
  const size_t t = Find(c.metric, {"time", "cputime"});
  s.values = {Value(values[t], path, "time") * c.time_to_us, Value(values[Find(c.metric, {"algbw"})], path, "algbw"),
              Value(values[Find(c.metric, {"busbw"})], path, "busbw")};
  const size_t wrong = Find(c.metric, {"#wrong"});
  if (wrong < values.size()) {
    if (values[wrong] == "N/A") {
      ++unchecked;
    } else if (Value(values[wrong], path, "#wrong") != 0) {
      r.status = CaseStatus::kFailed;
      r.reason = absl::StrCat(values[wrong], " wrong elements (#wrong): the collective's result is wrong");
    }
  }
  r.samples.push_back(std::move(s));
}

void Parser::Row(const std::vector<std::string>& w, const std::string& path) {
  if (!columns) Throw(path, "a result row before the column header (# size count type ... time algbw busbw)");
  const Columns& c = *columns;
  const size_t per_side = c.metric.size();
  const size_t extra = c.timestamp ? 2 : 0;  // "2025-01-31 12:00:00"
  const size_t values = w.size() - c.keys.size();
  size_t sides = 0;
  for (size_t n = 1; n <= c.sides; ++n) {
    if (values == n * per_side || (extra != 0 && values == n * per_side + extra)) sides = n;
  }
  if (w.size() <= c.keys.size() || sides == 0) {
    Throw(path, absl::StrCat(w.size(), " fields where the column header names ", c.keys.size(), " + ", c.sides,
                             " x ", per_side));
  }
  BenchmarkId id;
  id.suite = "nccl-tests";
  id.name = collective.empty() ? "collective" : collective;
  for (size_t k = 0; k < c.keys.size(); ++k) {
    const std::string& key = c.keys[k];
    if (key == "size" || key == "bytes") {
      uint64_t bytes = 0;
      if (!absl::SimpleAtoi(w[k], &bytes)) Throw(path, absl::StrCat("size '", w[k], "' is not a byte count"));
      id.params["bytes"] = std::to_string(bytes);
    } else if (key == "type") {
      id.params["type"] = Token(w[k]);
    } else if ((key == "redop" || key == "op") && w[k] != "none") {
      id.params["redop"] = Token(w[k]);
    } else if (key == "root" && w[k] != "-1") {
      id.params["root"] = Token(w[k]);
    }
  }
  // A row with one side fewer than the header (trace replay) has in-place only.
  for (size_t side = 0; side < sides; ++side) {
    const size_t which = side + (c.sides - sides);
    BenchmarkId sid = id;
    sid.params["place"] = c.sides == 1 ? "out-of-place" : (which == 0 ? "out-of-place" : "in-place");
    const auto begin = w.begin() + static_cast<long>(c.keys.size() + side * per_side);
    AddSide(sid, std::vector<std::string>(begin, begin + static_cast<long>(per_side)), path);
  }
}

void Parser::Finish() {
  if (!columns) Throw("", "no column header (# size count type ... time algbw busbw): not nccl-tests output");
  if (set.cases.empty()) Throw("", "no result rows under the column header");
  if (collective.empty()) {
    set.notes.push_back("the output names no collective (nccl-tests before 2.15 print no \"# Collective test "
                        "starting\" line): cases are named nccl-tests/collective");
  }
  if (unchecked != 0) {
    set.notes.push_back(absl::StrCat(unchecked, " results were not checked (#wrong N/A: run with -c 1 to check)"));
  }
  std::string device;
  for (const auto& [rank, name] : devices) {
    if (device.empty()) device = name;
    if (name != device) device = "-";
  }
  if (!device.empty() && device != "-") {
    set.context["gpu_name"] = device;
    set.sku = GpuSkuFromName(device);
  }
  for (CaseResult& c : set.cases) c.noise = NoiseOfFirstMetric(c);
}

bool LooksLikeNcclTests(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::vector<std::string> w = Words(line);
    if (!w.empty() && w[0] == "#" && ReadHeader(w)) return true;
  }
  return false;
}

ResultSet ReadNcclTests(const std::string& text) {
  Parser p;
  std::istringstream lines(text);
  size_t n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    const std::vector<std::string> w = Words(line);
    if (w.empty()) continue;
    if (w[0].front() == '#') {
      if (w[0] == "#") p.HeaderLine(line, w);
      continue;
    }
    // Rows start with the size; NCCL's own log lines (NCCL_DEBUG=INFO) and
    // warnings between them do not.
    uint64_t size = 0;
    if (!absl::SimpleAtoi(w[0], &size)) continue;
    p.Row(w, absl::StrCat("line ", n));
  }
  p.Finish();
  return std::move(p.set);
}

}  // namespace

extern const Format kNcclTestsFormat{
    "nccl-tests",
    "nccl-tests output (all_reduce_perf ... > F: the \"# size count type ... time algbw busbw\" table)",
    nullptr,
    nullptr,
    LooksLikeNcclTests,
    [](const std::string& text, const std::string&) { return ReadNcclTests(text); },
};

}  // namespace perfgate::formats
