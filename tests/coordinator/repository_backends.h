// The implementations a repository conformance suite runs against: the
// PostgreSQL store on a private, migrated server, and the in-memory
// repositories the domain's tests use (coordinator/store/memory_*.h). A
// suite derives from RepositoryConformance and is instantiated with
// ConformanceBackends(), so each of its tests runs once per implementation.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/identity.h"
#include "coordinator/store.h"
#include "coordinator/store/memory_credentials.h"
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
};

class MemoryBackend final : public RepositoryBackend {
 public:
  store::RegressionRepository& Regressions() override { return regressions_; }
  store::CredentialRepository& Credentials() override { return credentials_; }
  std::string NewRunId() override { return NewUuid(); }

 private:
  store::InMemoryRegressionRepository regressions_;
  store::InMemoryCredentialRepository credentials_;
};

class PostgresBackend final : public RepositoryBackend {
 public:
  absl::Status Start() {
    auto server = testing::PostgresServer::Start();
    if (!server.ok()) return server.status();
    server_ = std::move(*server);
    auto store = Store::Connect(server_->ConnInfo(), 2);
    if (!store.ok()) return store.status();
    store_ = std::move(*store);
    if (absl::Status s = store_->Migrate(); !s.ok()) return s;
    return store_->RegisterAgent("agent-1", "node-1", "0.1.0").status();
  }
  store::RegressionRepository& Regressions() override { return *store_; }
  store::CredentialRepository& Credentials() override { return *store_; }
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
  std::unique_ptr<testing::PostgresServer> server_;
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
