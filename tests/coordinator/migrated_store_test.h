// Fixture of the coordinator's db tests: a store on a fresh, migrated
// database of the test process's private PostgreSQL server.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "coordinator/store.h"
#include "tests/support/postgres.h"

namespace perfgate::coordinator {

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
