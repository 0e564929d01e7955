// The check of stored_runs.h: a stored run against its agent's result
// file; the standby of a test database.
#include "tests/e2e/stored_runs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <tuple>

#include "absl/status/status.h"
#include "common/status_macros.h"
#include "formats/result_file.h"

namespace perfgate::testing {

void ExpectRunStoredAsFiled(pqxx::transaction_base& txn, const std::string& run_id, const std::string& results_path) {
  auto file = ReadResultFile(results_path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_FALSE(file->cases.empty()) << results_path;
  EXPECT_EQ(txn.exec_params1("SELECT status FROM runs WHERE id = $1", run_id)[0].as<std::string>(), "complete");
  std::map<std::string, std::tuple<int64_t, int64_t, double>> stored;  // key -> (rows, distinct, sum)
  for (const auto& row : txn.exec_params(
           "SELECT b.key, count(*), count(DISTINCT (s.metric_id, s.idx)), sum(s.value) FROM samples s "
           "JOIN benchmarks b ON b.id = s.benchmark_id WHERE s.run_id = $1 GROUP BY b.key",
           run_id)) {
    stored[row[0].as<std::string>()] = {row[1].as<int64_t>(), row[2].as<int64_t>(), row[3].as<double>()};
  }
  EXPECT_EQ(stored.size(), file->cases.size()) << run_id;
  for (const CaseResult& cr : file->cases) {
    int64_t values = 0;
    double sum = 0;
    for (const auto& s : cr.samples) {
      for (double v : s.values) sum += v, ++values;
    }
    const auto& [rows, distinct, stored_sum] = stored[cr.benchmark.Key()];
    EXPECT_EQ(rows, values) << run_id << " " << cr.benchmark.Key();
    EXPECT_EQ(distinct, rows) << "a sample stored twice in " << run_id << " " << cr.benchmark.Key();
    EXPECT_NEAR(stored_sum, sum, 1e-9 * std::abs(sum)) << run_id << " " << cr.benchmark.Key();
  }
}

absl::StatusOr<Standby> StartStandbyOf(const PostgresServer& primary, const std::string& conninfo) {
  std::smatch m;
  if (!std::regex_search(conninfo, m, std::regex(R"(dbname=(\w+))"))) {
    return absl::InvalidArgumentError("no dbname in the connection string " + conninfo);
  }
  Standby out;
  out.dbname = m[1];
  PERFGATE_ASSIGN_OR_RETURN(out.server, PostgresServer::StartStandby(primary));
  out.both = "host=127.0.0.1,127.0.0.1 port=" + std::to_string(primary.port()) + "," +
             std::to_string(out.server->port()) + " user=perfgate dbname=" + out.dbname +
             " connect_timeout=5 target_session_attrs=read-write";
  return out;
}

}  // namespace perfgate::testing
