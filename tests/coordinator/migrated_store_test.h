// Fixture of the coordinator's db tests: a store on a fresh, migrated
// database of the test process's private PostgreSQL server.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <pqxx/pqxx>

#include "coordinator/migrations.h"
#include "coordinator/store.h"
#include "tests/support/postgres.h"

namespace perfgate::coordinator {

/// Applies the migrations up to `version` within txn, recording them as
/// Store::Migrate does: a database as an older coordinator left it.
inline void MigrateUpTo(pqxx::work& txn, int version) {
  txn.exec("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
           "applied_at timestamptz NOT NULL DEFAULT now())");
  for (const Migration& m : Migrations()) {
    if (m.version > version) break;
    txn.exec(m.sql);
    txn.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name);
  }
}

class MigratedStoreTest : public testing::PostgresTest {
 protected:
  void SetUp() override {
    PostgresTest::SetUp();
    if (HasFatalFailure()) return;
    auto store = Store::Connect(ConnInfo(), 2);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    ASSERT_TRUE(store_->Migrate().ok());
  }

  std::unique_ptr<Store> store_;
};

}  // namespace perfgate::coordinator
