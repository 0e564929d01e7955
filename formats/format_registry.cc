// The table of result formats: one line per format, each defined in its own
// file of this folder.
#include "formats/format_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace perfgate::formats {

extern const Format kPerfgateFormat, kPytestBenchmarkFormat, kNvbenchFormat, kGoogleBenchmarkFormat,
    kHyperfineFormat, kBencherFormat, kNcclTestsFormat;

const std::vector<const Format*>& Formats() {
  static const std::vector<const Format*> formats = {
      &kPerfgateFormat,         // perfgate_results.cc
      &kPytestBenchmarkFormat,  // pytest_benchmark.cc
      &kNvbenchFormat,          // nvbench.cc
      &kGoogleBenchmarkFormat,  // google_benchmark.cc
      &kHyperfineFormat,        // hyperfine.cc
      &kBencherFormat,          // bencher.cc
      &kNcclTestsFormat,        // nccl_tests.cc
  };
  return formats;
}

const Format* FindFormat(std::string_view name) {
  for (const Format* f : Formats()) {
    if (name == f->name) return f;
  }
  return nullptr;
}

std::string AcceptedFormats() {
  return absl::StrCat("expected one of: ", absl::StrJoin(Formats(), "; ", [](std::string* out, const Format* f) {
                        absl::StrAppend(out, f->name, ": ", f->description);
                      }));
}

}  // namespace perfgate::formats
