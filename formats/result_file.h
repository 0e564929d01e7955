// Result files in and out: perfgate's own result file, and what Google
// Benchmark, nvbench, pytest-benchmark, hyperfine, nccl-tests and Bencher's
// metric format hold, read into the domain types so that benchmarks a team
// already has can be stored, compared and gated; and Bencher's format written.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"

namespace perfgate {

/// A set of case results read from a file, with what the file says about where it ran.
struct ResultSet {
  std::string format;                          // the format's name, as ResultFormatNames() lists it
  std::map<std::string, std::string> context;  // host, cpu, date, gpu name, ... as the file gives it
  std::string sku;                             // derived when the file allows it, else ""
  std::vector<CaseResult> cases;               // every sample of every case, in file order
  // What the reader passed over or approximated (complexity rows skipped,
  // an aggregate or a summary used in place of samples), one sentence each.
  std::vector<std::string> notes;
};

/// Value of ResultSet::format for the two formats code outside formats/
/// tells apart; every format's name is in its file (formats/format_registry.h).
inline constexpr char kFormatPerfgate[] = "perfgate";
inline constexpr char kFormatGoogleBenchmark[] = "google-benchmark";

/// Context keys of a perfgate result file that describe the run rather than
/// the machine start with this prefix ("run.branch", "run.commit", ...).
inline constexpr char kRunContextPrefix[] = "run.";

/// The names of the formats read ("perfgate", "google-benchmark", ...), in
/// the order detection tries them: what --format takes.
std::vector<std::string> ResultFormatNames();

/// OK for "" (detect the format) and for a name ResultFormatNames() lists;
/// else INVALID_ARGUMENT naming the value and listing the names.
absl::Status CheckResultFormat(const std::string& format);

/// Reads a file and parses it with ParseResultText; the error of an unreadable
/// file names it and the reason.
absl::StatusOr<ResultSet> ReadResultFile(const std::string& path, const std::string& format = "");

/// Detects the format from the content (not the name) and parses it: JSON of
/// any format above, or nccl-tests' text output. `name` is the file's path: it
/// starts every error message ("gbench.json: benchmarks[3].real_time: not a
/// number", "ar.txt: line 31: ...") and locates nvbench's sample-time files
/// beside it. INVALID_ARGUMENT for anything the file gets wrong, and for a
/// file of no known format (the message lists each and how it is produced).
/// A `format` named (CheckResultFormat) skips the detection: that format's
/// reader reads the text, and says what it finds wrong.
absl::StatusOr<ResultSet> ParseResultText(const std::string& text, const std::string& name,
                                          const std::string& format = "");

/// perfgate's own result file: JSON with format "perfgate-results", version 1,
/// the run meta and every case with its metrics and samples (throttle marks
/// included). ParseResultText reads back exactly what this wrote.
std::string WriteResultJson(const RunMeta& meta, const std::vector<CaseResult>& cases);

/// Writes WriteResultJson's text to path atomically (a temporary file beside
/// it, then a rename), so a reader never sees half a file.
absl::Status WriteResultFile(const std::string& path, const RunMeta& meta,
                             const std::vector<CaseResult>& cases);

/// Bencher Metric Format (BMF) JSON of the cases of `sets`: one entry per
/// case key, one measure per metric, the median of its unthrottled samples
/// (pooled over the sets) as value and their min and max as bounds. Cases
/// without samples are left out.
std::string WriteBencherJson(const std::vector<ResultSet>& sets);

/// A time as perfgate's files write it: UTC to the second, "2026-01-31T12:00:00Z".
std::string FormatUtcTime(TimePoint t);
/// Parses FormatUtcTime's form; INVALID_ARGUMENT quoting the text otherwise.
absl::StatusOr<TimePoint> ParseUtcTime(const std::string& text);

}  // namespace perfgate
