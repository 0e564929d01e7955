// `perfgate export --format bmf FILE... [--output F]`: any readable result
// file written as Bencher Metric Format JSON, so that perfgate's data moves to
// Bencher (and back: ingest and compare read BMF).
#include <algorithm>
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/file_io.h"
#include "formats/case_evidence.h"
#include "formats/result_file.h"

namespace perfgate::cli {

int ExportCommand(const Config& config) {
  // Every file is read before anything is written: a bad file leaves no output.
  std::vector<ResultSet> sets;
  for (const std::string& path : config.export_files) {
    auto set = ReadResultFile(path, config.export_input_format);
    if (!set.ok()) {
      std::cerr << "perfgate: export: " << set.status().message() << "\n";
      return kExitError;
    }
    for (const std::string& note : set->notes) std::cerr << "note: " << path << ": " << note << "\n";
    if (std::none_of(set->cases.begin(), set->cases.end(), [](const CaseResult& c) { return !c.samples.empty(); })) {
      std::cerr << "perfgate: export: " << path << ": nothing to export: " << WithoutSamples(*set) << "\n";
      return kExitError;
    }
    for (const CaseResult& c : set->cases) {
      if (c.samples.empty()) {
        std::cerr << "note: " << path << ": " << c.benchmark.Key() << " has no samples (" << ToString(c.status)
                  << (c.reason.empty() ? "" : ": " + c.reason) << "): left out\n";
      }
    }
    sets.push_back(std::move(*set));
  }
  const std::string text = WriteBencherJson(sets);
  if (config.export_output.empty()) {
    std::cout << text;
    return std::cout ? 0 : kExitError;
  }
  if (absl::Status s = WriteFileAtomically(config.export_output, text); !s.ok()) {
    std::cerr << "perfgate: export: " << s.message() << "\n";
    return kExitError;
  }
  return 0;
}

}  // namespace perfgate::cli
