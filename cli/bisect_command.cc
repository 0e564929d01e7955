// `perfgate bisect` (docs/bisect.md): the loop from a regression, or a
// good..bad range, to the commit that carries it. Every probe and the
// outcome are stored through the coordinator's HTTP API as they happen
// (the messages of proto/perfgate/v1/bisection.proto), and the next step is
// computed from the stored probes alone (bisect.h), so `--resume ID` goes on
// where an interrupted bisection stood and `--status ID` shows it.
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
#include "perfgate/v1/bisection.pb.h"
#include "perfgate/v1/regression.pb.h"
#include "wire/api_convert.h"

namespace perfgate::cli {
namespace {

// A measured fraction as a signed percent ("+1.2 %").
std::string Pct(double v) { return SignedPercent(true, v); }

// A probe's change and its interval: "+1.2 % [+0.4 %, +2.0 %]".
std::string ChangeAndInterval(const v1::BisectionProbe& p) {
  return absl::StrFormat("%s [%s, %s]", Pct(p.change()), Pct(p.ci().low()), Pct(p.ci().high()));
}

// The state of a stored bisection as the coordinator sent it; nullopt when
// it names none.
std::optional<BisectionState> StateOf(const v1::Bisection& b) { return wire::FromProto(b.state()); }

// A probe's verdict by its name ("carries"), "?" for none.
std::string VerdictName(v1::ProbeVerdict v) {
  const std::optional<ProbeVerdict> verdict = wire::FromProto(v);
  return verdict ? std::string(ToString(*verdict)) : "?";
}

// A stored bisection as the loop needs it.
struct Job {
  int64_t id = 0;
  BisectPlan plan;
  BisectSettings settings;
  std::string benchmark, metric;
  std::vector<Probe> probes;
};

Probe ProbeOf(const v1::BisectionProbe& p) {
  Probe probe;
  probe.commit = p.commit();
  probe.attempt = p.attempt();
  ProbeMeasurement& m = probe.measurement;
  m.ok = p.verdict() != v1::PROBE_VERDICT_FAILED && p.has_change() && p.has_ci();
  m.change = p.has_change() ? p.change() : 0;
  m.ci_low = p.ci().low();
  m.ci_high = p.ci().high();
  m.p_value = p.has_p_value() ? p.p_value() : 0;
  m.rounds = p.rounds();
  m.note = p.note();
  return probe;
}

// `agent_flag`: --agent, which a resumed bisection runs instead of the stored agent.
absl::StatusOr<Job> JobOf(const v1::Bisection& b, const std::string& agent_flag) {
  Job job;
  job.id = b.id();
  job.plan.good = b.good();
  job.plan.commits.assign(b.commits().begin(), b.commits().end());
  const v1::BisectSettings& s = b.settings();
  PERFGATE_ASSIGN_OR_RETURN(job.settings, StoredSettings(s, agent_flag));
  // Each stored with the job since bisections were first stored; 0 (unset) is the flag's default.
  job.plan.endpoint_threshold = s.endpoint_threshold() > 0 ? s.endpoint_threshold() : 0.05;
  job.plan.max_attempts = s.max_attempts() > 0 ? s.max_attempts() : 3;
  job.plan.probes_per_round = s.probes_per_round() > 0 ? s.probes_per_round() : 1;
  job.benchmark = b.benchmark();
  job.metric = b.metric();
  for (const v1::BisectionProbe& p : b.probes()) job.probes.push_back(ProbeOf(p));
  return job;
}

void PrintBisection(const v1::Bisection& b) {
  const std::optional<BisectionState> state = StateOf(b);
  std::cout << "bisection " << b.id() << (b.regression_id() > 0 ? absl::StrCat(" of regression ", b.regression_id()) : "")
            << ": " << (state ? ToString(*state) : "?") << "\n  good " << ShortId(b.good()) << ", bad "
            << ShortId(b.bad()) << ", " << b.commits_size() << " first-parent commits; case " << b.benchmark() << " "
            << b.metric() << "; regression " << SignedPercent(b.has_regression_size(), b.regression_size()) << "\n";
  std::cout << absl::StrFormat("  %-4s %-12s %-7s %-9s %-28s %-9s %s\n", "step", "commit", "attempt", "verdict",
                               "change [95 % interval]", "threshold", "rounds");
  int step = 0;
  for (const v1::BisectionProbe& p : b.probes()) {
    const std::string change = p.has_change() && p.has_ci() ? ChangeAndInterval(p) : p.note();
    std::cout << absl::StrFormat("  %-4d %-12s %-7d %-9s %-28s %-9s %d\n", ++step, ShortId(p.commit()), p.attempt(),
                                 VerdictName(p.verdict()), change, Pct(p.threshold()), p.rounds());
  }
  if (!b.summary().empty()) std::cout << "  " << b.summary() << "\n";
}

// What a new bisection starts from: the regression's range and case, or the flags'.
absl::StatusOr<v1::Bisection> NewJob(const Config& c) {
  const client::HttpClientOptions o = HttpOptions(c);
  std::string good = c.good, bad = c.bad, benchmark = c.bisect_case, metric = c.bisect_metric;
  double endpoint = c.bisect_min_change_pct / 100;
  if (c.regression_id != 0) {
    v1::Regression r;
    PERFGATE_RETURN_IF_ERROR(client::HttpGetMessage(o, absl::StrCat("/api/v1/regressions/", c.regression_id), &r));
    good = r.good_commit();
    bad = r.bad_commit();
    if (good.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("regression ", c.regression_id,
                                                        " has no good commit; bisect with --good and --bad"));
    }
    if (benchmark.empty()) {
      benchmark = r.benchmark();
      metric = r.metric();
    }
    if (r.has_change() && r.change() > 0) endpoint = r.change() / 2;
  }
  // Counted probes judge instructions: of the regressed case, of --case, or
  // of the case that grew most at bad (a timed --metric is refused).
  if (c.bisect.count) metric = "instructions";
  CommitRange range{c.good_image, c.bad_image, {c.bad_image}};  // an upgrade: nothing between
  if (!c.bisect.images) {
    PERFGATE_ASSIGN_OR_RETURN(range, PlanRange(c.bisect.repo, good, bad));
  }
  v1::CreateBisectionRequest body;
  *body.mutable_settings() = ToMessage(c.bisect);
  body.mutable_settings()->set_endpoint_threshold(endpoint);
  body.mutable_settings()->set_max_attempts(c.bisect_attempts);
  body.mutable_settings()->set_probes_per_round(c.bisect_per_round);
  body.set_good(range.good);
  body.set_bad(range.bad);
  for (const std::string& commit : range.commits) body.add_commits(commit);
  body.set_benchmark(benchmark);
  body.set_metric(metric);
  body.set_by(c.by);
  body.set_regression_id(c.regression_id);
  v1::Bisection stored;
  PERFGATE_RETURN_IF_ERROR(client::HttpPostMessage(o, "/api/v1/bisections", body, &stored));
  return stored;
}

// The tasks of one round; a commit whose build fails gets a failed probe
// instead. Without the good endpoint's build nothing can be measured: an error.
absl::StatusOr<std::vector<ProbeTask>> TasksOf(const Job& job, const BisectStep& step,
                                                std::vector<v1::BisectionProbe>* failed) {
  std::vector<ProbeTask> tasks;
  auto good = BuildOf(job.settings, job.plan.good, std::cout);
  if (!good.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("the good endpoint cannot be built: ", good.status().message()));
  }
  for (size_t i = 0; i < step.commits.size(); ++i) {
    ProbeTask t{step.commits[i], step.attempts[i], *good, "", step.threshold, job.benchmark, job.metric, job.plan.good};
    auto build = BuildOf(job.settings, t.commit, std::cout);
    if (!build.ok()) {
      v1::BisectionProbe& p = failed->emplace_back();
      p.set_commit(t.commit);
      p.set_attempt(t.attempt);
      p.set_verdict(v1::PROBE_VERDICT_FAILED);
      p.set_threshold(t.threshold);
      p.set_note(std::string(build.status().message()));
      continue;
    }
    t.build = *build;
    tasks.push_back(std::move(t));
  }
  return tasks;
}

v1::BisectionProbe ProbeMessage(const ProbeTask& t, const ProbeMeasurement& m) {
  v1::BisectionProbe p;
  p.set_commit(t.commit);
  p.set_attempt(t.attempt);
  p.set_verdict(wire::ToProto(Judge(m, t.threshold)));
  p.set_threshold(t.threshold);
  p.set_rounds(m.rounds);
  p.set_note(m.note);
  p.set_benchmark(m.benchmark);
  p.set_metric(m.metric);
  if (m.ok) {
    p.set_change(m.change);
    p.mutable_ci()->set_low(m.ci_low);
    p.mutable_ci()->set_high(m.ci_high);
    p.set_p_value(m.p_value);
  }
  return p;
}

// Measures one round and stores its probes; the bisection as it now stands.
absl::StatusOr<v1::Bisection> MeasureRound(const Config& c, Job& job, const BisectStep& step) {
  const client::HttpClientOptions o = HttpOptions(c);
  std::vector<v1::BisectionProbe> probes;
  PERFGATE_ASSIGN_OR_RETURN(const std::vector<ProbeTask> tasks, TasksOf(job, step, &probes));
  if (!tasks.empty()) {
    PERFGATE_ASSIGN_OR_RETURN(const std::vector<ProbeMeasurement> ms, MeasureProbes(job.settings, tasks, std::cout));
    for (size_t i = 0; i < tasks.size(); ++i) probes.push_back(ProbeMessage(tasks[i], ms[i]));
  }
  v1::Bisection stored;
  for (const v1::BisectionProbe& p : probes) {
    PERFGATE_RETURN_IF_ERROR(
        client::HttpPostMessage(o, absl::StrCat("/api/v1/bisections/", job.id, "/probes"), p, &stored));
    std::cout << absl::StrFormat("  %s (attempt %d): %s", ShortId(p.commit()), p.attempt(), VerdictName(p.verdict()))
              << (p.has_change() ? absl::StrCat(" ", ChangeAndInterval(p), ", carries from ", Pct(p.threshold()))
                                 : absl::StrCat(": ", p.note()))
              << "\n" << std::flush;
  }
  return stored;
}

v1::BisectionOutcome OutcomeMessage(const BisectStep& step) {
  v1::BisectionOutcome out;
  out.set_summary(step.summary);
  if (step.regression_size > 0) out.set_regression_size(step.regression_size);
  switch (step.kind) {
    case BisectStep::Kind::kCulprit: {
      const ProbeMeasurement& m = step.culprit_measurement;
      out.set_state(v1::BISECTION_STATE_CULPRIT);
      out.set_culprit(step.culprit);
      out.set_change(m.change);
      out.mutable_ci()->set_low(m.ci_low);
      out.mutable_ci()->set_high(m.ci_high);
      out.set_triage_note(absl::StrFormat("culprit %s (%+.1f %% [%+.1f, %+.1f])", ShortId(step.culprit),
                                          100 * m.change, 100 * m.ci_low, 100 * m.ci_high));
      break;
    }
    case BisectStep::Kind::kRange:
      out.set_state(v1::BISECTION_STATE_RANGE);
      out.set_range_good(step.range_good);
      out.set_range_bad(step.range_bad);
      break;
    default:
      out.set_state(v1::BISECTION_STATE_NO_CULPRIT);
  }
  return out;
}

int ExitOf(const v1::Bisection& b) {
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
int Bisect(const Config& c, v1::Bisection b) {
  const client::HttpClientOptions o = HttpOptions(c);
  while (StateOf(b) == BisectionState::kRunning) {
    auto job = JobOf(b, c.bisect.agent);
    if (!job.ok()) return HttpError(job.status(), "bisect");
    auto next_step = StepOf(*job);
    if (!next_step.ok()) return HttpError(next_step.status(), "bisect");
    const BisectStep& step = *next_step;
    if (step.kind != BisectStep::Kind::kMeasure) {
      v1::Bisection done;
      const absl::Status stored =
          client::HttpPostMessage(o, absl::StrCat("/api/v1/bisections/", job->id, "/finish"), OutcomeMessage(step), &done);
      if (!stored.ok()) return HttpError(stored, "bisect: storing the outcome");
      b = std::move(done);
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
    b = std::move(*next);
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
    v1::Bisection b;
    if (absl::Status s = client::HttpGetMessage(o, absl::StrCat("/api/v1/bisections/", id), &b); !s.ok()) {
      return HttpError(s, "bisect");
    }
    if (c.bisect_status != 0) {
      PrintBisection(b);
      return ExitOf(b) == kExitError ? kExitPass : ExitOf(b);
    }
    std::cout << "resuming bisection " << id << " from its " << b.probes_size() << " stored probe(s)\n";
    return Bisect(c, std::move(b));
  }
  auto b = NewJob(c);
  if (!b.ok()) return HttpError(b.status(), "bisect");
  std::cout << "bisection " << b->id() << ": " << b->commits_size() << " first-parent commits from "
            << ShortId(b->good()) << " (good) to " << ShortId(b->bad())
            << " (bad); resume with: perfgate bisect --resume " << b->id() << "\n" << std::flush;
  return Bisect(c, std::move(*b));
}

}  // namespace perfgate::cli
