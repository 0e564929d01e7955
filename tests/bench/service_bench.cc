// Benchmarks of the service's hot paths (Google Benchmark; not run by CI):
// the summary statistics, end-to-end ingest against raw COPY of the same
// rows on the same private PostgreSQL, CloseRun, the coordinator's gate of
// 500 metrics in A/B and history mode with two full runs' samples, and
// history queries (in the coordinator and through the HTTP API) on a
// database filled by scripts/fill-samples.sh (given by
// PERFGATE_BENCH_DATABASE; skipped without it). docs/performance.md records
// the figures. Timings that share the machine are taken interleaved, and
// medians reported, so that a busy neighbour slows both sides alike.
#include <benchmark/benchmark.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <pqxx/pqxx>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/coordinator_client.h"
#include "cli/ingest.h"
#include "client/upload.h"
#include "common/identity.h"
#include "common/stats.h"
#include "coordinator/domain/evaluate.h"
#include "coordinator/api/http_server.h"
#include "coordinator/domain/maintenance.h"
#include "coordinator/domain/regressions.h"
#include "coordinator/api/server.h"
#include "coordinator/store.h"
#include "formats/result_file.h"
#include "gate/policy.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

double MedianOf(std::vector<double> v) { return stats::Median(v); }

std::vector<double> Lognormal(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(0.0, 0.05);
  std::vector<double> v(n);
  for (double& x : v) x = 100.0 * d(rng);
  return v;
}

void BM_Summarize(benchmark::State& state) {
  const std::vector<double> v = Lognormal(static_cast<size_t>(state.range(0)), 1);
  for (auto _ : state) benchmark::DoNotOptimize(stats::Summarize(v));
}
BENCHMARK(BM_Summarize)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);

// What each summary cost before: the 2000-resample bootstrap of the median.
void BM_BootstrapMedianCi2000(benchmark::State& state) {
  const std::vector<double> v = Lognormal(static_cast<size_t>(state.range(0)), 1);
  for (auto _ : state) benchmark::DoNotOptimize(stats::BootstrapMedianCi(v));
}
BENCHMARK(BM_BootstrapMedianCi2000)->Arg(1000)->Unit(benchmark::kMicrosecond);

// `cases` cases of two metrics with `samples` samples each.
std::vector<CaseResult> Cases(int cases, int samples, uint64_t seed) {
  std::vector<CaseResult> out;
  for (int c = 0; c < cases; ++c) {
    CaseResult cr;
    cr.benchmark = {"bench", absl::StrCat("case_", c), {{"n", "4096"}}};
    cr.metrics = {{"time_ms", "ms", Direction::kLowerIsBetter}, {"tflops", "TFLOP/s", Direction::kHigherIsBetter}};
    const std::vector<double> a = Lognormal(samples, seed + 2 * c), b = Lognormal(samples, seed + 2 * c + 1);
    for (int i = 0; i < samples; ++i) cr.samples.push_back(Sample{static_cast<uint32_t>(i), {a[i], b[i]}, false});
    cr.status = CaseStatus::kOk;
    out.push_back(std::move(cr));
  }
  return out;
}

// A private PostgreSQL with a coordinator in this process, shared by the
// service benchmarks.
struct Service {
  std::unique_ptr<testing::TempDir> dir;  // holds pg's data, removed however the process ends
  std::unique_ptr<testing::PostgresServer> pg;
  std::unique_ptr<coordinator::Store> store;
  std::unique_ptr<coordinator::Server> server;
  std::unique_ptr<client::CoordinatorClient> client;

  static Service& Get() {
    static Service* s = [] {
      auto* svc = new Service;
      // Everything the benchmarks write (the database: gigabytes after a
      // full run) lives in one directory that a watcher removes when this
      // process ends, a crash or a kill included.
      auto dir = testing::TempDir::Create("perfgate-bench-");
      if (!dir.ok() || !testing::RemoveTreeWhenThisProcessEnds(dir->path()).ok()) {
        std::cerr << "cannot set up the scratch directory\n";
        std::exit(1);
      }
      svc->dir = std::make_unique<testing::TempDir>(std::move(*dir));
      // Run as root, PostgreSQL runs as user postgres, who must reach its
      // data directory inside.
      std::filesystem::permissions(svc->dir->path(), std::filesystem::perms::others_exec |
                                                         std::filesystem::perms::group_exec,
                                   std::filesystem::perm_options::add);
      setenv("TMPDIR", svc->dir->path().c_str(), 1);
      auto pg = testing::PostgresServer::Start();
      if (!pg.ok()) {
        std::cerr << "cannot start PostgreSQL: " << pg.status() << "\n";
        std::exit(1);
      }
      svc->pg = std::move(*pg);
      svc->store = *coordinator::Store::Connect(svc->pg->ConnInfo(), 8);
      if (!svc->store->Migrate().ok() || !svc->store->EnsurePartitions(std::chrono::system_clock::now()).ok()) std::exit(1);
      coordinator::ServerConfig config;
      config.listen = "127.0.0.1:0";
      svc->server = *coordinator::Server::Start(config, *svc->store);
      client::ClientOptions options;
      options.address = absl::StrCat("127.0.0.1:", svc->server->port());
      svc->client = std::make_unique<client::CoordinatorClient>(options);
      return svc;
    }();
    return *s;
  }

  static RunMeta Meta(const std::string& branch, std::map<std::string, std::string> details = {}) {
    RunMeta m;
    m.run_id = NewUuid();
    m.agent_name = "bench-agent";
    m.environment.sku = "h100-sxm5-80gb";
    m.branch = branch;
    m.commit = NewUuid();
    m.trigger = Trigger::kCi;
    m.node = "node-1";
    m.details = std::move(details);
    return m;
  }

  // Stores a run of `cases` through the store (batches of 32 cases), then
  // returns the seconds its CloseRun took.
  double StoredThenClosed(const std::vector<CaseResult>& cases) {
    const RunMeta meta = Meta("close");
    if (!store->OpenRun(meta).ok()) std::exit(1);
    uint64_t seq = 0;
    for (size_t i = 0; i < cases.size(); i += 32) {
      std::vector<CaseResult> part(cases.begin() + i, cases.begin() + std::min(cases.size(), i + 32));
      if (!store->StoreBatch(meta.run_id, ++seq, part).ok()) std::exit(1);
    }
    const auto start = Clock::now();
    auto closed = store->CloseRun(meta.run_id, RunStatus::kComplete, seq, "");
    const double seconds = Seconds(start);
    if (!closed.ok()) std::exit(1);
    return seconds;
  }

  // Sends a run whole over gRPC (the path of `perfgate ingest`: OpenRun,
  // batches, CloseRun); returns the seconds.
  double Ingest(const RunMeta& meta, const std::vector<CaseResult>& cases) {
    auto upload = client::RunUpload::Create(*client, meta);
    if (!upload.ok() || !upload->Register("bench", "0").ok()) std::exit(1);
    const auto start = Clock::now();
    auto stored = upload->SendWhole(cases);
    const double total = Seconds(start);
    if (!stored.ok()) {
      std::cerr << "ingest failed: " << stored.status() << "\n";
      std::exit(1);
    }
    return total;
  }
};

std::string DoubleText(double v) { return absl::StrFormat("%.17g", v); }

// The rows of `cases` as COPY text for run `run_id`, with the benchmark and
// metric ids the store gave them.
std::string CopyText(pqxx::connection& c, const std::string& run_id, const std::vector<CaseResult>& cases) {
  pqxx::nontransaction t(c);
  std::map<std::string, std::pair<int64_t, std::vector<int64_t>>> ids;
  for (const auto& row : t.exec("SELECT b.key, b.id, m.id FROM benchmarks b JOIN metrics m ON m.benchmark_id = b.id "
                                "ORDER BY m.name = 'tflops'")) {
    auto& e = ids[row[0].as<std::string>()];
    e.first = row[1].as<int64_t>();
    e.second.push_back(row[2].as<int64_t>());
  }
  std::string text;
  for (const CaseResult& cr : cases) {
    const auto& [bench_id, metric_ids] = ids.at(cr.benchmark.Key());
    for (const Sample& s : cr.samples) {
      for (size_t m = 0; m < metric_ids.size(); ++m) {
        absl::StrAppend(&text, run_id, "\t", bench_id, "\t", metric_ids[m], "\t", s.index, "\t",
                        DoubleText(s.values[m]), "\tf\n");
      }
    }
  }
  return text;
}

// Raw COPY of `text` into samples: psql's \copy of a file holding it, in
// one transaction, as an operator would load the rows; returns the seconds
// psql took.
double RawCopy(const Service& svc, const std::string& text) {
  const std::string path = svc.dir->Join("copy.tsv");
  std::ofstream(path) << text;
  const auto start = Clock::now();
  auto ran = testing::RunCommand({svc.pg->bin_dir() + "/psql", "-q", "-v", "ON_ERROR_STOP=1", "-d",
                                  svc.pg->ConnInfo(), "-c",
                                  "\\copy samples (run_id, benchmark_id, metric_id, idx, value, throttled) FROM '" +
                                      path + "'"});
  const double seconds = Seconds(start);
  if (!ran.ok() || ran->exit_code != 0) {
    std::cerr << "psql \\copy failed: " << (ran.ok() ? ran->output : ran.status().ToString()) << "\n";
    std::exit(1);
  }
  std::remove(path.c_str());
  return seconds;
}

// The result file of `cases` cases x 2 metrics x 1000 samples (seeded), as
// `perfgate-agent run --output` writes it: 17 MB for 200 cases.
std::string WriteBenchFile(const testing::TempDir& dir, const std::vector<CaseResult>& cases) {
  const std::string path = dir.Join(absl::StrCat("results-", cases.size(), ".json"));
  RunMeta meta = Service::Meta("file");
  meta.started_at = std::chrono::system_clock::from_time_t(1'790'000'000);
  if (absl::Status s = WriteResultFile(path, meta, cases); !s.ok()) {
    std::cerr << s << "\n";
    std::exit(1);
  }
  return path;
}

// `perfgate ingest FILE` against the coordinator, as the command runs it
// (read, check, OpenRun, batches, CloseRun); returns the seconds.
double IngestFile(const Service& svc, const std::string& path) {
  cli::IngestOptions o;
  o.files = {path};
  o.coordinator = absl::StrCat("127.0.0.1:", svc.server->port());
  o.branch = "ingest";
  std::ostringstream printed;  // the run id it prints
  std::streambuf* out = std::cout.rdbuf(printed.rdbuf());
  const auto start = Clock::now();
  const int code = cli::IngestCommand(o);
  const double seconds = Seconds(start);
  std::cout.rdbuf(out);
  if (code != 0) std::exit(1);
  return seconds;
}

// Per repetition, with the file of state.range(0) cases x 2 metrics x 1000
// samples: reading it (ReadResultFile), a raw COPY of its rows, `perfgate
// ingest` of it end to end (those two in alternating order), and the
// CloseRun alone of another such run stored through the store. Counters
// are the medians over the repetitions, ratios taken within one.
void BM_IngestVsCopy(benchmark::State& state) {
  Service& svc = Service::Get();
  const std::vector<CaseResult> cases = Cases(static_cast<int>(state.range(0)), 1000, 7);
  const std::string file = WriteBenchFile(*svc.dir, cases);
  const double megabytes = static_cast<double>(std::filesystem::file_size(file)) / 1e6;
  pqxx::connection c(svc.pg->ConnInfo());
  svc.Ingest(svc.Meta("warmup"), cases);  // registers benchmarks and metrics
  std::vector<double> read_mb_s, copy_s, ingest_s, ratio, close_s, close_ratio;
  for (auto _ : state) {
    auto start = Clock::now();
    if (!ReadResultFile(file).ok()) std::exit(1);
    read_mb_s.push_back(megabytes / Seconds(start));
    const RunMeta copy_run = svc.Meta("copy");
    if (!svc.store->OpenRun(copy_run).ok()) std::exit(1);
    const std::string text = CopyText(c, copy_run.run_id, cases);
    if (copy_s.size() % 2 == 0) {
      copy_s.push_back(RawCopy(svc, text));
      ingest_s.push_back(IngestFile(svc, file));
    } else {
      ingest_s.push_back(IngestFile(svc, file));
      copy_s.push_back(RawCopy(svc, text));
    }
    ratio.push_back(ingest_s.back() / copy_s.back());
    close_s.push_back(svc.StoredThenClosed(cases));
    close_ratio.push_back(close_s.back() / copy_s.back());
    state.SetIterationTime(ingest_s.back());
  }
  state.counters["file_MB"] = megabytes;
  state.counters["read_MB_per_s"] = MedianOf(read_mb_s);
  state.counters["copy_s"] = MedianOf(copy_s);
  state.counters["ingest_s"] = MedianOf(ingest_s);
  state.counters["ingest_over_copy"] = MedianOf(ratio);
  state.counters["close_s"] = MedianOf(close_s);
  state.counters["close_over_copy"] = MedianOf(close_ratio);
  state.counters["values"] = static_cast<double>(cases.size()) * 2000;
}
// The figures: 200 cases (17 MB, 400k values), 5 repetitions. CTest runs the
// 2-case one once as a smoke test.
BENCHMARK(BM_IngestVsCopy)->Arg(200)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IngestVsCopy)->Name("BM_IngestVsCopySmoke")->Arg(2)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

// Reading the 17 MB file alone: ReadResultFile, the whole of what `perfgate
// ingest` does before it opens the run.
void BM_ReadResultFile(benchmark::State& state) {
  auto dir = testing::TempDir::Create("perfgate-bench-read-");
  if (!dir.ok()) std::exit(1);
  const std::string file = WriteBenchFile(*dir, Cases(static_cast<int>(state.range(0)), 1000, 7));
  const auto bytes = static_cast<int64_t>(std::filesystem::file_size(file));
  for (auto _ : state) {
    auto set = ReadResultFile(file);
    if (!set.ok()) {
      state.SkipWithError(std::string(set.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(set);
  }
  state.SetBytesProcessed(bytes * state.iterations());
}
BENCHMARK(BM_ReadResultFile)->Arg(200)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// The coordinator's gate of two stored runs of 250 cases x 2 metrics x 200
// samples (500 metrics, 100k values a side): A/B with the sides' five
// processes each (the gate counts their medians, stored at close), and
// history against the five newest runs of the branch, the newest of them
// that A/B side (four more runs' summaries).
void BM_Gate500(benchmark::State& state) {
  Service& svc = Service::Get();
  const bool ab = state.range(0) == 1;
  static std::string base_id, cand_id;
  if (base_id.empty()) {
    // Four older runs of one process each (their summaries suffice), then
    // the A/B baseline side, then the candidate side.
    for (int i = 0; i < 4; ++i) svc.Ingest(svc.Meta("gate-main"), Cases(250, 200, 100 + i));
    std::map<std::string, std::string> blocks = {{"ab_blocks", "5"}};
    const RunMeta base = svc.Meta("gate-main", blocks);
    svc.Ingest(base, Cases(250, 200, 150));
    base_id = base.run_id;
    const RunMeta cand = svc.Meta("gate-pr", blocks);
    svc.Ingest(cand, Cases(250, 200, 200));
    cand_id = cand.run_id;
  }
  coordinator::GateRequest req;
  req.candidate_run_id = cand_id;
  req.policy_yaml = "version: 1\n";
  if (ab) {
    req.mode = gate::Mode::kAb;
    req.baseline_run_id = base_id;
  } else {
    req.mode = gate::Mode::kHistory;
    req.baseline_branch = "gate-main";
  }
  std::vector<double> times;
  for (auto _ : state) {
    const auto start = Clock::now();
    auto eval = coordinator::EvaluateCandidate(*svc.store, req);
    times.push_back(Seconds(start));
    state.SetIterationTime(times.back());
    if (!eval.ok()) {
      state.SkipWithError(std::string(eval.status().message()).c_str());
      return;
    }
    state.counters["metrics"] = static_cast<double>(eval->result.verdicts.size());
  }
  state.counters["median_ms"] = 1000 * MedianOf(times);
}
BENCHMARK(BM_Gate500)->Arg(1)->Arg(0)->ArgName("ab")->Iterations(15)->UseManualTime()->Unit(benchmark::kMillisecond);

// History of one series of a database filled by scripts/fill-samples.sh
// (PERFGATE_BENCH_DATABASE), the newest `limit` points: inside the
// coordinator (Store::GetHistory, the gate's and the CLI's read) and
// through the HTTP API (/api/v1/series on an in-process HttpServer, one
// keep-alive client, as the dashboard asks). p50/p95 of 200 calls.
std::unique_ptr<coordinator::Store> FilledStore(benchmark::State& state) {
  const char* db = std::getenv("PERFGATE_BENCH_DATABASE");
  if (db == nullptr) {
    state.SkipWithError("PERFGATE_BENCH_DATABASE is not set (fill one with scripts/fill-samples.sh)");
    return nullptr;
  }
  auto store = coordinator::Store::Connect(db, 2);
  if (!store.ok()) {
    state.SkipWithError(std::string(store.status().message()).c_str());
    return nullptr;
  }
  return *std::move(store);
}

void ReportPercentiles(benchmark::State& state, std::vector<double> times) {
  if (times.empty()) return;
  std::sort(times.begin(), times.end());
  state.counters["p50_ms"] = 1000 * times[times.size() / 2];
  state.counters["p95_ms"] = 1000 * times[times.size() * 95 / 100];
}

void BM_History(benchmark::State& state) {
  auto store = FilledStore(state);
  if (store == nullptr) return;
  const auto limit = static_cast<uint32_t>(state.range(0));
  std::vector<double> times;
  for (auto _ : state) {
    const auto start = Clock::now();
    auto series = store->GetHistory("fill/case_0", "time_ms", "", "main", limit);
    times.push_back(Seconds(start));
    state.SetIterationTime(times.back());
    if (!series.ok() || series->points.size() != limit) {
      state.SkipWithError("short history: was the database filled by scripts/fill-samples.sh?");
      return;
    }
  }
  ReportPercentiles(state, std::move(times));
}
BENCHMARK(BM_History)->Arg(100)->Arg(1000)->Arg(10000)->Iterations(200)->UseManualTime()->Unit(benchmark::kMillisecond);

// Regression detection after a run closes (DetectRegressions, what the
// watcher runs off the ingest path): the newest run of fill/case_0, its
// series read and searched for changes, on databases whose series are 100
// to 100 000 runs long (`fill-samples.sh DB ROWS 25`). It reads the newest
// runs of each series the run reported, so all should take alike.
void BM_DetectRegressions(benchmark::State& state) {
  auto store = FilledStore(state);
  if (store == nullptr) return;
  auto newest = store->GetHistory("fill/case_0", "time_ms", "", "main", 1);
  auto policy = gate::ParsePolicy("version: 1\n", "policy.yaml");
  if (!newest.ok() || newest->points.empty() || !policy.ok()) {
    state.SkipWithError("no run of fill/case_0: was the database filled by scripts/fill-samples.sh?");
    return;
  }
  const std::string run = newest->points.back().run_id;
  std::vector<double> times;
  for (auto _ : state) {
    const auto start = Clock::now();
    auto found = coordinator::DetectRegressions(*store, run, *policy);
    times.push_back(Seconds(start));
    state.SetIterationTime(times.back());
    if (!found.ok()) {
      state.SkipWithError(std::string(found.status().message()).c_str());
      return;
    }
  }
  ReportPercentiles(state, std::move(times));
}
BENCHMARK(BM_DetectRegressions)->Iterations(100)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_HistoryHttp(benchmark::State& state) {
  auto store = FilledStore(state);
  if (store == nullptr) return;
  coordinator::HttpConfig config;
  config.listen = "127.0.0.1:0";
  auto server = coordinator::HttpServer::Start(config, *store);
  if (!server.ok()) {
    state.SkipWithError(std::string(server.status().message()).c_str());
    return;
  }
  httplib::Client client("127.0.0.1", (*server)->port());
  client.set_keep_alive(true);
  // Args: the newest runs, and the points they are drawn in (0: a point a run).
  const std::string path = absl::StrCat("/api/v1/series?benchmark=fill/case_0&metric=time_ms&branch=main&limit=",
                                        state.range(0), state.range(1) > 0 ? "&points=" : "",
                                        state.range(1) > 0 ? absl::StrCat(state.range(1)) : "");
  std::vector<double> times;
  for (auto _ : state) {
    const auto start = Clock::now();
    auto res = client.Get(path);
    times.push_back(Seconds(start));
    state.SetIterationTime(times.back());
    if (!res || res->status != 200) {
      state.SkipWithError(res ? res->body.c_str() : "no answer from the HTTP API");
      return;
    }
  }
  ReportPercentiles(state, std::move(times));
}
BENCHMARK(BM_HistoryHttp)
    ->Args({100, 0})
    ->Args({1000, 0})
    ->Args({10000, 1000})
    ->Iterations(200)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
// 5 000 and 10 000 (the most it answers) points of a run each: 20 calls.
BENCHMARK(BM_HistoryHttp)
    ->Args({5000, 0})
    ->Args({10000, 0})
    ->Iterations(20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace perfgate

BENCHMARK_MAIN();
