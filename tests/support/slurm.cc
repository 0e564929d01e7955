#include "tests/support/slurm.h"

#include <dirent.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

extern char** environ;

namespace perfgate::testing {
namespace {

constexpr auto kSlurmReadyTimeout = std::chrono::seconds(30);
constexpr auto kCommandTimeout = std::chrono::seconds(20);
constexpr auto kDrainTimeout = std::chrono::seconds(20);
// How often readiness and the end of jobs are re-checked: both are states of
// slurmctld that nothing announces to the test.
constexpr auto kSlurmPollInterval = std::chrono::milliseconds(100);
constexpr const char* kSlurmInstallHint = "install slurm-wlm and munge (scripts/install-deps.sh does)";

// Variables an outer Slurm allocation (a CI job that is itself a Slurm job)
// or a user's shell may set: srun and sbatch would take them as options or
// attach to that allocation instead of this cluster.
constexpr const char* kForeignPrefixes[] = {"SLURM_", "SRUN_",   "SBATCH_", "SALLOC_",
                                            "SINFO_", "SQUEUE_", "SCANCEL_"};

void ScrubSlurmEnvironment() {
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    for (const char* prefix : kForeignPrefixes) {
      if (absl::StartsWith(entry, prefix)) {
        names.emplace_back(entry.substr(0, entry.find('=')));
        break;
      }
    }
  }
  for (const std::string& name : names) unsetenv(name.c_str());
}

absl::Status WriteFile(const std::string& path, const std::string& content, mode_t mode) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  if (chmod(path.c_str(), mode) != 0)
    return absl::InternalError(absl::StrCat("cannot chmod ", path));
  return absl::OkStatus();
}

// A fresh munge key: munged refuses keys shorter than 32 bytes; 1024 is what
// mungekey writes.
absl::StatusOr<std::string> RandomKey() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  std::string key(1024, '\0');
  if (!in.read(key.data(), static_cast<std::streamsize>(key.size()))) {
    return absl::InternalError("cannot read /dev/urandom");
  }
  return key;
}

// This machine as slurmd sees it ("NodeName=vm CPUs=2 ... RealMemory=24105"),
// so that the configured node never claims more CPUs or memory than slurmd
// finds, which would drain it.
absl::StatusOr<std::string> DetectedNodeLine() {
  auto r = RunCommand({"slurmd", "-C"}, {}, kCommandTimeout);
  if (!r.ok()) return r.status();
  for (absl::string_view line : absl::StrSplit(r->output, '\n')) {
    if (r->exit_code == 0 && absl::StartsWith(line, "NodeName=")) return std::string(line);
  }
  return absl::InternalError(
      absl::StrCat("slurmd -C (exit ", r->exit_code, ") printed no NodeName line:\n", r->output));
}

// Kills every process whose environment holds entry (this cluster's
// SLURM_CONF=...): only this cluster's daemons, job steps and tasks have it.
void KillProcessesWithEnv(const std::string& entry) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return;
  const pid_t self = getpid();
  while (const dirent* d = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(d->d_name, &pid) || pid == self) continue;
    std::ifstream in(absl::StrCat("/proc/", pid, "/environ"), std::ios::binary);
    std::string var;
    while (std::getline(in, var, '\0')) {
      if (var == entry) {
        kill(pid, SIGKILL);
        break;
      }
    }
  }
  closedir(proc);
}

}  // namespace

absl::Status SlurmCluster::CanRun() {
  if (geteuid() != 0) {
    return absl::FailedPreconditionError(
        "not root: slurmd must run as root to start job steps; run the slurm tests as root");
  }
  for (const char* tool :
       {"munged", "slurmctld", "slurmd", "srun", "sbatch", "sinfo", "squeue", "scancel"}) {
    if (!FindInPath(tool)) {
      return absl::FailedPreconditionError(absl::StrCat(tool, " is not in PATH; ", kSlurmInstallHint));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SlurmCluster>> SlurmCluster::Start() {
  if (absl::Status s = CanRun(); !s.ok()) return s;
  ScrubSlurmEnvironment();
  auto dir = TempDir::Create("perfgate-slurm-");
  if (!dir.ok()) return dir.status();
  std::unique_ptr<SlurmCluster> cluster(new SlurmCluster(std::move(*dir)));
  if (absl::Status s = cluster->Launch(); !s.ok()) {
    const std::string logs = cluster->LogTails();
    cluster->Stop();
    return absl::Status(s.code(), absl::StrCat(s.message(), "\n", logs));
  }
  return cluster;
}

absl::Status SlurmCluster::Launch() {
  const std::string conf = dir_.Join("slurm.conf");
  env_["SLURM_CONF"] = conf;
  for (const char* sub : {"state", "spool"}) {
    if (mkdir(dir_.Join(sub).c_str(), 0700) != 0) {
      return absl::InternalError(absl::StrCat("cannot create ", dir_.Join(sub)));
    }
  }

  // A munged of our own, on a socket and key of our own: jobs of this cluster
  // authenticate with it alone.
  const std::string socket = dir_.Join("munge.socket");
  auto key = RandomKey();
  if (!key.ok()) return key.status();
  if (absl::Status s = WriteFile(dir_.Join("munge.key"), *key, 0400); !s.ok()) return s;
  auto munged = ChildProcess::Start(
      {"munged", "--foreground", "--force", "--socket=" + socket,
       "--key-file=" + dir_.Join("munge.key"), "--pid-file=" + dir_.Join("munged.pid"),
       "--log-file=" + dir_.Join("munged.log"), "--seed-file=" + dir_.Join("munged.seed")},
      dir_.Join("munged.out"));
  if (!munged.ok()) return munged.status();
  munged_ = std::move(*munged);
  if (!munged_->WaitForLine("Created socket", kSlurmReadyTimeout)) {
    return absl::InternalError("munged did not create its socket");
  }

  auto node = DetectedNodeLine();
  if (!node.ok()) return node.status();
  const std::string host(
      absl::StripPrefix(absl::string_view(*node).substr(0, node->find(' ')), "NodeName="));
  auto ctld_port = FreeTcpPort();
  if (!ctld_port.ok()) return ctld_port.status();
  auto slurmd_port = FreeTcpPort();
  if (!slurmd_port.ok()) return slurmd_port.status();
  if (*slurmd_port == *ctld_port) return absl::UnavailableError("the same free port came twice");

  // The name and address are given together so that the host name need not
  // resolve; the cluster's name is unique to this process.
  const std::vector<std::string> lines = {
      absl::StrCat("ClusterName=perfgate", getpid()),
      absl::StrCat("SlurmctldHost=", host, "(127.0.0.1)"),
      absl::StrCat("SlurmctldPort=", *ctld_port),
      absl::StrCat("SlurmdPort=", *slurmd_port),
      "AuthType=auth/munge",
      "CredType=cred/munge",
      "AuthInfo=socket=" + socket,
      "MpiDefault=none",
      "MailProg=/bin/true",
      "ProctrackType=proctrack/linuxproc",
      "TaskPlugin=task/none",
      "JobAcctGatherType=jobacct_gather/none",
      "SelectType=select/cons_tres",
      "StateSaveLocation=" + dir_.Join("state"),
      "SlurmdSpoolDir=" + dir_.Join("spool"),
      "SlurmctldPidFile=" + dir_.Join("slurmctld.pid"),
      "SlurmdPidFile=" + dir_.Join("slurmd.pid"),
      "SlurmUser=root",
      "ReturnToService=2",
      *node + " NodeAddr=127.0.0.1 State=UNKNOWN",
      absl::StrCat("PartitionName=debug Nodes=", host, " Default=YES MaxTime=INFINITE State=UP"),
  };
  const std::string config = absl::StrCat(absl::StrJoin(lines, "\n"), "\n");
  if (absl::Status s = WriteFile(conf, config, 0644); !s.ok()) return s;

  // In the foreground (-D) the daemons stay children of the test: they log to
  // the captured output and die with the test process should it crash.
  ProcessOptions opts;
  opts.env = env_;
  opts.working_dir = dir_.path();
  auto ctld = ChildProcess::Start({"slurmctld", "-D"}, dir_.Join("slurmctld.out"), opts);
  if (!ctld.ok()) return ctld.status();
  slurmctld_ = std::move(*ctld);
  auto slurmd = ChildProcess::Start({"slurmd", "-D"}, dir_.Join("slurmd.out"), opts);
  if (!slurmd.ok()) return slurmd.status();
  slurmd_ = std::move(*slurmd);
  return WaitUntilIdle();
}

absl::Status SlurmCluster::WaitUntilIdle() {
  const auto deadline = std::chrono::steady_clock::now() + kSlurmReadyTimeout;
  std::string last;
  for (;;) {
    if (!slurmctld_->Running()) return absl::InternalError("slurmctld exited");
    if (!slurmd_->Running()) return absl::InternalError("slurmd exited");
    auto r = Run({"sinfo", "-h", "-o", "%T"}, kCommandTimeout);
    if (!r.ok()) return r.status();
    last = std::string(absl::StripAsciiWhitespace(r->output));
    if (r->exit_code == 0 && last == "idle") return absl::OkStatus();
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the node was not idle within ", kSlurmReadyTimeout.count(), " s; sinfo said: ", last));
    }
    std::this_thread::sleep_for(kSlurmPollInterval);
  }
}

SlurmCluster::~SlurmCluster() { Stop(); }

void SlurmCluster::Stop() {
  if (slurmctld_ != nullptr && slurmctld_->Running()) {
    // Jobs first, while slurmd can still end their steps cleanly.
    const passwd* pw = getpwuid(geteuid());
    (void)Run({"scancel", absl::StrCat("--user=", pw != nullptr ? pw->pw_name : "root")},
              kCommandTimeout);
    const auto deadline = std::chrono::steady_clock::now() + kDrainTimeout;
    for (;;) {
      auto r = Run({"squeue", "-h", "-o", "%i"}, kCommandTimeout);
      if (!r.ok() || r->exit_code != 0 || absl::StripAsciiWhitespace(r->output).empty()) break;
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(kSlurmPollInterval);
    }
  }
  if (slurmd_ != nullptr) slurmd_->Kill();
  if (slurmctld_ != nullptr) slurmctld_->Kill();
  if (auto conf = env_.find("SLURM_CONF"); conf != env_.end()) {
    KillProcessesWithEnv("SLURM_CONF=" + conf->second);
  }
  if (munged_ != nullptr) munged_->Kill();
}

absl::StatusOr<CommandResult> SlurmCluster::Run(const std::vector<std::string>& argv,
                                                std::chrono::milliseconds timeout,
                                                const std::string& working_dir) const {
  ProcessOptions opts;
  opts.env = env_;
  opts.working_dir = working_dir.empty() ? dir_.path() : working_dir;
  return RunCommand(argv, opts, timeout);
}

std::string SlurmCluster::LogTails(int max_lines) const {
  std::string out;
  for (const char* name : {"munged.out", "slurmctld.out", "slurmd.out"}) {
    absl::StrAppend(&out, "--- ", name, ":\n", FileTail(dir_.Join(name), max_lines), "\n");
  }
  return out;
}

}  // namespace perfgate::testing
