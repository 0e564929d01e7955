// The connection pool every repository of this folder runs its transactions
// on, and the one place where libpqxx exceptions become statuses
// (connection trouble -> UNAVAILABLE, a rolled-back transaction -> ABORTED,
// data PostgreSQL cannot represent -> INVALID_ARGUMENT, anything else ->
// INTERNAL, each naming the operation). Internal to coordinator/store/: the
// only headers that include libpqxx are this one and sql.h.
#pragma once

#include <pqxx/pqxx>

#include <algorithm>
#include <cstdint>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {

/// A small pool of connections, opened lazily up to a maximum. Each operation
/// borrows one connection for the length of its transaction; a connection that
/// broke is dropped instead of being returned.
class Database {
 public:
  /// Connects with a libpq connection string, keeping up to pool_size
  /// connections open; the first is opened now, so a wrong address or a
  /// server that is down is reported at start rather than on a request.
  static absl::StatusOr<std::unique_ptr<Database>> Connect(const std::string& conninfo, int pool_size);

  /// A borrowed connection, returned to the pool when destroyed.
  class Lease {
   public:
    Lease(Database* pool, std::unique_ptr<pqxx::connection> conn)
        : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), conn_(std::move(o.conn_)), broken_(o.broken_) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (conn_ != nullptr) pool_->Release(std::move(conn_), broken_);
    }
    pqxx::connection& conn() { return *conn_; }
    void MarkBroken() { broken_ = true; }

   private:
    Database* pool_;
    std::unique_ptr<pqxx::connection> conn_;
    bool broken_ = false;
  };

  /// A connection, waiting while all are busy; UNAVAILABLE when none frees
  /// up in time or a new one cannot be opened.
  absl::StatusOr<Lease> Acquire();

  /// Runs fn(connection) and turns every libpqxx exception into a status;
  /// `what` names the operation in messages.
  template <typename F>
  auto Run(absl::string_view what, F&& fn) -> decltype(fn(std::declval<pqxx::connection&>())) {
    auto lease = Acquire();
    PERFGATE_RETURN_IF_ERROR(lease);
    try {
      return fn(lease->conn());
    } catch (const pqxx::broken_connection& e) {
      lease->MarkBroken();
      return absl::UnavailableError(absl::StrCat("lost the PostgreSQL connection while ", what,
                                                 ": ", FirstLine(e.what()), "; retry"));
    } catch (const pqxx::in_doubt_error& e) {
      lease->MarkBroken();
      return absl::UnavailableError(
          absl::StrCat("lost the PostgreSQL connection while committing (", what,
                       "); the write may or may not have been applied, retrying it is safe: ",
                       FirstLine(e.what())));
    } catch (const pqxx::statement_completion_unknown& e) {
      lease->MarkBroken();
      return absl::UnavailableError(absl::StrCat(
          "lost track of a statement while ", what,
          "; it may or may not have been applied, retrying it is safe: ", FirstLine(e.what())));
    } catch (const pqxx::transaction_rollback& e) {
      // Serialization failure or deadlock: nothing was written; retry.
      return absl::AbortedError(absl::StrCat("PostgreSQL rolled back the transaction while ", what,
                                             ": ", FirstLine(e.what()), "; retry"));
    } catch (const pqxx::sql_error& e) {
      if (!lease->conn().is_open()) lease->MarkBroken();
      return FromSqlError(what, e, *lease);
    } catch (const std::exception& e) {
      if (!lease->conn().is_open()) lease->MarkBroken();
      return absl::InternalError(absl::StrCat("while ", what, ": ", FirstLine(e.what())));
    }
  }

  /// Takes PostgreSQL's session advisory lock `key` without waiting, on a
  /// connection of its own kept outside the pool for such locks (so the
  /// holder's work may borrow every pooled one): true when this process now
  /// holds it, false when another session (another coordinator) does.
  absl::StatusOr<bool> TryAdvisoryLock(int64_t key);
  /// Releases what TryAdvisoryLock took. When that fails the lock
  /// connection is closed, which releases every lock it held.
  void AdvisoryUnlock(int64_t key);

  Database(std::string conninfo, int size) : conninfo_(std::move(conninfo)), size_(std::max(size, 1)) {}

 private:
  static absl::Status FromSqlError(absl::string_view what, const pqxx::sql_error& e, Lease& lease);
  void Release(std::unique_ptr<pqxx::connection> conn, bool broken);

  const std::string conninfo_;
  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;  // guarded by mu_
  int open_ = 0;                                         // idle + borrowed; guarded by mu_
  std::mutex lock_mu_;
  std::unique_ptr<pqxx::connection> lock_conn_;  // advisory locks only; guarded by lock_mu_
};

}  // namespace perfgate::coordinator::store
