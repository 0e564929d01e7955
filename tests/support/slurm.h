// A private, throw-away single-node Slurm cluster for tests labelled `slurm`:
// munged, slurmctld and slurmd run as children of the test with their own
// configuration, munge key and socket, state, spool and ports in a temporary
// directory, so they neither use nor disturb another Slurm or munge on the
// machine. Every Slurm command a test runs must get env() so that it talks to
// this cluster.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/support/processes.h"

namespace perfgate::testing {

/// One running cluster; its daemons, jobs and files are gone with the object.
class SlurmCluster {
 public:
  /// OK when this machine can run a cluster: the process is root (slurmd
  /// must be) and munged, slurmctld, slurmd, srun, sbatch, sinfo, squeue and
  /// scancel are in PATH. FAILED_PRECONDITION with the reason otherwise.
  static absl::Status CanRun();
  /// Starts munged, slurmctld and slurmd, and waits until the node is idle.
  /// The error of a failed start carries the ends of the daemons' output.
  static absl::StatusOr<std::unique_ptr<SlurmCluster>> Start();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;
  /// Stop()s the cluster and removes its directory.
  ~SlurmCluster();

  /// Cancels every job, stops slurmd, slurmctld and munged, then kills any
  /// process still carrying this cluster's SLURM_CONF (a job step slurmd left
  /// behind). Safe to call twice.
  void Stop();

  /// The environment a Slurm command needs to reach this cluster.
  const std::map<std::string, std::string>& env() const { return env_; }
  /// Runs a Slurm command (srun, sbatch, ...) against this cluster in
  /// working_dir (the cluster's directory when empty).
  absl::StatusOr<CommandResult> Run(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout,
                                    const std::string& working_dir = "") const;
  /// The cluster's directory; tests may keep their files in it.
  const TempDir& dir() const { return dir_; }
  /// The ends of the daemons' output, for failure messages.
  std::string LogTails(int max_lines = 20) const;

 private:
  explicit SlurmCluster(TempDir dir) : dir_(std::move(dir)) {}
  absl::Status Launch();
  absl::Status WaitUntilIdle();

  TempDir dir_;  // configuration, key, state, spool, logs; removed after the daemons stop
  std::map<std::string, std::string> env_;
  std::unique_ptr<ChildProcess> munged_, slurmctld_, slurmd_;
};

}  // namespace perfgate::testing
