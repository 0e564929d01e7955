// Advisory locks that make the coordinator's periodic jobs run once across
// the replicas of one database (jobs.h).
#include "coordinator/store/jobs.h"

#include <cstdint>

#include "common/status_macros.h"
#include "coordinator/store/database.h"

namespace perfgate::coordinator::store {
namespace {

// One key per job, "pgjob" in ASCII and the job's number: apart from the
// keys of migrations, partitions and regression series.
int64_t KeyOf(PeriodicJob job) { return 0x70676a6f6200 + static_cast<int64_t>(job); }

}  // namespace

absl::StatusOr<bool> JobRepository::RunExclusively(PeriodicJob job, const std::function<absl::Status()>& work) {
  const int64_t key = KeyOf(job);
  auto held = db_.TryAdvisoryLock(key);
  PERFGATE_RETURN_IF_ERROR(held);
  if (!*held) return false;
  absl::Status s = work();
  db_.AdvisoryUnlock(key);
  PERFGATE_RETURN_IF_ERROR(s);
  return true;
}

}  // namespace perfgate::coordinator::store
