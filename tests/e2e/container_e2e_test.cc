// perfgate's images, built and run for real with podman (label `container`):
// the agent and coordinator images built by deploy/docker/build.sh on a
// Debian base pushed to a registry on loopback (so that every image has a
// real digest), the coordinator image serving a test PostgreSQL, the agent
// run by digest through deploy/docker/run-agent.sh, and `perfgate-agent ab`
// between images. One process for all tests (add_test, not discovery):
// the images are built once, in the environment below.
//
// podman runs here as root with runc, cgroupfs and the host's network
// (docs/containers.md, "Testing"); the base comes from
// scripts/container-base.sh, cached between runs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "gate/report.h"
#include "tests/support/gate_reports.h"
#include "tests/support/podman.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate {
namespace {

using testing::Bin;
using testing::ChildProcess;
using testing::CommandResult;
using testing::Exec;
using testing::RunCommand;
using testing::TempDir;

// One compute-bound case keeps every run short.
constexpr char kFilter[] = "sgemm{k=512,m=512,*";
// Three times the time: far beyond what a shared 2-core machine moves one
// side of a round against the other (both its blocks run on one CPU), and
// a third of the candidate's time a tenfold slowdown took (33 s to 17).
constexpr char kSlowdown[] = "kernels/sgemm{k=512*=200";

std::string SourceDir() { return PERFGATE_SOURCE_DIR; }

std::string CacheDir() {
  const char* dir = std::getenv("PERFGATE_CACHE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/var/cache/perfgate-ci";
}

// The value after "KEY: " on the first line of `text` that has it; "" when none.
std::string ValueAfter(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find(key + ": ");
    if (at != std::string::npos) return line.substr(at + key.size() + 2);
  }
  return "";
}

// Pushes `tag` to the loopback registry; its digest, or "" after a failure.
std::string Push(const std::string& tag, const TempDir& dir) {
  const std::string file = dir.Join("digest");
  CommandResult r = Exec({"podman", "push", "-q", "--tls-verify=false", "--digestfile", file, tag});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto digest = testing::ReadFile(file);
  return digest.ok() ? *digest : "";
}

// What every test shares: the images, PostgreSQL and the coordinator run
// from its image.
struct Shared {
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<ChildProcess> registry;
  std::string registry_address;  // 127.0.0.1:PORT
  std::string agent_image, slow_agent_image, coordinator_image;  // REPO@sha256:...
  std::vector<std::string> image_ids;  // of the images built here, removed at the end
  std::unique_ptr<testing::PostgresServer> postgres;
  std::unique_ptr<ChildProcess> coordinator;
  std::string coordinator_address;
  std::string coordinator_name;  // the container's
  std::string token_file;
};
Shared* shared = nullptr;

class ContainerEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (geteuid() != 0) return;  // each test skips, saying why
    shared = new Shared;
    auto dir = testing::PodmanDir("perfgate-container-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    shared->dir = std::move(*dir);
    StartRegistry();
    if (HasFailure()) return;
    BuildImages();
    if (HasFailure()) return;
    StartCoordinator();
  }

  void TearDown() override {
    if (shared == nullptr) return;
    if (shared->coordinator) {
      (void)RunCommand({"podman", "stop", "-t", "5", shared->coordinator_name});
      shared->coordinator->Kill();
    }
    shared->postgres.reset();
    // The images of this run go; the base stays in podman's store and its
    // blobs in the registry's cached storage.
    for (const std::string& id : shared->image_ids) (void)RunCommand({"podman", "rmi", "-f", id});
    (void)RunCommand({"podman", "untag", "localhost/perfgate-ci/debian:bookworm",
                      shared->registry_address + "/perfgate-ci/debian:bookworm"});
    for (const char* repo : {"perfgate-agent", "perfgate-agent-slow", "perfgate-coordinator"}) {
      testing::RemoveTree(absl::StrCat(RegistryStorage(), "/docker/registry/v2/repositories/", repo)).IgnoreError();
    }
    if (shared->registry) {
      shared->registry->Kill();
      // Blobs no manifest names any more (the images above) are deleted.
      (void)RunCommand({"docker-registry", "garbage-collect", shared->dir->Join("registry.yml")});
    }
    delete shared;
    shared = nullptr;
  }

 private:
  static bool HasFailure() { return ::testing::Test::HasFailure(); }
  static std::string RegistryStorage() { return CacheDir() + "/registry"; }

  // A registry on loopback whose storage is kept in the cache, so that the
  // base's blobs are pushed once per machine.
  void StartRegistry() {
    auto port = testing::FreeTcpPort();
    ASSERT_TRUE(port.ok()) << port.status();
    shared->registry_address = absl::StrCat("127.0.0.1:", *port);
    const std::string config = shared->dir->Join("registry.yml");
    std::ofstream(config) << "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: " << RegistryStorage()
                          << "\n  delete:\n    enabled: true\nhttp:\n  addr: " << shared->registry_address << "\n";
    auto registry = ChildProcess::Start({"docker-registry", "serve", config}, shared->dir->Join("registry.log"));
    ASSERT_TRUE(registry.ok()) << registry.status();
    shared->registry = std::move(*registry);
    ASSERT_TRUE(shared->registry->WaitForLine("listening on", std::chrono::seconds(30)))
        << shared->registry->OutputTail();
  }

  void BuildImages() {
    const std::string reg = shared->registry_address;
    CommandResult base = Exec({SourceDir() + "/scripts/container-base.sh"}, std::chrono::minutes(5));
    ASSERT_EQ(base.exit_code, 0) << base.output;
    const std::string base_tag = reg + "/perfgate-ci/debian:bookworm";
    ASSERT_EQ(Exec({"podman", "tag", "localhost/perfgate-ci/debian:bookworm", base_tag}).exit_code, 0);
    const std::string base_image = reg + "/perfgate-ci/debian@" + Push(base_tag, *shared->dir);

    const std::string build = SourceDir() + "/deploy/docker/build.sh";
    for (const char* image : {"agent", "coordinator"}) {
      const std::string tag = absl::StrCat(reg, "/perfgate-", image, ":test");
      CommandResult r = Exec({build, "--base", base_image, image, Bin("."), tag, "--tls-verify=false",
                              "--iidfile", IdFile()});
      ASSERT_EQ(r.exit_code, 0) << r.output;
      KeepId();
      const std::string digest = Push(tag, *shared->dir);
      ASSERT_FALSE(digest.empty());
      (std::string(image) == "agent" ? shared->agent_image : shared->coordinator_image) =
          absl::StrCat(reg, "/perfgate-", image, "@", digest);
    }
    // The same agent with a slowdown injected: another image, another digest.
    const std::string slow_dir = shared->dir->Join("slow");
    ASSERT_EQ(::mkdir(slow_dir.c_str(), 0700), 0);
    std::ofstream(slow_dir + "/Containerfile") << "FROM " << shared->agent_image
                                               << "\nENV PERFGATE_INJECT_SLOWDOWN=" << kSlowdown << "\n";
    const std::string slow_tag = reg + "/perfgate-agent-slow:test";
    CommandResult slow = Exec({"podman", "build", "--tls-verify=false", "--iidfile", IdFile(), "-t", slow_tag,
                               slow_dir});
    ASSERT_EQ(slow.exit_code, 0) << slow.output;
    KeepId();
    shared->slow_agent_image = reg + "/perfgate-agent-slow@" + Push(slow_tag, *shared->dir);
  }

  static std::string IdFile() { return shared->dir->Join("image-id"); }
  static void KeepId() {
    auto id = testing::ReadFile(IdFile());
    if (id.ok()) shared->image_ids.push_back(*id);
  }

  // PostgreSQL on the host, the coordinator from its image by digest.
  void StartCoordinator() {
    auto postgres = testing::PostgresServer::Start();
    ASSERT_TRUE(postgres.ok()) << postgres.status();
    shared->postgres = std::move(*postgres);
    shared->token_file = shared->dir->Join("token");
    std::ofstream(shared->token_file) << "container-test-token\n";
    ::chmod(shared->token_file.c_str(), 0644);  // the coordinator runs as nobody
    auto port = testing::FreeTcpPort();
    ASSERT_TRUE(port.ok()) << port.status();
    shared->coordinator_address = absl::StrCat("127.0.0.1:", *port);
    shared->coordinator_name = absl::StrCat("perfgate-coordinator-test-", *port);
    auto coordinator = ChildProcess::Start(
        {"podman", "run", "--rm", "--network=host", "--name", shared->coordinator_name, "--tls-verify=false",
         "-v", shared->token_file + ":/run/secrets/token:ro", shared->coordinator_image, "--database",
         shared->postgres->ConnInfo(), "serve", "--listen", shared->coordinator_address, "--token-file",
         "/run/secrets/token"},
        shared->dir->Join("coordinator.log"));
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    shared->coordinator = std::move(*coordinator);
    ASSERT_TRUE(shared->coordinator->WaitForLine("listening on", std::chrono::minutes(2)))
        << shared->coordinator->OutputTail();
  }
};

const ::testing::Environment* const kEnvironment = ::testing::AddGlobalTestEnvironment(new ContainerEnvironment);

class Containers : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "podman runs here as root only (docs/containers.md, \"Testing\")";
    ASSERT_NE(shared, nullptr);
  }

  // `perfgate-agent run` from `image` by digest through the launcher; the
  // run id it printed ("" when none).
  std::string RunAgent(const std::string& image, const std::string& branch, const std::string& commit) {
    CommandResult r = Exec({SourceDir() + "/deploy/docker/run-agent.sh", "--tls-verify=false",
                           "--volume=" + shared->token_file + ":/run/secrets/token:ro", image, "run",
                           "--coordinator", shared->coordinator_address, "--token-file", "/run/secrets/token",
                           "--suite", "kernels", "--filter", kFilter, "--set", "k=512", "--min-time", "0.3",
                           "--timeout", "20", "--branch", branch, "--commit", commit, "--trigger", "ci"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const std::string id = ValueAfter(r.output, "run_id");
    return id.substr(0, id.find(' '));
  }

  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {Bin("cli/perfgate"), "--coordinator", shared->coordinator_address, "--token-file",
                            shared->token_file});
    return Exec(args);
  }

  static std::string DigestOf(const std::string& image) { return image.substr(image.rfind('@') + 1); }
};

TEST_F(Containers, CoordinatorImageMigratesAndAnswersItsHealthCheck) {
  // `serve` listens only once every migration is applied.
  EXPECT_NE(shared->coordinator->Output().find("listening on"), std::string::npos);
  CommandResult health = Cli({"--timeout", "10", "health"});
  EXPECT_EQ(health.exit_code, 0) << health.output;
  EXPECT_NE(health.output.find("SERVING"), std::string::npos) << health.output;
  // The same check compose.yaml runs, from inside the container.
  CommandResult inside = Exec({"podman", "exec", shared->coordinator_name, "/usr/local/bin/perfgate", "--coordinator",
                              shared->coordinator_address, "--timeout", "3", "health"});
  EXPECT_EQ(inside.exit_code, 0) << inside.output;
}

TEST_F(Containers, AgentRunByDigestRecordsExactlyThatDigest) {
  const std::string run = RunAgent(shared->agent_image, "main", "c0ffee01");
  ASSERT_FALSE(run.empty());
  CommandResult shown = Cli({"run", run});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_EQ(ValueAfter(shown.output, "image_digest"), DigestOf(shared->agent_image)) << shown.output;
}

TEST_F(Containers, ContainerStartedWithoutTheDigestSaysUnpinned) {
  CommandResult probe = Exec({"podman", "run", "--rm", "--network=host", "--tls-verify=false", shared->agent_image,
                             "probe"});
  ASSERT_EQ(probe.exit_code, 0) << probe.output;
  EXPECT_EQ(ValueAfter(probe.output, "image_digest"), "unpinned") << probe.output;
  // A digest that is not one stops the agent before it measures.
  CommandResult bad = Exec({"podman", "run", "--rm", "--network=host", "--env", "PERFGATE_IMAGE_DIGEST=latest",
                           shared->agent_image, "probe"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("PERFGATE_IMAGE_DIGEST 'latest' is not a digest"), std::string::npos) << bad.output;
}

TEST_F(Containers, HistoryGateWithMatchImageDigestUsesOnlyRunsOfThatImage) {
  const std::string same = RunAgent(shared->agent_image, "main", "c0ffee02");
  const std::string other = RunAgent(shared->slow_agent_image, "main", "c0ffee03");
  const std::string candidate = RunAgent(shared->agent_image, "topic", "c0ffee04");
  ASSERT_FALSE(same.empty() || other.empty() || candidate.empty());
  const std::string same_digest = DigestOf(shared->agent_image), other_digest = DigestOf(shared->slow_agent_image);
  auto baselines = [&](const std::string& match) {
    const std::string policy = shared->dir->Join("policy-" + match + ".yaml");
    std::ofstream(policy) << "version: 1\ndefaults:\n  tolerance: 25%\n  inconclusive: pass\n  match: [" << match
                          << "]\n";
    const std::string json = shared->dir->Join("gate-" + match + ".json");
    CommandResult gate = Cli({"gate", "--run", candidate, "--baseline-branch", "main", "--policy", policy,
                              "--json", json});
    EXPECT_NE(gate.exit_code, 2) << gate.output;
    auto report = testing::ReadGateReport(json);
    std::set<std::string> ids;
    EXPECT_TRUE(report.ok()) << report.status();
    if (!report.ok()) return ids;
    ids.insert(report->baseline_run_ids.begin(), report->baseline_run_ids.end());
    // The report names the images on both sides.
    EXPECT_EQ(report->candidate_image_digest, same_digest);
    const std::set<std::string> digests(report->baseline_image_digests.begin(), report->baseline_image_digests.end());
    EXPECT_EQ(digests.count(same_digest), 1u);
    EXPECT_EQ(digests.count(other_digest), ids.count(other))
        << "baseline runs " << absl::StrJoin(report->baseline_run_ids, ", ") << "; baseline images "
        << absl::StrJoin(report->baseline_image_digests, ", ");
    return ids;
  };
  // Matching on the image: the other image's run is left out.
  std::set<std::string> by_image = baselines("image_digest");
  EXPECT_EQ(by_image.count(same), 1u);
  EXPECT_EQ(by_image.count(other), 0u);
  // Matching on the CPU alone, both images' runs are baselines.
  std::set<std::string> by_cpu = baselines("cpu_model");
  EXPECT_EQ(by_cpu.count(same), 1u);
  EXPECT_EQ(by_cpu.count(other), 1u);
}

TEST_F(Containers, ComposeStartsTheCoordinatorImageBesidePinnedPostgres) {
  // PostgreSQL's image cannot be pulled here: podman-compose prints the
  // podman commands it would run (it creates the volume and network even so).
  const std::string project = absl::StrCat("perfgate-dryrun-", getpid());
  const std::string compose = SourceDir() + "/deploy/docker/compose.yaml";
  testing::ProcessOptions options;
  options.env["COORDINATOR_IMAGE"] = shared->coordinator_image;
  auto r = RunCommand({"podman-compose", "--dry-run", "-p", project, "-f", compose, "up", "-d"}, options);
  (void)RunCommand({"podman", "volume", "rm", "-f", project + "_perfgate-db"});
  (void)RunCommand({"podman", "network", "rm", "-f", project + "_default"});
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << r->output;
  ASSERT_EQ(r->exit_code, 0) << r->output;
  auto bases = testing::ReadFile(SourceDir() + "/deploy/docker/bases.env");
  ASSERT_TRUE(bases.ok()) << bases.status();
  const std::string postgres = ValueAfter(absl::StrReplaceAll(*bases, {{"=", ": "}}), "POSTGRES_IMAGE");
  ASSERT_NE(postgres.find("@sha256:"), std::string::npos) << postgres;
  for (const std::string& part :
       {postgres, shared->coordinator_image, project + "_perfgate-db:/var/lib/postgresql/data",
        std::string("/run/secrets/token:ro"), std::string("--token-file /run/secrets/token"),
        std::string("POSTGRES_PASSWORD_FILE=/run/secrets/db_password"), std::string("/usr/local/bin/perfgate"),
        std::string("health --healthcheck-interval"), std::string("pg_isready")}) {
    EXPECT_NE(r->output.find(part), std::string::npos) << part;
  }
}

class ImageAb : public Containers {
 protected:
  // `perfgate-agent ab` between two images, both sides sent to the coordinator.
  CommandResult Ab(const std::string& baseline, const std::string& candidate) {
    const std::string policy = shared->dir->Join("ab-policy.yaml");
    std::ofstream(policy) << "version: 1\ndefaults:\n  tolerance: 10%\n  inconclusive: pass\n";
    return Exec({Bin("agent/perfgate-agent"), "ab", "--baseline-image", baseline, "--candidate-image", candidate,
                "--container-arg=--tls-verify=false", "--suite", "kernels", "--filter", kFilter, "--set", "k=512",
                "--block-time", "0.2", "--case-budget", "60", "--timeout", "20", "--policy", policy, "--json",
                json(), "--coordinator", shared->coordinator_address, "--token-file", shared->token_file,
                "--branch", "topic", "--commit", "c0ffee05"},
               std::chrono::minutes(4));
  }
  gate::GateReport Report() {
    auto report = testing::ReadGateReport(json());
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *std::move(report) : gate::GateReport{};
  }
  std::string json() const { return shared->dir->Join("ab.json"); }
};

TEST_F(ImageAb, SameImageOnBothSidesPasses) {
  CommandResult r = Ab(shared->agent_image, shared->agent_image);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const gate::MetricVerdict& v : Report().result.verdicts) {
    EXPECT_NE(v.verdict, gate::Verdict::kRegression) << v.benchmark << " " << v.metric;
    EXPECT_NE(v.verdict, gate::Verdict::kMissing) << v.benchmark << " " << v.metric;
  }
}

TEST_F(ImageAb, ImageWithASlowerAgentFailsAndEachSideRecordsItsDigest) {
  CommandResult r = Ab(shared->agent_image, shared->slow_agent_image);
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const gate::GateReport report = Report();
  unsigned regressions = 0;
  for (const gate::MetricVerdict& v : report.result.verdicts) {
    if (v.verdict == gate::Verdict::kRegression) ++regressions;
  }
  EXPECT_GT(regressions, 0u) << report.result.summary;
  EXPECT_EQ(report.candidate_image_digest, DigestOf(shared->slow_agent_image));
  EXPECT_EQ(report.baseline_image_digests, std::vector<std::string>{DigestOf(shared->agent_image)});
  EXPECT_NE(r.output.find("; image " + DigestOf(shared->slow_agent_image) + " vs baseline image " +
                          DigestOf(shared->agent_image)),
            std::string::npos);
  const std::string baseline = ValueAfter(r.output, "baseline run_id");
  const std::string candidate = ValueAfter(r.output, "candidate run_id");
  ASSERT_FALSE(baseline.empty() || candidate.empty()) << r.output;
  EXPECT_EQ(ValueAfter(Cli({"run", baseline}).output, "image_digest"), DigestOf(shared->agent_image));
  EXPECT_EQ(ValueAfter(Cli({"run", candidate}).output, "image_digest"), DigestOf(shared->slow_agent_image));
}

}  // namespace
}  // namespace perfgate
