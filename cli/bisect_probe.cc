// Builds and probes of `perfgate bisect` (bisect_probe.h).
#include "cli/bisect_probe.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/command_line.h"
#include "common/file_io.h"
#include "common/placeholders.h"
#include "common/process.h"
#include "common/status_macros.h"
#include "gate/report.h"
#include "wire/gate_convert.h"

namespace perfgate::cli {
namespace fs = std::filesystem;

namespace {

// `git -C repo ARGS...`: its stdout, trimmed; the error names what was asked.
absl::StatusOr<std::string> GitIn(const std::string& repo, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions options;
  options.quiet = true;
  auto r = RunProcess(argv, options);
  PERFGATE_RETURN_IF_ERROR(r);
  if (r->exit_code != 0) {
    return absl::InvalidArgumentError(absl::StrCat("git ", args.front(), " ", args.back(), " ",
                                                   DescribeExit(*r, 0), " in ", repo));
  }
  return std::string(absl::StripTrailingAsciiWhitespace(r->out));
}

bool IsExecutable(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

// The first executable `name` in PATH; empty when there is none.
std::string InPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path == nullptr ? "" : path, ':', absl::SkipEmpty())) {
    const std::string candidate = (fs::path(std::string(dir)) / name).string();
    if (IsExecutable(candidate)) return candidate;
  }
  return "";
}

absl::StatusOr<std::string> FullCommit(const std::string& repo, const std::string& name) {
  if (name.empty() || name.front() == '-') {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a commit"));
  }
  auto sha = GitIn(repo, {"rev-parse", "--verify", "--quiet", "--end-of-options", name + "^{commit}"});
  if (!sha.ok()) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a commit of ", repo));
  return sha;
}

std::string ReadText(const std::string& path) { return ReadWholeFile(path).value_or(""); }

// The side command of `ab` that runs `build`'s benchmark program.
std::string SideCommand(const BisectSettings& s, const std::string& build, const std::string& id) {
  auto argv = SplitCommand(s.command);  // checked at start
  return JoinCommand(ExpandPlaceholders(argv.ok() ? *argv : std::vector<std::string>{},
                                        {{kArtifactPlaceholder, build}, {kImagePlaceholder, id}}));
}

// Builds `commit` in a worktree of its own into `out`; the build's output in `log_path`.
absl::Status BuildInWorktree(const BisectSettings& s, const std::string& commit, const std::string& out,
                             const std::string& log_path) {
  const std::string tree = (fs::path(s.work_dir) / "trees" / commit).string();
  std::error_code ec;
  if (fs::exists(tree)) {
    (void)GitIn(s.repo, {"worktree", "remove", "--force", tree});
    fs::remove_all(tree, ec);
  }
  (void)GitIn(s.repo, {"worktree", "prune"});
  PERFGATE_RETURN_IF_ERROR(GitIn(s.repo, {"worktree", "add", "--detach", "--force", tree, commit}).status());
  auto argv = SplitCommand(s.build);
  PERFGATE_RETURN_IF_ERROR(argv);
  ProcessOptions options;
  options.working_dir = tree;
  options.timeout_s = s.build_timeout_s;
  options.merge_stderr = true;  // the compiler's errors into the build's log
  // {out}: the older spelling of {artifact} in --build (bisect_probe.h).
  auto r = RunProcess(
      ExpandPlaceholders(*argv, {{kCommitPlaceholder, commit}, {kArtifactPlaceholder, out}, {kOutPlaceholder, out}}),
      options);
  (void)GitIn(s.repo, {"worktree", "remove", "--force", tree});
  PERFGATE_RETURN_IF_ERROR(r);
  PERFGATE_RETURN_IF_ERROR(WriteFileAtomically(log_path, r->out));
  if (r->timed_out || r->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat("the build of ", commit, " ", DescribeExit(*r, s.build_timeout_s),
                                                      " (its output: ", log_path, ")"));
  }
  return absl::OkStatus();
}

// The task's folder: its policy, argument vector, report and log.
struct TaskFiles {
  std::string dir, policy, args, report, log;
};

absl::StatusOr<TaskFiles> PrepareTask(const BisectSettings& s, const std::string& round, size_t index,
                                      const ProbeTask& t) {
  TaskFiles f;
  f.dir = (fs::path(round) / std::to_string(index)).string();
  std::error_code ec;
  fs::create_directories(f.dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot make ", f.dir, ": ", ec.message()));
  f.policy = f.dir + "/policy.yaml";
  f.args = f.dir + "/args";
  f.report = f.dir + "/report.json";
  f.log = f.dir + "/ab.log";
  // ab's tolerance is the probe's threshold, so that its rounds stop where
  // the probe's verdict is decided.
  PERFGATE_RETURN_IF_ERROR(WriteFileAtomically(
      f.policy, absl::StrFormat("version: 1\ndefaults:\n  tolerance: %.4f%%\n", 100 * t.threshold)));
  return f;
}

// A fresh folder for one round of probes.
absl::StatusOr<std::string> NewRound(const BisectSettings& s) {
  const fs::path rounds = fs::path(s.work_dir) / "rounds";
  std::error_code ec;
  fs::create_directories(rounds, ec);
  for (int n = 1; n < 1000000; ++n) {
    const fs::path dir = rounds / std::to_string(n);
    if (fs::create_directory(dir, ec)) return dir.string();
  }
  return absl::UnavailableError(absl::StrCat("cannot make a round folder in ", rounds.string()));
}

// The fixed job script of a Slurm round: task i runs the agent with the
// NUL-separated words of ROUND/i/args, which no shell parses.
constexpr char kSlurmScript[] = R"(#!/bin/sh
# One probe of `perfgate bisect`: perfgate-agent ab with the arguments stored
# for this array task, handed over by xargs -0 so that no shell parses them.
exec xargs -0 -x -a "$1/$SLURM_ARRAY_TASK_ID/args" "$2"
)";

absl::Status RunSlurmRound(const BisectSettings& s, const std::string& round, size_t tasks, std::ostream& log) {
  const std::string script = s.work_dir + "/slurm-probe.sh";
  PERFGATE_RETURN_IF_ERROR(WriteFileAtomically(script, kSlurmScript, {.mode = 0755}));
  std::vector<std::string> argv = {"sbatch", "--wait", "--parsable", absl::StrCat("--array=0-", tasks - 1),
                                   "--job-name=perfgate-bisect", "--output=" + round + "/%a/ab.log"};
  argv.insert(argv.end(), s.sbatch_args.begin(), s.sbatch_args.end());
  argv.insert(argv.end(), {script, round, s.agent});
  log << "  sbatch array of " << tasks << " probe(s), waiting\n" << std::flush;
  auto r = RunProcess(argv, ProcessOptions{});
  PERFGATE_RETURN_IF_ERROR(r);
  const std::string job(absl::StripAsciiWhitespace(r->out));
  if (job.empty()) {
    return absl::UnavailableError(absl::StrCat("sbatch ", DescribeExit(*r, 0), " without a job id"));
  }
  // A task's exit code is its gate's (1 for a regression), so sbatch --wait
  // fails whenever a probe carries the change: the reports tell.
  log << "  slurm job " << job << " done\n" << std::flush;
  return absl::OkStatus();
}

}  // namespace

v1::BisectSettings ToMessage(const BisectSettings& s) {
  v1::BisectSettings m;
  m.set_repo(s.repo);
  m.set_build(s.build);
  m.set_artifact(s.artifact);
  m.set_command(s.command);
  m.set_agent(s.agent);
  for (const std::string& a : s.ab_args) m.add_ab_args(a);
  m.set_work_dir(s.work_dir);
  m.set_case_budget_s(s.case_budget_s);
  m.set_max_rounds(s.max_rounds);
  m.set_build_timeout_s(s.build_timeout_s);
  m.set_slurm(s.slurm);
  for (const std::string& a : s.sbatch_args) m.add_sbatch_args(a);
  m.set_into_merges(s.into_merges);
  m.set_images(s.images);
  m.set_count(s.count);
  return m;
}

BisectSettings SettingsOf(const v1::BisectSettings& m) {
  BisectSettings s;
  s.repo = m.repo();
  s.build = m.build();
  s.artifact = m.artifact();
  s.command = m.command();
  s.agent = m.agent();
  s.ab_args.assign(m.ab_args().begin(), m.ab_args().end());
  s.work_dir = m.work_dir();
  s.case_budget_s = m.case_budget_s();
  s.max_rounds = m.max_rounds();
  s.build_timeout_s = m.build_timeout_s();
  s.slurm = m.slurm();
  s.sbatch_args.assign(m.sbatch_args().begin(), m.sbatch_args().end());
  s.into_merges = m.into_merges();
  s.images = m.images();
  s.count = m.count();
  return s;
}

namespace {

// CheckSettings' templates with images.
absl::Status CheckImageSettings(const BisectSettings& s) {
  if (!s.build.empty()) return absl::InvalidArgumentError("--build does not apply to images: there is nothing to build");
  if (!s.artifact.empty() && !NamesPlaceholder(s.artifact, kImagePlaceholder)) {
    return absl::InvalidArgumentError("--artifact: with images the path must name {image}");
  }
  if (s.command.empty()) return absl::InvalidArgumentError("--cmd: the benchmark program to run is required");
  PERFGATE_RETURN_IF_ERROR(SplitCommand(s.command).status());
  if (!NamesPlaceholder(s.command, kImagePlaceholder) &&
      !NamesPlaceholder(s.command, kArtifactPlaceholder)) {
    return absl::InvalidArgumentError("--cmd: with images the command must name {image} or {artifact}");
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// NAME@sha256:<64 lowercase hex digits>, the name without '@' or blanks.
bool IsImageDigest(absl::string_view image) {
  constexpr absl::string_view kMark = "@sha256:";
  const size_t at = image.find(kMark);
  if (at == absl::string_view::npos || at == 0) return false;
  const absl::string_view name = image.substr(0, at), hex = image.substr(at + kMark.size());
  const auto lower_hex = [](char c) { return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f'); };
  return std::none_of(name.begin(), name.end(), [](char c) { return c == '@' || absl::ascii_isspace(c); }) &&
         hex.size() == 64 && std::all_of(hex.begin(), hex.end(), lower_hex);
}

}  // namespace

absl::Status CheckImageDigest(const std::string& flag, const std::string& image) {
  if (image.empty() || image.front() == '-' || !IsImageDigest(image)) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " '", image, "' is not an image digest: give NAME@sha256:",
                                                   "<64 lowercase hex digits> (podman images --digests shows "
                                                   "the digest)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> MergeInside(const std::string& repo, const std::string& commit) {
  PERFGATE_ASSIGN_OR_RETURN(const std::string full, FullCommit(repo, commit));
  PERFGATE_ASSIGN_OR_RETURN(const std::string line, GitIn(repo, {"rev-list", "--parents", "-n", "1", full}));
  const std::vector<std::string> ids = absl::StrSplit(line, ' ', absl::SkipEmpty());
  std::vector<std::string> inside;
  if (ids.size() < 3) return inside;  // the commit and one parent: not a merge
  PERFGATE_ASSIGN_OR_RETURN(const std::string list,
                            GitIn(repo, {"rev-list", "--first-parent", "--reverse", ids[1] + ".." + ids[2]}));
  for (absl::string_view id : absl::StrSplit(list, '\n', absl::SkipEmpty())) inside.emplace_back(id);
  return inside;
}

namespace {

// CheckSettings' templates with commits.
absl::Status CheckCommitSettings(const BisectSettings& s) {
  if (s.build.empty() == s.artifact.empty()) {
    return absl::InvalidArgumentError(
        "give one of --build 'CMD {commit} {artifact}' and --artifact 'PATH/{commit}/...'");
  }
  if (!s.build.empty()) {
    PERFGATE_RETURN_IF_ERROR(SplitCommand(s.build).status());
    if (!NamesPlaceholder(s.build, kArtifactPlaceholder) && !NamesPlaceholder(s.build, kOutPlaceholder)) {
      return absl::InvalidArgumentError("--build: the command must name {artifact}, the folder its build fills");
    }
  }
  if (!s.artifact.empty() && !NamesPlaceholder(s.artifact, kCommitPlaceholder)) {
    return absl::InvalidArgumentError("--artifact: the path must name {commit}");
  }
  if (s.command.empty()) return absl::InvalidArgumentError("--cmd: the benchmark program to run is required");
  PERFGATE_RETURN_IF_ERROR(SplitCommand(s.command).status());
  if (!NamesPlaceholder(s.command, kArtifactPlaceholder)) {
    return absl::InvalidArgumentError("--cmd: the command must name {artifact}, the commit's build");
  }
  return absl::OkStatus();
}

}  // namespace

std::string SelfExe() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.string();
}

absl::StatusOr<std::string> ResolveAgent(const std::string& flag, const std::string& self) {
  if (flag.find('/') != std::string::npos) {
    std::error_code ec;
    const std::string path = fs::absolute(flag, ec).lexically_normal().string();
    if (!IsExecutable(path)) return absl::FailedPreconditionError(absl::StrCat("--agent ", path, " is no executable file"));
    return path;
  }
  const std::string name = flag.empty() ? "perfgate-agent" : flag;
  const std::string beside = self.empty() ? "" : (fs::path(self).parent_path() / name).string();
  if (flag.empty() && !beside.empty() && IsExecutable(beside)) return beside;
  if (std::string found = InPath(name); !found.empty()) return found;
  return absl::FailedPreconditionError(absl::StrCat(
      name, " is ", flag.empty() ? absl::StrCat("neither beside this perfgate (", beside, ") nor ") : "not ",
      "in PATH; build it (target perfgate-agent) and name it with --agent PATH"));
}

absl::StatusOr<BisectSettings> StoredSettings(const v1::BisectSettings& stored, const std::string& agent_flag) {
  BisectSettings s = SettingsOf(stored);
  if (s.command.empty() || !(s.case_budget_s > 0)) {
    return absl::InvalidArgumentError("the stored settings are incomplete: no command or case budget");
  }
  if (!agent_flag.empty()) {
    PERFGATE_ASSIGN_OR_RETURN(s.agent, ResolveAgent(agent_flag, SelfExe()));
  }
  return s;
}

absl::StatusOr<std::string> DefaultWorkDir(const BisectSettings& s) {
  if (!s.images) {
    PERFGATE_ASSIGN_OR_RETURN(const std::string git_dir, GitIn(s.repo, {"rev-parse", "--git-common-dir"}));
    return (fs::path(s.repo) / git_dir / "perfgate-bisect").lexically_normal().string();
  }
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache != nullptr && cache[0] == '/') return (fs::path(cache) / "perfgate-bisect").string();
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return (fs::path(home) / ".cache" / "perfgate-bisect").string();
  return absl::FailedPreconditionError("neither XDG_CACHE_HOME nor HOME is set: name the work folder with --work-dir");
}

absl::Status CheckSettings(BisectSettings& s) {
  PERFGATE_RETURN_IF_ERROR(s.images ? CheckImageSettings(s) : CheckCommitSettings(s));
  if (!(s.case_budget_s > 0) || s.max_rounds < 5) {
    return absl::InvalidArgumentError("--case-budget must be positive and --max-rounds at least 5");
  }
  std::error_code ec;
  s.repo = fs::absolute(s.repo, ec).lexically_normal().string();
  if (!s.images) PERFGATE_RETURN_IF_ERROR(GitIn(s.repo, {"rev-parse", "--git-dir"}).status());
  PERFGATE_ASSIGN_OR_RETURN(s.agent, ResolveAgent(s.agent, SelfExe()));
  if (s.work_dir.empty()) {
    PERFGATE_ASSIGN_OR_RETURN(s.work_dir, DefaultWorkDir(s));
  }
  s.work_dir = fs::absolute(s.work_dir, ec).lexically_normal().string();
  fs::create_directories(s.work_dir, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("--work-dir ", s.work_dir, ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<CommitRange> PlanRange(const std::string& repo, const std::string& good, const std::string& bad) {
  CommitRange r;
  PERFGATE_ASSIGN_OR_RETURN(r.good, FullCommit(repo, good));
  PERFGATE_ASSIGN_OR_RETURN(r.bad, FullCommit(repo, bad));
  if (!GitIn(repo, {"merge-base", "--is-ancestor", r.good, r.bad}).ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the good commit ", good, " is not an ancestor of the bad one ", bad));
  }
  PERFGATE_ASSIGN_OR_RETURN(const std::string list,
                            GitIn(repo, {"rev-list", "--first-parent", "--reverse", r.good + ".." + r.bad}));
  std::istringstream in(list);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) r.commits.push_back(line);
  }
  if (r.commits.empty() || r.commits.back() != r.bad) {
    return absl::InvalidArgumentError(
        absl::StrCat("no first-parent commit leads from ", good, " to ", bad, ": nothing to bisect"));
  }
  return r;
}

absl::StatusOr<std::string> BuildOf(const BisectSettings& s, const std::string& commit, std::ostream& log) {
  if (s.images && s.artifact.empty()) return commit;
  if (!s.artifact.empty()) {
    const std::string path = ExpandPlaceholders(s.artifact, {{kCommitPlaceholder, commit}, {kImagePlaceholder, commit}});
    if (!fs::exists(path)) {
      return absl::NotFoundError(absl::StrCat("no artifact for ", commit.substr(0, 12), " at ", path));
    }
    return path;
  }
  const fs::path base = fs::path(s.work_dir) / "builds" / commit;
  const std::string out = (base / "out").string();
  if (fs::exists(base / "built")) return out;
  std::error_code ec;
  fs::remove_all(base, ec);
  fs::create_directories(out, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot make ", out, ": ", ec.message()));
  log << "  building " << commit.substr(0, 12) << "\n" << std::flush;
  PERFGATE_RETURN_IF_ERROR(BuildInWorktree(s, commit, out, (base / "build.log").string()));
  PERFGATE_RETURN_IF_ERROR(WriteFileAtomically((base / "built").string(), commit + "\n"));
  return out;
}

std::vector<std::string> ProbeArgv(const BisectSettings& s, const ProbeTask& t, const std::string& policy,
                                   const std::string& report) {
  std::vector<std::string> argv = {s.agent, "ab", "--offline", "--no-confirm",
                                   "--baseline-cmd", SideCommand(s, t.good_build, t.good),
                                   "--candidate-cmd", SideCommand(s, t.build, t.commit),
                                   "--policy", policy, "--json", report,
                                   "--max-rounds", std::to_string(s.max_rounds * t.attempt),
                                   "--case-budget", absl::StrCat(s.case_budget_s * t.attempt),
                                   "--branch", "bisect", "--commit", t.commit};
  if (s.count) argv.insert(argv.end(), {"--count", "instructions", "--count-only"});
  argv.insert(argv.end(), s.ab_args.begin(), s.ab_args.end());
  return argv;
}

ProbeMeasurement ReadProbeReport(const std::string& report, const ProbeTask& t) {
  ProbeMeasurement m;
  m.benchmark = t.benchmark;
  m.metric = t.metric;
  const std::string text = ReadText(report);
  if (text.empty()) {
    m.note = absl::StrCat("no report at ", report);
    return m;
  }
  const absl::StatusOr<gate::GateReport> read = wire::GateReportFromJson(text, report);
  if (!read.ok()) {
    m.note = std::string(read.status().message());
    return m;
  }
  const gate::MetricVerdict* best = nullptr;
  for (const gate::MetricVerdict& v : read->result.verdicts) {
    if (!std::isfinite(v.change)) continue;
    if (!t.benchmark.empty() && (v.benchmark != t.benchmark || v.metric != t.metric)) continue;
    if (best == nullptr || v.change > best->change) best = &v;
  }
  if (best == nullptr) {
    m.note = t.benchmark.empty() ? "the report has no measured case"
                                 : absl::StrCat("the report lacks ", t.benchmark, " ", t.metric);
    return m;
  }
  const gate::MetricVerdict& v = *best;
  m.ok = std::isfinite(v.change_ci_low) && std::isfinite(v.change_ci_high);
  m.change = v.change;
  m.ci_low = m.ok ? v.change_ci_low : 0;
  m.ci_high = m.ok ? v.change_ci_high : 0;
  m.p_value = std::isfinite(v.p_value) ? v.p_value : 1.0;
  m.benchmark = v.benchmark;
  m.metric = v.metric;
  m.note = m.ok ? v.note : "the report has no interval for the case";
  for (const gate::CaseRounds& c : read->case_rounds) {
    if (c.benchmark == m.benchmark) m.rounds = c.rounds;
  }
  return m;
}

absl::StatusOr<std::vector<ProbeMeasurement>> MeasureProbes(const BisectSettings& s,
                                                            const std::vector<ProbeTask>& tasks, std::ostream& log) {
  PERFGATE_ASSIGN_OR_RETURN(const std::string round, NewRound(s));
  std::vector<TaskFiles> files;
  for (size_t i = 0; i < tasks.size(); ++i) {
    PERFGATE_ASSIGN_OR_RETURN(TaskFiles f, PrepareTask(s, round, i, tasks[i]));
    std::vector<std::string> argv = ProbeArgv(s, tasks[i], f.policy, f.report);
    std::string args;
    for (size_t w = 1; w < argv.size(); ++w) args += argv[w] + '\0';
    PERFGATE_RETURN_IF_ERROR(WriteFileAtomically(f.args, args));
    if (!s.slurm) {
      log << "  measuring " << tasks[i].commit.substr(0, 12) << " against good (attempt " << tasks[i].attempt
          << ", log " << f.log << ")\n" << std::flush;
      // The agent's output and its sides' stderr go to the probe's log.
      ProcessOptions options;
      options.merge_stderr = true;
      auto r = RunProcess(argv, options);
      PERFGATE_RETURN_IF_ERROR(r);
      PERFGATE_RETURN_IF_ERROR(WriteFileAtomically(f.log, r->out));
    }
    files.push_back(std::move(f));
  }
  if (s.slurm) PERFGATE_RETURN_IF_ERROR(RunSlurmRound(s, round, tasks.size(), log));
  std::vector<ProbeMeasurement> out;
  for (size_t i = 0; i < tasks.size(); ++i) {
    ProbeMeasurement m = ReadProbeReport(files[i].report, tasks[i]);
    if (!m.ok && m.note.rfind("no report", 0) == 0) {
      const std::string text = ReadText(files[i].log);
      const std::string tail = text.substr(text.size() > 300 ? text.size() - 300 : 0);
      m.note = absl::StrCat("ab wrote no report; its output ends: ", absl::StripAsciiWhitespace(tail));
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace perfgate::cli
