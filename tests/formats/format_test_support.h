// What the result-file tests share: reading and writing files, finding a case
// and a metric in a result set, running a real tool.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/result_file.h"
#include "tests/support/processes.h"

namespace perfgate::testing {

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline const CaseResult* FindCase(const ResultSet& set, const std::string& key) {
  for (const CaseResult& c : set.cases) {
    if (c.benchmark.Key() == key) return &c;
  }
  return nullptr;
}

inline int MetricIndex(const CaseResult& c, const std::string& name) {
  for (size_t i = 0; i < c.metrics.size(); ++i) {
    if (c.metrics[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// A fresh directory under the system's temporary directory, removed at the end.
inline TempDir Scratch() {
  auto dir = TempDir::Create("perfgate-formats-");
  EXPECT_TRUE(dir.ok()) << dir.status();
  return std::move(*dir);
}

// Runs a tool to completion; its output, with a test failure unless it exited 0.
inline std::string MustRun(const std::vector<std::string>& argv, const ProcessOptions& options = {}) {
  auto r = RunCommand(argv, options, std::chrono::minutes(3));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "";
  EXPECT_EQ(r->exit_code, 0) << argv[0] << ": " << r->output;
  return r->output;
}

}  // namespace perfgate::testing
