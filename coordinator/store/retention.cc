#include "coordinator/store/retention.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "coordinator/store/database.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {

namespace {

// Key of the advisory lock under which partitions are made ("samplprt").
constexpr int64_t kPartitionLockKey = 0x73616d706c707274;
// Runs removed per transaction by ExpireRuns: a bounded time each.
constexpr int kExpireChunk = 100;

// The first day of a UTC month as text PostgreSQL reads, and the month's
// partition name.
struct Month {
  std::chrono::year_month ym;
  std::string Start() const {
    return absl::StrFormat("%04d-%02u-01 00:00:00+00", static_cast<int>(ym.year()),
                           static_cast<unsigned>(ym.month()));
  }
  std::string Name() const {
    return absl::StrFormat("samples_%04d_%02u", static_cast<int>(ym.year()), static_cast<unsigned>(ym.month()));
  }
  Month Next() const { return Month{ym + std::chrono::months(1)}; }
};

Month MonthOf(TimePoint t) {
  const std::chrono::year_month_day day{std::chrono::floor<std::chrono::days>(t)};
  return Month{day.year() / day.month()};
}

// Creates the partition of `month`, moving rows of it out of the default
// partition when some landed there. Returns false when it existed.
bool CreatePartition(pqxx::work& txn, const Month& month) {
  // A second coordinator making the same month waits here, then finds it.
  txn.exec_params("SELECT pg_advisory_xact_lock($1)", kPartitionLockKey);
  if (!txn.exec_params1("SELECT to_regclass($1) IS NULL", month.Name())[0].as<bool>()) return false;
  // Literals of digits this code formatted: nothing to escape.
  const std::string lo = absl::StrCat("'", month.Start(), "'"), hi = absl::StrCat("'", month.Next().Start(), "'");
  const std::string range = absl::StrCat(" FROM (", lo, ") TO (", hi, ")");
  const std::string in_range =
      absl::StrCat(" WHERE received_at >= ", lo, "::timestamptz AND received_at < ", hi, "::timestamptz");
  const std::string create =
      absl::StrCat("CREATE TABLE ", txn.quote_name(month.Name()), " PARTITION OF samples FOR VALUES", range);
  if (txn.exec(absl::StrCat("SELECT 1 FROM samples_default", in_range, " LIMIT 1")).empty()) {
    txn.exec(create);
    return true;
  }
  // Made too late: the month's rows sit in the default partition, and
  // PostgreSQL refuses a partition that the default holds rows of.
  txn.exec("ALTER TABLE samples DETACH PARTITION samples_default");
  txn.exec(create);
  txn.exec(absl::StrCat("INSERT INTO samples SELECT * FROM samples_default", in_range));
  txn.exec(absl::StrCat("DELETE FROM samples_default", in_range));
  txn.exec("ALTER TABLE samples ATTACH PARTITION samples_default DEFAULT");
  return true;
}

// Removes up to kExpireChunk runs that `rule` matches; returns the runs and
// sample rows removed (0 runs: none left).
std::pair<uint64_t, uint64_t> ExpireChunk(pqxx::work& txn, const RetentionRule& rule) {
  const int64_t cutoff = rule.finished_before ? ToMicros(*rule.finished_before) : 0;
  Json ids = Json::array();
  for (const auto& row : txn.exec_params(
           absl::StrCat("SELECT id::text FROM runs WHERE status <> 'running' AND ($1 = '' OR branch = $1) "
                        "AND (NOT $2 OR finished_at < ",
                        TimestampFromMicros(3), ") ORDER BY finished_at LIMIT $4 FOR UPDATE SKIP LOCKED"),
           rule.branch, rule.finished_before.has_value(), cutoff, kExpireChunk)) {
    ids.push_back(row[0].as<std::string>());
  }
  if (ids.empty()) return {0, 0};
  const std::string id_list = ids.dump();
  constexpr const char* kIds = "(SELECT (jsonb_array_elements_text($1::jsonb))::uuid)";
  // Every partition is searched, not only those of the runs' time span: a
  // probe of the run_id index of a partition without them costs one
  // descent, and no row may be left behind.
  const pqxx::result samples =
      txn.exec_params(absl::StrCat("DELETE FROM samples WHERE run_id IN ", kIds), id_list);
  // Cases, batches, summaries and gate reports go with the run (ON DELETE CASCADE).
  const pqxx::result runs = txn.exec_params(absl::StrCat("DELETE FROM runs WHERE id IN ", kIds), id_list);
  return {runs.affected_rows(), samples.affected_rows()};
}

// Drops the monthly partitions of samples for months over more than a day
// ago that hold no row; returns how many.
uint32_t DropEmptyPartitions(pqxx::work& txn, TimePoint now) {
  const std::string oldest_kept = MonthOf(now - std::chrono::hours(24)).Name();
  uint32_t dropped = 0;
  for (const auto& row : txn.exec(
           "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
           "WHERE i.inhparent = 'samples'::regclass AND c.relname ~ '^samples_[0-9]{4}_[0-9]{2}$' "
           "ORDER BY c.relname")) {
    const std::string name = row[0].as<std::string>();
    if (name >= oldest_kept) break;  // names sort by month
    const std::string quoted = txn.quote_name(name);
    if (!txn.exec(absl::StrCat("SELECT 1 FROM ", quoted, " LIMIT 1")).empty()) continue;
    txn.exec(absl::StrCat("DROP TABLE ", quoted));
    ++dropped;
  }
  return dropped;
}

}  // namespace

absl::StatusOr<uint32_t> RetentionRepository::EnsurePartitions(TimePoint now, uint32_t months_ahead) {
  uint32_t created = 0;
  Month month = MonthOf(now);
  for (uint32_t i = 0; i <= months_ahead; ++i, month = month.Next()) {
    absl::StatusOr<bool> made =
        db_.Run(absl::StrCat("creating partition ", month.Name()), [&](pqxx::connection& c) -> absl::StatusOr<bool> {
          pqxx::work txn(c);
          const bool made = CreatePartition(txn, month);
          txn.commit();
          return made;
        });
    PERFGATE_RETURN_IF_ERROR(made);
    if (*made) ++created;
  }
  return created;
}

absl::StatusOr<RetentionOutcome> RetentionRepository::ExpireRuns(const RetentionRule& rule) {
  if (!rule.finished_before && rule.branch.empty()) {
    return absl::InvalidArgumentError("a retention rule needs an age or a branch (or both)");
  }
  RetentionOutcome out;
  for (;;) {
    auto removed = db_.Run("expiring runs", [&](pqxx::connection& c) -> absl::StatusOr<std::pair<uint64_t, uint64_t>> {
      pqxx::work txn(c);
      const auto counts = ExpireChunk(txn, rule);
      txn.commit();
      return counts;
    });
    PERFGATE_RETURN_IF_ERROR(removed);
    if (removed->first == 0) break;
    out.runs += removed->first;
    out.samples += removed->second;
  }
  auto dropped = db_.Run("dropping empty partitions", [&](pqxx::connection& c) -> absl::StatusOr<uint32_t> {
    pqxx::work txn(c);
    const uint32_t n = DropEmptyPartitions(txn, std::chrono::system_clock::now());
    txn.commit();
    return n;
  });
  PERFGATE_RETURN_IF_ERROR(dropped);
  out.partitions_dropped = *dropped;
  return out;
}

}  // namespace perfgate::coordinator::store
