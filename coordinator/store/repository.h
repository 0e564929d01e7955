// The base of every repository of this folder: the database its queries run
// on, owned by the Store that combines the repositories (coordinator/store.h).
#pragma once

namespace perfgate::coordinator::store {

class Database;

/// A data-access class for one concern over the shared connection pool.
class Repository {
 protected:
  explicit Repository(Database& db) : db_(db) {}
  Database& db_;
};

}  // namespace perfgate::coordinator::store
