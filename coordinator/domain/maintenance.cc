#include "coordinator/domain/maintenance.h"

#include <iostream>

#include "common/status_macros.h"

namespace perfgate::coordinator {

PartitionKeeper::PartitionKeeper(Store& store, std::chrono::seconds every)
    : store_(store), every_(every), periodic_(every, Periodic::Start::kNow, [this] { Ensure(); }) {}

void PartitionKeeper::Ensure() {
  // One replica of those sharing the database makes them at a time.
  auto made = store_.RunExclusively(PeriodicJob::kPartitions, [&]() -> absl::Status {
    return store_.EnsurePartitions(std::chrono::system_clock::now(), kPartitionMonthsAhead).status();
  });
  if (!made.ok()) {
    std::cerr << "perfgate-coordinator: cannot make the partitions of samples ahead of time: "
              << made.status().message() << " (trying again in " << every_.count() << " s)" << std::endl;
  }
}

absl::Status RunMaintenance(Store& store, const MaintenanceRequest& request, std::ostream& out) {
  const TimePoint now = std::chrono::system_clock::now();
  auto made = store.EnsurePartitions(now, request.months_ahead);
  PERFGATE_RETURN_IF_ERROR(made);
  out << "partitions: " << *made << " created (this month and " << request.months_ahead << " ahead exist)\n";
  if (!request.expire_days && request.expire_branch.empty()) return absl::OkStatus();
  RetentionRule rule;
  if (request.expire_days) rule.finished_before = now - std::chrono::hours(24) * *request.expire_days;
  rule.branch = request.expire_branch;
  auto expired = store.ExpireRuns(rule);
  PERFGATE_RETURN_IF_ERROR(expired);
  out << "retention: " << expired->runs << " runs removed with " << expired->samples << " sample rows; "
      << expired->partitions_dropped << " empty partitions dropped\n";
  return absl::OkStatus();
}

}  // namespace perfgate::coordinator
