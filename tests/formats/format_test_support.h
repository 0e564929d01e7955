// What the result-file tests share: reading and writing files, finding a case
// and a metric in a result set, running a real tool (pytest-benchmark,
// hyperfine), printing nccl-tests output.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
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

/// A file of tests/data/formats.
inline std::string Fixture(const std::string& name) { return std::string(PERFGATE_FORMATS_DIR) + "/" + name; }

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

inline constexpr char kPytestTests[] = R"(import pytest

def work(n):
    return sum(range(n))

@pytest.mark.parametrize("n", [100, 1000])
def test_sum(benchmark, n):
    assert benchmark(work, n) == n * (n - 1) // 2

def test_plain(benchmark):
    benchmark(work, 10)
)";

// Runs pytest-benchmark (of `python`) on kPytestTests in `dir`; the JSON file it wrote.
inline std::string RunPytest(const TempDir& dir, const std::string& python) {
  WriteText(dir.Join("test_tiny.py"), kPytestTests);
  const std::string out = dir.Join("bench.json");
  MustRun({python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tiny.py",
           "--benchmark-json=" + out, "--benchmark-min-rounds=5", "--benchmark-max-time=0.01"},
          {.env = {}, .working_dir = dir.path(), .user = ""});
  return out;
}

// Runs hyperfine on `true` and `seq {n}` for n = 1, 2, five runs each; the JSON it wrote.
inline std::string RunHyperfine(const TempDir& dir) {
  const std::string out = dir.Join("hyperfine.json");
  MustRun({"hyperfine", "--runs", "5", "--style", "none", "--export-json", out, "-N", "true",
           "--parameter-list", "n", "1,2", "seq {n}"});
  return out;
}

// nccl-tests output, built from rows a test chooses.
struct NcclSide {
  double time_us, algbw, busbw;
  std::string wrong;  // "0", "3" or "N/A"
};
struct NcclRow {
  long bytes, count;
  std::string type, redop;
  int root;
  NcclSide out, in;
};

inline std::string Printf(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

inline constexpr char kNcclDevice[] = "NVIDIA H100 80GB HBM3";

// The stdout of `all_reduce_perf -b 8 -e 128M -f 2 -g 1` as nccl-tests 2.17 prints it
// (the format strings of its src/util.cu), for the rows given.
inline std::string NcclOutput(const std::vector<NcclRow>& rows, bool name_the_collective = true) {
  std::string out = "# nccl-tests version 2.17.6 nccl-headers=22803 nccl-library=22803\n";
  if (name_the_collective) out += "# Collective test starting: all_reduce_perf\n";
  out += "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
         "validation: 1 graph: 0\n#\n# Using devices\n";
  out += Printf("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", 0, 0, 4242, "node-1", 0, 0,
                0x19, 0, kNcclDevice);
  out += "my-host:4242:4242 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n";  // NCCL_DEBUG=INFO interleaves
  out += "#\n";
  out += Printf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "",
                "", "", "", "");
  out += Printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size", "count", "type",
                "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", 0, "");
  out += Printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)", "(elements)", "",
                "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, "");
  for (const NcclRow& r : rows) {
    out += Printf("%12li  %12li  %8s  %6s  %6i", r.bytes, r.count, r.type.c_str(), r.redop.c_str(), r.root);
    for (const NcclSide& s : {r.out, r.in}) {
      out += s.wrong == "N/A" ? Printf("  %7.2f  %6.2f  %6.2f    N/A", s.time_us, s.algbw, s.busbw)
                              : Printf("  %7.2f  %6.2f  %6.2f  %6s", s.time_us, s.algbw, s.busbw, s.wrong.c_str());
    }
    out += "\n";
  }
  out += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.5 \n#\n";
  out += "# Collective test concluded: all_reduce_perf\n";
  return out;
}

}  // namespace perfgate::testing
