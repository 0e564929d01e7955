// `perfgate bisect` (docs/bisect.md): the loop from a regression, or a
// good..bad range, to the commit that carries it. Every probe and the
// outcome are stored through the coordinator's HTTP API as they happen, and
// the next step is computed from the stored probes alone (bisect.h), so
// `--resume ID` goes on where an interrupted bisection stood and `--status
// ID` shows it.
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/bisect.h"
#include "cli/bisect_probe.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/bisection_state.h"
#include "common/status_macros.h"

namespace perfgate::cli {
namespace {

using Json = nlohmann::json;

double Num(const Json& v) { return v.is_number() ? v.get<double>() : 0; }

// The state of a stored bisection as the coordinator sent it; nullopt when
// it names none.
std::optional<BisectionState> StateOf(const Json& b) { return ParseBisectionState(b.value("state", "")); }

// A stored bisection as the loop needs it.
struct Job {
  int64_t id = 0;
  BisectPlan plan;
  BisectSettings settings;
  std::string benchmark, metric;
  std::vector<Probe> probes;
};

Probe ProbeOf(const Json& p) {
  Probe probe;
  probe.commit = p.value("commit", "");
  probe.attempt = p.value("attempt", 1u);
  ProbeMeasurement& m = probe.measurement;
  m.ok = ParseProbeVerdict(p.value("verdict", "")) != ProbeVerdict::kFailed && p["change"].is_number() &&
         p["ci"][0].is_number();
  m.change = Num(p["change"]);
  m.ci_low = Num(p["ci"][0]);
  m.ci_high = Num(p["ci"][1]);
  m.p_value = Num(p["p_value"]);
  m.rounds = p.value("rounds", 0u);
  m.note = p.value("note", "");
  return probe;
}

// `agent_flag`: --agent, which a resumed bisection runs instead of the stored agent.
absl::StatusOr<Job> JobOf(const Json& b, const std::string& agent_flag) {
  Job job;
  job.id = b.value("id", int64_t{0});
  job.plan.good = b.value("good", "");
  job.plan.commits = b.value("commits", std::vector<std::string>{});
  const Json& s = b["settings"];
  PERFGATE_ASSIGN_OR_RETURN(job.settings, StoredSettings(s, agent_flag));
  job.plan.endpoint_threshold = s.value("endpoint_threshold", 0.05);
  job.plan.max_attempts = s.value("max_attempts", 3u);
  job.plan.probes_per_round = s.value("probes_per_round", 1u);
  job.benchmark = b.value("benchmark", "");
  job.metric = b.value("metric", "");
  for (const Json& p : b["probes"]) job.probes.push_back(ProbeOf(p));
  return job;
}

void PrintBisection(const Json& b) {
  std::cout << "bisection " << b["id"] << (b["regression_id"].is_number() ? absl::StrCat(" of regression ", b["regression_id"].get<int64_t>()) : "")
            << ": " << b.value("state", "") << "\n  good " << ShortId(b.value("good", "")) << ", bad "
            << ShortId(b.value("bad", "")) << ", " << b["commits"].size() << " first-parent commits; case "
            << b.value("benchmark", "") << " " << b.value("metric", "") << "; regression "
            << SignedPercent(b["regression_size"]) << "\n";
  std::cout << absl::StrFormat("  %-4s %-12s %-7s %-9s %-28s %-9s %s\n", "step", "commit", "attempt", "verdict",
                               "change [95 % interval]", "threshold", "rounds");
  int step = 0;
  for (const Json& p : b["probes"]) {
    const std::string change = p["change"].is_number()
                                   ? absl::StrFormat("%s [%s, %s]", SignedPercent(p["change"]), SignedPercent(p["ci"][0]),
                                                     SignedPercent(p["ci"][1]))
                                   : p.value("note", "");
    std::cout << absl::StrFormat("  %-4d %-12s %-7d %-9s %-28s %-9s %d\n", ++step, ShortId(p.value("commit", "")),
                                 p.value("attempt", 0), p.value("verdict", ""), change,
                                 SignedPercent(p["threshold"]), p.value("rounds", 0));
  }
  if (!b.value("summary", "").empty()) std::cout << "  " << b.value("summary", "") << "\n";
}

// What a new bisection starts from: the regression's range and case, or the flags'.
absl::StatusOr<Json> NewJob(const Config& c) {
  const client::HttpClientOptions o = HttpOptions(c);
  std::string good = c.good, bad = c.bad, benchmark = c.bisect_case, metric = c.bisect_metric;
  double endpoint = c.bisect_min_change_pct / 100;
  if (c.regression_id != 0) {
    PERFGATE_ASSIGN_OR_RETURN(const Json r, client::HttpGet(o, absl::StrCat("/api/v1/regressions/", c.regression_id)));
    good = r.value("good_commit", "");
    bad = r.value("bad_commit", "");
    if (good.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("regression ", c.regression_id,
                                                        " has no good commit; bisect with --good and --bad"));
    }
    if (benchmark.empty()) {
      benchmark = r.value("benchmark", "");
      metric = r.value("metric", "");
    }
    if (Num(r["change"]) > 0) endpoint = Num(r["change"]) / 2;
  }
  // Counted probes judge instructions: of the regressed case, of --case, or
  // of the case that grew most at bad (a timed --metric is refused).
  if (c.bisect.count) metric = "instructions";
  CommitRange range{c.good_image, c.bad_image, {c.bad_image}};  // an upgrade: nothing between
  if (!c.bisect.images) {
    PERFGATE_ASSIGN_OR_RETURN(range, PlanRange(c.bisect.repo, good, bad));
  }
  Json settings = ToJson(c.bisect);
  settings["endpoint_threshold"] = endpoint;
  settings["max_attempts"] = c.bisect_attempts;
  settings["probes_per_round"] = c.bisect_per_round;
  Json body = {{"good", range.good}, {"bad", range.bad}, {"commits", range.commits}, {"settings", settings},
               {"benchmark", benchmark}, {"metric", metric}, {"by", c.by}};
  if (c.regression_id != 0) body["regression_id"] = c.regression_id;
  return client::HttpPost(o, "/api/v1/bisections", body);
}

// The tasks of one round; a commit whose build fails gets a failed probe
// instead. Without the good endpoint's build nothing can be measured: an error.
absl::StatusOr<std::vector<ProbeTask>> TasksOf(const Job& job, const BisectStep& step, std::vector<Json>* failed) {
  std::vector<ProbeTask> tasks;
  auto good = BuildOf(job.settings, job.plan.good, std::cout);
  if (!good.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("the good endpoint cannot be built: ", good.status().message()));
  }
  for (size_t i = 0; i < step.commits.size(); ++i) {
    ProbeTask t{step.commits[i], step.attempts[i], *good, "", step.threshold, job.benchmark, job.metric, job.plan.good};
    auto build = BuildOf(job.settings, t.commit, std::cout);
    if (!build.ok()) {
      failed->push_back({{"commit", t.commit}, {"attempt", t.attempt}, {"verdict", ToString(ProbeVerdict::kFailed)},
                         {"threshold", t.threshold}, {"note", std::string(build.status().message())}});
      continue;
    }
    t.build = *build;
    tasks.push_back(std::move(t));
  }
  return tasks;
}

Json ProbeJson(const ProbeTask& t, const ProbeMeasurement& m) {
  Json p = {{"commit", t.commit},       {"attempt", t.attempt},   {"verdict", ToString(Judge(m, t.threshold))},
            {"threshold", t.threshold}, {"rounds", m.rounds},     {"note", m.note},
            {"benchmark", m.benchmark}, {"metric", m.metric}};
  if (m.ok) {
    p["change"] = m.change;
    p["ci"] = {m.ci_low, m.ci_high};
    p["p_value"] = m.p_value;
  }
  return p;
}

// Measures one round and stores its probes; the bisection as it now stands.
absl::StatusOr<Json> MeasureRound(const Config& c, Job& job, const BisectStep& step) {
  const client::HttpClientOptions o = HttpOptions(c);
  std::vector<Json> probes;
  PERFGATE_ASSIGN_OR_RETURN(const std::vector<ProbeTask> tasks, TasksOf(job, step, &probes));
  if (!tasks.empty()) {
    PERFGATE_ASSIGN_OR_RETURN(const std::vector<ProbeMeasurement> ms, MeasureProbes(job.settings, tasks, std::cout));
    for (size_t i = 0; i < tasks.size(); ++i) probes.push_back(ProbeJson(tasks[i], ms[i]));
  }
  Json stored;
  for (const Json& p : probes) {
    PERFGATE_ASSIGN_OR_RETURN(stored, client::HttpPost(o, absl::StrCat("/api/v1/bisections/", job.id, "/probes"), p));
    std::cout << absl::StrFormat("  %s (attempt %d): %s", ShortId(p["commit"]), p["attempt"].get<int>(),
                                 p["verdict"].get<std::string>())
              << (p.contains("change") ? absl::StrCat(" ", SignedPercent(p["change"]), " [", SignedPercent(p["ci"][0]), ", ",
                                                      SignedPercent(p["ci"][1]), "], carries from ",
                                                      SignedPercent(p["threshold"]))
                                       : absl::StrCat(": ", p["note"].get<std::string>()))
              << "\n" << std::flush;
  }
  return stored;
}

Json OutcomeJson(const BisectStep& step) {
  Json out = {{"summary", step.summary}};
  if (step.regression_size > 0) out["regression_size"] = step.regression_size;
  switch (step.kind) {
    case BisectStep::Kind::kCulprit: {
      const ProbeMeasurement& m = step.culprit_measurement;
      out["state"] = ToString(BisectionState::kCulprit);
      out["culprit"] = step.culprit;
      out["change"] = m.change;
      out["ci"] = {m.ci_low, m.ci_high};
      out["triage_note"] = absl::StrFormat("culprit %s (%+.1f %% [%+.1f, %+.1f])", ShortId(step.culprit),
                                           100 * m.change, 100 * m.ci_low, 100 * m.ci_high);
      break;
    }
    case BisectStep::Kind::kRange:
      out["state"] = ToString(BisectionState::kRange);
      out["range_good"] = step.range_good;
      out["range_bad"] = step.range_bad;
      break;
    default:
      out["state"] = ToString(BisectionState::kNoCulprit);
  }
  return out;
}

int ExitOf(const Json& b) {
  const std::optional<BisectionState> state = StateOf(b);
  if (!state || *state == BisectionState::kRunning) return kExitError;
  return *state == BisectionState::kRange ? kExitInconclusive : kExitPass;
}

// The next step; with --into-merges, a culprit merge's inside is read from
// git (each time: the plan holds no more than the stored job) and searched.
absl::StatusOr<BisectStep> StepOf(Job& job) {
  BisectStep step = NextStep(job.plan, job.probes);
  if (!job.settings.into_merges || step.kind != BisectStep::Kind::kCulprit || !step.merge.empty()) return step;
  PERFGATE_ASSIGN_OR_RETURN(job.plan.merge_insides[step.culprit], MergeInside(job.settings.repo, step.culprit));
  return NextStep(job.plan, job.probes);
}

// Measures round after round until the bisection ends; stored all along.
int Bisect(const Config& c, Json b) {
  const client::HttpClientOptions o = HttpOptions(c);
  while (StateOf(b) == BisectionState::kRunning) {
    auto job = JobOf(b, c.bisect.agent);
    if (!job.ok()) return HttpError(job.status(), "bisect");
    auto next_step = StepOf(*job);
    if (!next_step.ok()) return HttpError(next_step.status(), "bisect");
    const BisectStep& step = *next_step;
    if (step.kind != BisectStep::Kind::kMeasure) {
      auto done = client::HttpPost(o, absl::StrCat("/api/v1/bisections/", job->id, "/finish"), OutcomeJson(step));
      if (!done.ok()) return HttpError(done.status(), "bisect: storing the outcome");
      b = *done;
      break;
    }
    std::cout << "round: " << step.commits.size() << " probe(s), carrying from "
              << absl::StrFormat("%+.1f %%", 100 * step.threshold) << "\n" << std::flush;
    auto next = MeasureRound(c, *job, step);
    if (!next.ok()) {
      std::cerr << "perfgate: bisect: " << next.status().message() << "\n"
                << "perfgate: the probes so far are stored: perfgate bisect --resume " << job->id << "\n";
      return kExitError;
    }
    b = *next;
  }
  std::cout << "\n";
  PrintBisection(b);
  return ExitOf(b);
}

}  // namespace

int BisectCommand(const Config& c) {
  const client::HttpClientOptions o = HttpOptions(c);
  if (c.bisect_status != 0 || c.bisect_resume != 0) {
    const int64_t id = c.bisect_status != 0 ? c.bisect_status : c.bisect_resume;
    auto b = client::HttpGet(o, absl::StrCat("/api/v1/bisections/", id));
    if (!b.ok()) return HttpError(b.status(), "bisect");
    if (c.bisect_status != 0) {
      PrintBisection(*b);
      return ExitOf(*b) == kExitError ? kExitPass : ExitOf(*b);
    }
    std::cout << "resuming bisection " << id << " from its " << (*b)["probes"].size() << " stored probe(s)\n";
    return Bisect(c, *b);
  }
  auto b = NewJob(c);
  if (!b.ok()) return HttpError(b.status(), "bisect");
  std::cout << "bisection " << (*b)["id"] << ": " << (*b)["commits"].size() << " first-parent commits from "
            << ShortId((*b)["good"].get<std::string>()) << " (good) to " << ShortId((*b)["bad"].get<std::string>())
            << " (bad); resume with: perfgate bisect --resume " << (*b)["id"] << "\n" << std::flush;
  return Bisect(c, *b);
}

}  // namespace perfgate::cli
