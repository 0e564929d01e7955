#include "agent/ab.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/result_file.h"
#include "common/stats.h"

extern char** environ;

namespace perfgate::agent {

absl::StatusOr<std::vector<std::string>> SplitCommand(const std::string& command) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  enum class Quote { kNone, kSingle, kDouble } quote = Quote::kNone;
  for (size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    switch (quote) {
      case Quote::kSingle:
        if (c == '\'') {
          quote = Quote::kNone;
        } else {
          word += c;
        }
        continue;
      case Quote::kDouble:
        if (c == '"') {
          quote = Quote::kNone;
        } else if (c == '\\' && i + 1 < command.size() &&
                   std::strchr("\"\\$`", command[i + 1]) != nullptr) {
          word += command[++i];
        } else {
          word += c;
        }
        continue;
      case Quote::kNone:
        break;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      quote = Quote::kSingle;
    } else if (c == '"') {
      quote = Quote::kDouble;
    } else if (c == '\\') {
      if (i + 1 == command.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("command '", command, "' ends in a backslash; escape it as \\\\"));
      }
      word += command[++i];
    } else {
      word += c;
    }
  }
  if (quote != Quote::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat("command '", command, "' has an unterminated ",
                     quote == Quote::kSingle ? "single" : "double", " quote"));
  }
  if (in_word) out.push_back(std::move(word));
  if (out.empty()) return absl::InvalidArgumentError("empty command: name the perfgate-agent build to run");
  return out;
}

const char* ToString(AbRole role) { return role == AbRole::kBaseline ? "baseline" : "candidate"; }

std::vector<AbRole> BlockOrder(unsigned round) {
  if (round % 2 == 0) return {AbRole::kBaseline, AbRole::kCandidate};
  return {AbRole::kCandidate, AbRole::kBaseline};
}

namespace {

CaseResult FailedCase(std::string reason) {
  CaseResult r;
  r.status = CaseStatus::kFailed;
  r.reason = std::move(reason);
  return r;
}

// Runs argv with stdout captured and stderr passed through; the exit status
// (128 + signal when killed) and what it printed on stdout.
absl::StatusOr<std::pair<int, std::string>> Capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start '", argv[0], "': ", std::strerror(rc)));
  }
  std::string out;
  char buf[65536];
  while (true) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return std::make_pair(code, std::move(out));
}

// Reason a side's block did not yield samples, prefixed with the side.
std::string SideReason(AbRole role, const std::string& reason) {
  return absl::StrCat(ToString(role), " side: ", reason);
}

std::string Percent(double change) { return absl::StrFormat("%+.2f %%", change * 100); }

}  // namespace

CommandSide::CommandSide(std::vector<std::string> argv, std::vector<std::string> extra_args)
    : argv_(std::move(argv)), extra_args_(std::move(extra_args)) {}

CaseResult CommandSide::Measure(const std::string& key, unsigned samples) {
  std::vector<std::string> argv = argv_;
  for (const std::string& a : {std::string("sample"), std::string("--case"), key,
                               std::string("--samples"), std::to_string(samples)}) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  const std::string shown = absl::StrJoin(argv_, " ");
  auto ran = Capture(argv);
  if (!ran.ok()) return FailedCase(std::string(ran.status().message()));
  if (ran->first != 0) {
    return FailedCase(absl::StrCat("'", shown, " sample' exited with ", ran->first,
                                        " (its messages are above)"));
  }
  auto parsed = ParseResultJson(ran->second, absl::StrCat("output of '", shown, " sample'"));
  if (!parsed.ok()) return FailedCase(std::string(parsed.status().message()));
  for (CaseResult& c : parsed->cases) {
    if (c.benchmark.Key() == key) return std::move(c);
  }
  return FailedCase(absl::StrCat("'", shown, " sample' printed no result for ", key));
}

namespace {

bool SameMetrics(const std::vector<MetricSpec>& a, const std::vector<MetricSpec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name) return false;
  }
  return true;
}

}  // namespace

CasePair MeasurePair(const AbCase& c, Side& baseline, Side& candidate, const AbOptions& options) {
  CasePair pair;
  pair.key = c.id.Key();
  for (CaseResult* r : {&pair.baseline, &pair.candidate}) {
    r->benchmark = c.id;
    r->metrics = c.metrics;
    r->status = CaseStatus::kOk;
  }
  for (unsigned round = 0; round < options.rounds; ++round) {
    for (AbRole role : BlockOrder(round)) {
      const bool is_base = role == AbRole::kBaseline;
      CaseResult block = (is_base ? baseline : candidate).Measure(pair.key, options.block_samples);
      CaseResult& pooled = is_base ? pair.baseline : pair.candidate;
      if (block.status != CaseStatus::kOk || !SameMetrics(block.metrics, c.metrics)) {
        const CaseStatus status =
            block.status == CaseStatus::kSkipped ? CaseStatus::kSkipped : CaseStatus::kFailed;
        const std::string reason =
            block.status == CaseStatus::kOk
                ? SideReason(role, "its blocks reported different metrics")
                : SideReason(role, absl::StrCat(ToString(block.status),
                                                block.reason.empty() ? "" : ": ", block.reason));
        for (CaseResult* r : {&pair.baseline, &pair.candidate}) {
          r->samples.clear();
          r->status = status;
          r->reason = reason;
        }
        return pair;
      }
      // A slowdown injected into one side says so in every block's reason.
      if (pooled.reason.empty() || pooled.reason == "sample_count") pooled.reason = block.reason;
      pooled.samples.insert(pooled.samples.end(), block.samples.begin(), block.samples.end());
    }
  }
  for (CaseResult* r : {&pair.baseline, &pair.candidate}) {
    std::vector<double> first_metric;
    for (const Sample& s : r->samples) {
      if (!s.throttled && !s.values.empty()) first_metric.push_back(s.values[0]);
    }
    r->noise = stats::Noise(first_metric);
  }
  return pair;
}

namespace {

gate::GateResult Decide(const std::vector<CasePair>& pairs, const gate::Policy& policy,
                        const std::string& sku, unsigned rounds) {
  std::vector<CaseResult> base, cand;
  for (const CasePair& p : pairs) {
    // A case that cannot run here says nothing about either build.
    if (p.candidate.status == CaseStatus::kSkipped) continue;
    base.push_back(p.baseline);
    cand.push_back(p.candidate);
  }
  gate::GateInput input;
  input.mode = gate::Mode::kAb;
  input.sku = sku;
  // Each round gave each side one block, from one process.
  input.candidate = gate::RunDataFromCases("candidate", cand, rounds);
  input.baselines.push_back(gate::RunDataFromCases("baseline", base, rounds));
  return gate::EvaluateGate(input, policy);
}

bool Suspect(const gate::MetricVerdict& v) {
  return v.gating && (v.verdict == gate::Verdict::kRegression || v.verdict == gate::Verdict::kBelowFloor);
}

}  // namespace

AbResult RunAb(const std::vector<AbCase>& cases, Side& baseline, Side& candidate,
               const gate::Policy& policy, const std::string& sku, const AbOptions& options,
               std::ostream& log) {
  AbResult result;
  auto measure = [&](const AbCase& c, const char* what) {
    log << "  " << c.id.Key() << ": " << what << options.rounds << " rounds of " << options.block_samples
        << " samples per side\n" << std::flush;
    CasePair p = MeasurePair(c, baseline, candidate, options);
    if (p.candidate.status != CaseStatus::kOk) {
      log << "    " << ToString(p.candidate.status) << ": " << p.candidate.reason << "\n" << std::flush;
    }
    return p;
  };
  for (const AbCase& c : cases) result.pairs.push_back(measure(c, ""));
  gate::GateResult first = Decide(result.pairs, policy, sku, options.rounds);
  if (!options.confirm) {
    result.gate = std::move(first);
    return result;
  }
  std::set<std::string> suspects;
  for (const gate::MetricVerdict& v : first.verdicts) {
    if (Suspect(v)) suspects.insert(v.benchmark);
  }
  if (suspects.empty()) {
    result.gate = std::move(first);
    return result;
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    if (suspects.count(result.pairs[i].key) != 0) result.pairs[i] = measure(cases[i], "confirming with ");
  }
  result.gate = Decide(result.pairs, policy, sku, options.rounds);
  // The first verdict of each re-measured metric, for the notes.
  std::map<std::pair<std::string, std::string>, const gate::MetricVerdict*> before;
  for (const gate::MetricVerdict& v : first.verdicts) before[{v.benchmark, v.metric}] = &v;
  std::set<std::string> held;
  for (gate::MetricVerdict& v : result.gate.verdicts) {
    if (suspects.count(v.benchmark) == 0) continue;
    const auto it = before.find({v.benchmark, v.metric});
    const std::string earlier =
        it == before.end()
            ? std::string("absent")
            : absl::StrCat(gate::ToString(it->second->verdict), " at ", Percent(it->second->change));
    if (v.gating && gate::Fails(v.verdict)) {
      held.insert(v.benchmark);
      v.note = absl::StrCat("confirmed by a second interleaved measurement (first: ", earlier, "); ", v.note);
    } else {
      v.note = absl::StrCat("judged on a second interleaved measurement (first: ", earlier, "); ", v.note);
    }
  }
  for (const std::string& key : suspects) {
    (held.count(key) != 0 ? result.confirmed : result.unconfirmed).push_back(key);
  }
  absl::StrAppend(&result.gate.summary, " Re-measured before blocking: ", result.confirmed.size(),
                  " confirmed", result.confirmed.empty() ? "" : absl::StrCat(" (", absl::StrJoin(result.confirmed, ", "), ")"),
                  ", ", result.unconfirmed.size(), " not confirmed",
                  result.unconfirmed.empty() ? "" : absl::StrCat(" (", absl::StrJoin(result.unconfirmed, ", "), ")"),
                  ".");
  return result;
}

}  // namespace perfgate::agent
