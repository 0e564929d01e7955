#include "measure/counts.h"

#include <valgrind/callgrind.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_io.h"
#include "measure/ncu.h"
#include "measure/perf_counters.h"

namespace perfgate {

int64_t CallgrindTotals::Event(const std::string& event) const {
  for (size_t i = 0; i < events.size() && i < totals.size(); ++i) {
    if (events[i] == event) return static_cast<int64_t>(totals[i]);
  }
  return -1;
}

absl::StatusOr<CallgrindTotals> ParseCallgrindOutput(const std::string& text, const std::string& name) {
  CallgrindTotals out;
  bool have_events = false;
  std::string totals_line, summary_line;
  int totals_at = 0, summary_at = 0, line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (absl::ConsumePrefix(&line, "events:")) {
      out.events = absl::StrSplit(line, ' ', absl::SkipWhitespace());
      have_events = true;
    } else if (absl::ConsumePrefix(&line, "totals:")) {
      totals_line = std::string(line);
      totals_at = line_no;
    } else if (absl::ConsumePrefix(&line, "summary:")) {
      summary_line = std::string(line);
      summary_at = line_no;
    }
  }
  if (!have_events || out.events.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": no 'events:' line; is this a callgrind output file (valgrind --tool=callgrind)?"));
  }
  const bool from_totals = totals_at > 0;
  if (!from_totals && summary_at == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": no 'totals:' or 'summary:' line; callgrind writes one when the program ends, so the "
                           "program was killed or the file was cut short"));
  }
  const int at = from_totals ? totals_at : summary_at;
  for (absl::string_view word : absl::StrSplit(from_totals ? totals_line : summary_line, ' ', absl::SkipWhitespace())) {
    uint64_t v = 0;
    if (!absl::SimpleAtoi(word, &v)) {
      return absl::InvalidArgumentError(absl::StrCat(name, ":", at, ": '", word, "' is not a count"));
    }
    out.totals.push_back(v);
  }
  if (out.totals.size() > out.events.size()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ":", at, ": ", out.totals.size(), " totals for ",
                                                   out.events.size(), " events"));
  }
  // Callgrind leaves out trailing zero totals.
  out.totals.resize(out.events.size(), 0);
  return out;
}

absl::StatusOr<CallgrindTotals> ReadCallgrindOutput(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("cannot read callgrind's output file '", path, "'"));
  return ParseCallgrindOutput(*text, path);
}

absl::StatusOr<std::vector<std::pair<MetricSpec, double>>> CountsPerIteration(const CallgrindTotals& totals,
                                                                              double iterations) {
  if (!(iterations > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot count per iteration over ", iterations, " iterations"));
  }
  const int64_t ir = totals.Event("Ir");
  if (ir < 0) return absl::InvalidArgumentError("callgrind's output has no Ir (instructions) event");
  std::vector<std::pair<MetricSpec, double>> out;
  out.push_back({{kInstructionsMetric, "instr/iter", Direction::kLowerIsBetter}, static_cast<double>(ir) / iterations});
  // A simulated metric is there only where every event it sums was counted.
  const struct {
    const char* metric;
    const char* unit;
    std::vector<std::string> events;
  } kSimulated[] = {
      {kSimL1MissesMetric, "misses/iter", {"I1mr", "D1mr", "D1mw"}},
      {kSimLlMissesMetric, "misses/iter", {"ILmr", "DLmr", "DLmw"}},
      {kSimBranchMissesMetric, "mispredicts/iter", {"Bcm", "Bim"}},
  };
  for (const auto& s : kSimulated) {
    double sum = 0;
    bool all = true;
    for (const std::string& e : s.events) {
      const int64_t v = totals.Event(e);
      all = all && v >= 0;
      sum += static_cast<double>(v);
    }
    if (all) out.push_back({{s.metric, s.unit, Direction::kLowerIsBetter}, sum / iterations});
  }
  return out;
}

// The client requests are a few instructions that do nothing outside
// Valgrind, so the timed loop can carry them always.
// The hardware counters, where enabled, count the least of the rest.
void StartCounting() {
  CALLGRIND_TOGGLE_COLLECT;
  StartGpuCountingRange();
  EnableCountingCounters();
}
void StopCounting() {
  DisableCountingCounters();
  StopGpuCountingRange();
  CALLGRIND_TOGGLE_COLLECT;
}

}  // namespace perfgate
