// How `perfgate bisect` builds and measures its probes (docs/bisect.md):
// the first-parent commits of a range from git, a build of each commit in a
// git worktree of its own (cached by commit) or a ready artifact per
// commit, and the interleaved A/B of `perfgate-agent ab --baseline-cmd
// --candidate-cmd` of a commit's build against the good endpoint's, run
// here or as one Slurm array job per round. Every command is an argument
// vector; no shell sees a value from outside.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/bisect.h"
#include "perfgate/v1/bisection.pb.h"

namespace perfgate::cli {

// The templates' placeholders (common/placeholders.h): {commit} in --build
// and --artifact is the commit; {artifact} in --build is the folder its
// build fills, and in --cmd that commit's build (the folder, or the
// --artifact path); {image}, with images, the image `name@sha256:<hex>`;
// {out} and {samples} in --cmd are ab's. {out} in --build, an older
// spelling of {artifact} there, is still read as it.

/// What a bisection needs to build and measure a commit; stored with the
/// job so that a resumed bisection measures as the first run did.
struct BisectSettings {
  std::string repo = ".";  // the git checkout (made absolute when checked)
  std::string build;       // --build: a command with {commit} and {artifact}, run in the commit's worktree
  std::string artifact;    // --artifact: a path with {commit}
  std::string command;     // --cmd: the benchmark program, with {artifact}, and ab's {out}, {samples}
  std::string agent;  // the agent whose `ab` measures; empty: ResolveAgent's default
  std::vector<std::string> ab_args;      // more flags for `ab` (--block-time=0.3, ...)
  std::string work_dir;  // builds, worktrees, probe reports (shared with Slurm nodes); empty: DefaultWorkDir
  double case_budget_s = 60;  // ab's --case-budget at the first attempt; later attempts get more
  unsigned max_rounds = 30;   // ab's --max-rounds at the first attempt
  double build_timeout_s = 1800;
  bool slurm = false;                     // each round as an sbatch array, one task per probe
  std::vector<std::string> sbatch_args;   // --partition=..., --constraint=SKU, ...
  bool into_merges = false;  // a culprit merge commit is searched into (BisectPlan::merge_insides)
  bool images = false;       // good and bad are image digests, not commits: no git, no build
  /// --count: each probe counts instructions under callgrind, one process a
  /// side, instead of timing rounds (ab --count instructions --count-only).
  bool count = false;
};

/// The settings as stored with the job (proto/perfgate/v1/bisection.proto),
/// and back.
v1::BisectSettings ToMessage(const BisectSettings& s);
BisectSettings SettingsOf(const v1::BisectSettings& m);

/// The perfgate-agent a bisection runs, as a path: `flag` (--agent) when
/// given, a bare name looked up in PATH; else the perfgate-agent beside
/// `self` (this program's own binary, /proc/self/exe), else the one in
/// PATH. FAILED_PRECONDITION saying where it looked when there is none.
absl::StatusOr<std::string> ResolveAgent(const std::string& flag, const std::string& self);

/// The settings a stored bisection measures with when it goes on: the
/// stored ones, with the agent of --agent (`agent_flag`, resolved by
/// ResolveAgent) in place of the stored one when given.
/// INVALID_ARGUMENT when they lack the command or the case budget.
absl::StatusOr<BisectSettings> StoredSettings(const v1::BisectSettings& stored, const std::string& agent_flag);

/// This program's own binary (/proc/self/exe); empty when unreadable.
std::string SelfExe();

/// Where a bisection keeps its builds, worktrees and probe reports when
/// --work-dir is not given: perfgate-bisect/ in the checkout's git folder
/// (`git rev-parse --git-common-dir`), out of the work tree and `git
/// status`; with images (no checkout), $XDG_CACHE_HOME/perfgate-bisect, or
/// ~/.cache/perfgate-bisect.
absl::StatusOr<std::string> DefaultWorkDir(const BisectSettings& s);

/// Checks the templates (exactly one of build and artifact, each with its
/// placeholders; a command with {artifact}), makes repo and work_dir
/// absolute (DefaultWorkDir when empty) and the work folder present, and
/// resolves the agent (ResolveAgent).
/// With images: no --build; --artifact, when given, names {image}; --cmd
/// names {image} or {artifact}; no git checkout is needed.
absl::Status CheckSettings(BisectSettings& s);

/// OK for `name@sha256:<64 lowercase hex>`; else INVALID_ARGUMENT naming
/// `flag` and what is wrong.
absl::Status CheckImageDigest(const std::string& flag, const std::string& image);

/// The commits that merge commit `commit` brought in, oldest first (`git
/// rev-list --first-parent --reverse M^1..M^2`); none when it is not a merge.
absl::StatusOr<std::vector<std::string>> MergeInside(const std::string& repo, const std::string& commit);

/// The full ids of good and bad and the first-parent commits after good up
/// to bad, oldest first (`git rev-list --first-parent --reverse good..bad`).
/// INVALID_ARGUMENT when a commit is unknown, good is not an ancestor of
/// bad, or nothing lies between.
struct CommitRange {
  std::string good, bad;
  std::vector<std::string> commits;
};
absl::StatusOr<CommitRange> PlanRange(const std::string& repo, const std::string& good, const std::string& bad);

/// The build of `commit`: the artifact's path, or the folder its build
/// filled (built now in a worktree of its own unless a finished build of
/// that commit is cached); with images and no --artifact, the image itself. The error names the commit and what its build did.
absl::StatusOr<std::string> BuildOf(const BisectSettings& s, const std::string& commit, std::ostream& log);

/// One probe to measure: a commit's build against the good endpoint's.
struct ProbeTask {
  std::string commit;
  unsigned attempt = 1;
  std::string good_build, build;
  double threshold = 0;          // ab's tolerance, so that its rounds stop where the verdict is decided
  std::string benchmark, metric;  // the case judged; empty: the worst of the first report
  std::string good;               // the good endpoint ({image} of the baseline side)
};

/// The `perfgate-agent ab` argument vector of `task`, writing its JSON
/// report to `report`; attempt a gets a times the rounds and the budget.
std::vector<std::string> ProbeArgv(const BisectSettings& s, const ProbeTask& task, const std::string& policy,
                                   const std::string& report);

/// The measurement of task's case in an `ab` JSON report, with the rounds
/// the report gives that case (0 when it gives none); not ok, with the
/// reason, when the report is missing or lacks the case.
ProbeMeasurement ReadProbeReport(const std::string& report, const ProbeTask& task);

/// Measures every task: one after another here, or as one sbatch array
/// (waited for) with settings.slurm. A measurement per task, in order.
absl::StatusOr<std::vector<ProbeMeasurement>> MeasureProbes(const BisectSettings& s,
                                                            const std::vector<ProbeTask>& tasks, std::ostream& log);

}  // namespace perfgate::cli
