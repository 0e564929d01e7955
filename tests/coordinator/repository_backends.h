// The implementations a repository conformance suite runs against: the
// PostgreSQL store on a migrated database of its own, and the in-memory
// repositories the domain's tests use (coordinator/store/memory_*.h). A
// suite derives from RepositoryConformance and is instantiated with
// ConformanceBackends(), so each of its tests runs once per implementation.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/identity.h"
#include "coordinator/store.h"
#include "common/stats.h"
#include "coordinator/store/memory_credentials.h"
#include "coordinator/store/memory_gate_source.h"
#include "coordinator/store/memory_regressions.h"
#include "tests/support/postgres.h"

namespace perfgate::coordinator {

class RepositoryBackend {
 public:
  virtual ~RepositoryBackend() = default;
  virtual store::RegressionRepository& Regressions() = 0;
  virtual store::CredentialRepository& Credentials() = 0;
  /// A run that a stored record may name (a regression's first bad run).
  virtual std::string NewRunId() = 0;
  virtual store::GateSource& Gate() = 0;
  virtual store::SeriesSource& Series() = 0;
  /// Stores a run of `meta` ended as `status` with `cases`, finished after
  /// every run stored before it; returns its id.
  virtual std::string AddRun(const RunMeta& meta, RunStatus status, const std::vector<CaseResult>& cases) = 0;
  /// Stores what one calibration of a node measured.
  virtual void AddCalibration(const CalibrationSet& set) = 0;
};

class MemoryBackend final : public RepositoryBackend {
 public:
  store::RegressionRepository& Regressions() override { return regressions_; }
  store::CredentialRepository& Credentials() override { return credentials_; }
  std::string NewRunId() override { return NewUuid(); }
  store::GateSource& Gate() override { return gate_; }
  store::SeriesSource& Series() override { return gate_; }
  // As CloseRun would keep it: per metric its unthrottled values in sample
  // order and their median.
  std::string AddRun(const RunMeta& meta, RunStatus status, const std::vector<CaseResult>& cases) override {
    store::RunRecord run{meta, status, finished_ = std::max(finished_ + std::chrono::microseconds(1),
                                                            std::chrono::system_clock::now())};
    std::vector<store::StoredSummary> summaries;
    store::RunSamples samples;
    for (const CaseResult& c : cases) {
      std::vector<Sample> ordered = c.samples;
      std::sort(ordered.begin(), ordered.end(), [](const Sample& a, const Sample& b) { return a.index < b.index; });
      for (size_t m = 0; m < c.metrics.size(); ++m) {
        store::StoredSummary s;
        s.summary = {c.benchmark.Key(), c.metrics[m].name, c.metrics[m].unit, c.metrics[m].direction};
        std::vector<double>& values = samples[{s.summary.benchmark, s.summary.metric}];
        for (const Sample& x : ordered) {
          (x.throttled ? s.summary.n_throttled : s.summary.n) += 1;
          if (!x.throttled) values.push_back(x.values[m]);
        }
        s.summary.median = stats::Median(values);
        s.summary.status = c.status;
        summaries.push_back(std::move(s));
      }
      run.samples += ordered.size();
    }
    gate_.PutRun(run, std::move(summaries), std::move(samples));
    return meta.run_id;
  }
  void AddCalibration(const CalibrationSet& set) override {
    for (const CalibrationEntry& e : set.entries) {
      gate_.PutCalibration({set.environment.sku, set.node, set.environment.Hash(), e, set.measured_at});
    }
  }

 private:
  store::InMemoryRegressionRepository regressions_;
  store::InMemoryCredentialRepository credentials_;
  store::InMemoryGateSource gate_;
  TimePoint finished_{};
};

class PostgresBackend final : public RepositoryBackend {
 public:
  // A database of its own on the process's server (the test run's shared
  // one under ctest).
  absl::Status Start() {
    auto server = testing::SharedPostgresServer();
    if (!server.ok()) return server.status();
    static int databases = 0;
    const std::string name = "conformance_" + std::to_string(getpid()) + "_" + std::to_string(++databases);
    if (absl::Status s = (*server)->CreateDatabase(name); !s.ok()) return s;
    auto store = Store::Connect((*server)->ConnInfo(name), 2);
    if (!store.ok()) return store.status();
    store_ = std::move(*store);
    if (absl::Status s = store_->Migrate(); !s.ok()) return s;
    return store_->RegisterAgent("agent-1", "node-1", "0.1.0").status();
  }
  store::RegressionRepository& Regressions() override { return *store_; }
  store::CredentialRepository& Credentials() override { return *store_; }
  store::GateSource& Gate() override { return *store_; }
  store::SeriesSource& Series() override { return *store_; }
  std::string AddRun(const RunMeta& meta, RunStatus status, const std::vector<CaseResult>& cases) override {
    EXPECT_TRUE(store_->OpenRun(meta).ok());
    EXPECT_TRUE(store_->StoreBatch(meta.run_id, 1, cases).ok());
    EXPECT_TRUE(store_->CloseRun(meta.run_id, status, 1, "").ok());
    return meta.run_id;
  }
  void AddCalibration(const CalibrationSet& set) override {
    auto stored = store_->PutCalibration("agent-1", set);
    EXPECT_TRUE(stored.ok()) << stored.status();
  }
  std::string NewRunId() override {
    RunMeta run;
    run.run_id = NewUuid();
    run.agent_name = "agent-1";
    run.environment.sku = "cpu-test";
    run.branch = "main";
    run.commit = "c" + std::to_string(++runs_);
    EXPECT_TRUE(store_->OpenRun(run).ok());
    return run.run_id;
  }

 private:
  std::unique_ptr<Store> store_;
  int runs_ = 0;
};

/// The fixture of a conformance suite: the parameter names the backend.
class RepositoryConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "memory") {
      backend_ = std::make_unique<MemoryBackend>();
      return;
    }
    auto pg = std::make_unique<PostgresBackend>();
    const absl::Status started = pg->Start();
    ASSERT_TRUE(started.ok()) << started;
    backend_ = std::move(pg);
  }

  std::unique_ptr<RepositoryBackend> backend_;
};

/// Every implementation, each test named after it.
inline auto ConformanceBackends() { return ::testing::Values(std::string("memory"), std::string("postgres")); }
inline std::string BackendName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

}  // namespace perfgate::coordinator
