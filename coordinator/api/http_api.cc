// The /api/v1/ routes of the HTTP server: each checks its caller (auth.h),
// reads its parameters, asks the store (or the queries beside it), and
// answers a message of proto/perfgate/v1 in the API's JSON; errors are
// v1::ErrorResponse ({"error": "..."}) with the HTTP status of the status
// code (401 for no or a bad credential, 403 for a role that may not).
#include <httplib.h>

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "common/row_limits.h"
#include "common/status_macros.h"
#include "common/time_text.h"
#include "coordinator/api/api_messages.h"
#include "coordinator/domain/bisection_messages.h"
#include "coordinator/api/error_mapping.h"
#include "coordinator/domain/evaluate.h"
#include "coordinator/domain/fleet.h"
#include "coordinator/api/http_server.h"
#include "coordinator/domain/metrics.h"
#include "coordinator/domain/notification_events.h"
#include "coordinator/api/query_messages.h"
#include "coordinator/domain/regression_messages.h"
#include "coordinator/api/report_messages.h"
#include "wire/api_json.h"

namespace perfgate::coordinator {
namespace {

// With the charset named, cpp-httplib leaves answers uncompressed: its
// on-the-fly brotli costs more time than it saves on loopback or a LAN
// (a 50 kB series took 200 ms to compress on the CI machine).
constexpr char kJson[] = "application/json; charset=utf-8";

void ReplyError(httplib::Response& res, const absl::Status& status, const char* what) {
  res.status = ToHttpStatus(status, what);
  if (status.code() == absl::StatusCode::kUnauthenticated) res.set_header("WWW-Authenticate", "Bearer");
  v1::ErrorResponse error;
  error.set_error(std::string(status.message()));
  res.set_content(wire::ToApiJson(error), kJson);
}

// An answer's text: its message in the API's JSON (wire/api_json.h).
std::string Text(const google::protobuf::Message& body) { return wire::ToApiJson(body); }

template <typename T>
void Reply(httplib::Response& res, const absl::StatusOr<T>& body, const char* what) {
  if (body.ok()) {
    res.set_content(Text(*body), kJson);
    return;
  }
  ReplyError(res, body.status(), what);
}

// A read route whose handler returns the JSON (or an error) to answer
// with, once the caller may read.
template <typename F>
void Get(httplib::Server& server, const Authenticator& auth, const std::string& pattern, const char* what,
         F handler) {
  const Authenticator* a = &auth;
  server.Get(pattern, [a, handler, what](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    if (auto s = AuthorizeRequest(*a, req, Action::kRead); !s.ok()) return ReplyError(res, s, what);
    Reply(res, handler(req), what);
  });
}

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : std::string();
}

// The `limit` parameter: the listing's fallback when absent (common/row_limits.h).
absl::StatusOr<uint32_t> Limit(const httplib::Request& req, const RowLimit& rows) {
  const std::string text = Param(req, "limit");
  if (text.empty()) return rows.fallback;
  uint32_t v = 0;
  if (!absl::SimpleAtoi(text, &v) || v == 0 || v > rows.most) {
    return absl::InvalidArgumentError(absl::StrCat("limit: '", text, "' is not a number from 1 to ", rows.most));
  }
  return v;
}

// `points`: how many points a series is drawn in at most (SeriesMessage); 0,
// every run its own point, when absent.
absl::StatusOr<size_t> PointsParam(const httplib::Request& req) {
  const std::string text = Param(req, "points");
  if (text.empty()) return 0;
  uint32_t v = 0;
  if (!absl::SimpleAtoi(text, &v) || v < 2 || v > kSeriesPointRows.most) {
    return absl::InvalidArgumentError(
        absl::StrCat("points: '", text, "' is not a number from 2 to ", kSeriesPointRows.most));
  }
  return v;
}

// The moment a parameter names (common/time_text.h); unset when it is absent.
absl::Status TimeParam(const httplib::Request& req, const char* name, std::optional<TimePoint>& out) {
  if (!req.has_param(name)) return absl::OkStatus();
  auto t = ParseTimeText(name, req.get_param_value(name));
  PERFGATE_RETURN_IF_ERROR(t);
  out = *t;
  return absl::OkStatus();
}

absl::StatusOr<std::string> RunIdParam(const std::string& name, const std::string& value) {
  if (!IsUuid(value)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": '", value, "' is not a run id (a UUID)"));
  }
  return value;
}

absl::StatusOr<v1::ListRunsResponse> Runs(Store& store, const httplib::Request& req) {
  PERFGATE_ASSIGN_OR_RETURN(const uint32_t limit, Limit(req, kRunRows));
  return RunsAnswer(store, Param(req, "branch"), Param(req, "sku"), limit);
}

absl::StatusOr<v1::RunDetail> Run(Store& store, const httplib::Request& req) {
  PERFGATE_ASSIGN_OR_RETURN(const std::string id, RunIdParam("run", req.matches[1]));
  return RunAnswer(store, id);
}

absl::StatusOr<v1::SeriesResponse> SeriesRoute(Store& store, const httplib::Request& req) {
  auto limit = Limit(req, kSeriesPointRows);
  PERFGATE_RETURN_IF_ERROR(limit);
  auto points = PointsParam(req);
  PERFGATE_RETURN_IF_ERROR(points);
  SeriesQuery q{Param(req, "benchmark"), Param(req, "metric"), Param(req, "sku"), Param(req, "branch"),
                Param(req, "node"), *limit};
  PERFGATE_RETURN_IF_ERROR(TimeParam(req, "from", q.from));
  PERFGATE_RETURN_IF_ERROR(TimeParam(req, "to", q.to));
  auto series = store.GetSeries(q);
  PERFGATE_RETURN_IF_ERROR(series);
  std::vector<Regression> regressions;
  RegressionFilter f;
  f.benchmark = q.benchmark;
  f.sku = q.sku;
  f.branch = q.branch;
  f.limit = kRegressionRows.most;
  auto listed = ListRegressions(store, f);
  PERFGATE_RETURN_IF_ERROR(listed);
  for (Regression& r : *listed) {
    if (r.metric == q.metric) regressions.push_back(std::move(r));
  }
  return SeriesMessage(*series, regressions, *points);
}

absl::StatusOr<v1::CompareResponse> Compare(Store& store, const httplib::Request& req) {
  PERFGATE_ASSIGN_OR_RETURN(const std::string base, RunIdParam("base", Param(req, "base")));
  PERFGATE_ASSIGN_OR_RETURN(const std::string cand, RunIdParam("cand", Param(req, "cand")));
  return CompareAnswer(store, base, cand);
}

absl::StatusOr<v1::FleetResponse> Fleet(Store& store, const httplib::Request& req) {
  const std::string sku = Param(req, "sku"), sweep = Param(req, "sweep");
  if (sku.empty()) return absl::InvalidArgumentError("sku: must not be empty");
  if (sweep.empty()) return absl::InvalidArgumentError("sweep: must not be empty");
  gate::FleetOptions options;
  if (const std::string k = Param(req, "k"); !k.empty()) {
    if (!absl::SimpleAtod(k, &options.k) || !(options.k > 0) || !std::isfinite(options.k)) {
      return absl::InvalidArgumentError(absl::StrCat("k: '", k, "' is not a positive number of MADs"));
    }
  }
  options.benchmark_glob = Param(req, "benchmark");
  options.metric = Param(req, "metric");
  return FleetAnswer(store, sku, sweep, options);
}

absl::StatusOr<v1::ListSweepsResponse> Sweeps(Store& store, const httplib::Request& req) {
  auto sweeps = store.ListSweeps(Param(req, "sku"));
  PERFGATE_RETURN_IF_ERROR(sweeps);
  return ToMessage(*sweeps);
}

absl::StatusOr<v1::ListRegressionsResponse> Regressions(Store& store, const httplib::Request& req) {
  PERFGATE_ASSIGN_OR_RETURN(const uint32_t limit, Limit(req, kRegressionRows));
  RegressionFilter f{std::nullopt, Param(req, "branch"), Param(req, "sku"), Param(req, "benchmark"), limit};
  if (const std::string state = Param(req, "state"); !state.empty()) {
    PERFGATE_ASSIGN_OR_RETURN(f.state, RegressionStateOf("state", state));
  }
  PERFGATE_ASSIGN_OR_RETURN(const std::vector<Regression> list, ListRegressions(store, f));
  return ToMessage(list);
}

// The id of a stored record (`what`: "regression", "bisection") from a path or a parameter.
absl::StatusOr<int64_t> PositiveId(const std::string& text, const char* what) {
  int64_t id = 0;
  if (!absl::SimpleAtoi(text, &id) || id <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a ", what, " id"));
  }
  return id;
}

absl::StatusOr<int64_t> RegressionId(const std::string& text) { return PositiveId(text, "regression"); }

absl::StatusOr<v1::Regression> OneRegression(Store& store, const httplib::Request& req) {
  PERFGATE_ASSIGN_OR_RETURN(const int64_t id, RegressionId(req.matches[1]));
  PERFGATE_ASSIGN_OR_RETURN(const Regression r, store.GetRegression(id));
  return ToMessage(r);
}

// A triage move (regression_messages.h): the caller may triage, the body is
// the message's JSON; the answer is the regression as it now is.
absl::StatusOr<v1::Regression> TriageRoute(Store& store, const Authenticator& auth, const httplib::Request& req) {
  PERFGATE_RETURN_IF_ERROR(AuthorizeRequest(auth, req, Action::kTriage));
  PERFGATE_RETURN_IF_ERROR(CheckJsonBody(req));
  PERFGATE_ASSIGN_OR_RETURN(const int64_t id, RegressionId(req.matches[1]));
  PERFGATE_ASSIGN_OR_RETURN(const TriageChange change, TriageFromBody(id, req.body));
  PERFGATE_ASSIGN_OR_RETURN(const Regression r, Triage(store, change));
  return ToMessage(r);
}

// A write of `perfgate bisect` (bisection_messages.h): the caller may
// triage, the body is the message's JSON; the answer is the bisection.
absl::StatusOr<v1::Bisection> BisectionWrite(Store& store, const Authenticator& auth, const httplib::Request& req,
                                             const std::string& what) {
  PERFGATE_RETURN_IF_ERROR(AuthorizeRequest(auth, req, Action::kTriage));
  PERFGATE_RETURN_IF_ERROR(CheckJsonBody(req));
  if (what == "create") {
    PERFGATE_ASSIGN_OR_RETURN(const store::Bisection b, BisectionFromBody(req.body));
    PERFGATE_ASSIGN_OR_RETURN(const store::Bisection stored, store.CreateBisection(b));
    return ToMessage(stored);
  }
  PERFGATE_ASSIGN_OR_RETURN(const int64_t id, PositiveId(req.matches[1], "bisection"));
  if (what == "probe") {
    PERFGATE_ASSIGN_OR_RETURN(const store::BisectionProbe probe, ProbeFromBody(req.body));
    PERFGATE_ASSIGN_OR_RETURN(const store::Bisection b, store.AddBisectionProbe(id, probe));
    return ToMessage(b);
  }
  PERFGATE_ASSIGN_OR_RETURN(const store::BisectionOutcome outcome, OutcomeFromBody(req.body));
  PERFGATE_ASSIGN_OR_RETURN(const store::Bisection b, store.FinishBisection(id, outcome, "perfgate bisect", BisectionFinished));
  return ToMessage(b);
}

absl::StatusOr<v1::ListBisectionsResponse> Bisections(Store& store, const httplib::Request& req) {
  PERFGATE_ASSIGN_OR_RETURN(const uint32_t limit, Limit(req, kBisectionRows));
  int64_t regression = 0;
  if (const std::string r = Param(req, "regression"); !r.empty()) {
    PERFGATE_ASSIGN_OR_RETURN(regression, RegressionId(r));
  }
  PERFGATE_ASSIGN_OR_RETURN(const std::vector<store::Bisection> list, store.ListBisections(regression, limit));
  return ToMessage(list);
}

void RegisterBisections(httplib::Server& server, ApiStores stores, const Authenticator& auth) {
  Store* s = &stores.read;
  Store* w = &stores.write;
  const Authenticator* a = &auth;
  Get(server, auth, "/api/v1/bisections", "http bisections",
      [s](const httplib::Request& r) { return Bisections(*s, r); });
  // From the primary: a bisection resumed reads what it has just written.
  Get(server, auth, R"(/api/v1/bisections/([^/]+))", "http bisection",
      [w](const httplib::Request& r) -> absl::StatusOr<v1::Bisection> {
        PERFGATE_ASSIGN_OR_RETURN(const int64_t id, PositiveId(r.matches[1], "bisection"));
        PERFGATE_ASSIGN_OR_RETURN(const store::Bisection b, w->GetBisection(id));
        return ToMessage(b);
      });
  const std::pair<const char*, const char*> writes[] = {{"/api/v1/bisections", "create"},
                                                        {R"(/api/v1/bisections/([^/]+)/probes)", "probe"},
                                                        {R"(/api/v1/bisections/([^/]+)/finish)", "finish"}};
  for (const auto& [pattern, what] : writes) {
    const std::string kind = what;
    server.Post(pattern, [w, a, kind](const httplib::Request& r, httplib::Response& res) {
      Reply(res, BisectionWrite(*w, *a, r, kind), "http bisection");
    });
  }
}

}  // namespace

void RegisterApi(httplib::Server& server, ApiStores stores, const Authenticator& auth) {
  Store* s = &stores.read;
  Store* w = &stores.write;
  const Authenticator* a = &auth;
  Get(server, auth, "/api/v1/runs", "http runs", [s](const httplib::Request& r) { return Runs(*s, r); });
  Get(server, auth, R"(/api/v1/runs/([^/]+))", "http run", [s](const httplib::Request& r) { return Run(*s, r); });
  Get(server, auth, "/api/v1/series", "http series",
      [s](const httplib::Request& r) { return SeriesRoute(*s, r); });
  Get(server, auth, "/api/v1/catalog", "http catalog",
      [s](const httplib::Request&) -> absl::StatusOr<v1::CatalogResponse> {
        PERFGATE_ASSIGN_OR_RETURN(const store::Catalog c, s->GetCatalog());
        return ToMessage(c);
      });
  Get(server, auth, "/api/v1/compare", "http compare", [s](const httplib::Request& r) { return Compare(*s, r); });
  Get(server, auth, "/api/v1/sweeps", "http sweeps", [s](const httplib::Request& r) { return Sweeps(*s, r); });
  Get(server, auth, "/api/v1/fleet", "http fleet", [s](const httplib::Request& r) { return Fleet(*s, r); });
  Get(server, auth, "/api/v1/regressions", "http regressions",
      [s](const httplib::Request& r) { return Regressions(*s, r); });
  Get(server, auth, R"(/api/v1/regressions/([^/]+))", "http regression",
      [s](const httplib::Request& r) { return OneRegression(*s, r); });
  Get(server, auth, "/api/v1/notifications/outbox", "http outbox",
      [w](const httplib::Request& r) -> absl::StatusOr<v1::ListOutboxResponse> {
        auto limit = Limit(r, kDeliveryRows);
        PERFGATE_RETURN_IF_ERROR(limit);
        store::OutboxFilter filter{Param(r, "endpoint"), std::nullopt, *limit};
        if (const std::string state = Param(r, "state"); !state.empty()) {
          filter.state = store::ParseDeliveryState(state);
          if (!filter.state) {
            return absl::InvalidArgumentError(
                absl::StrCat("state: '", state, "' is not one of pending, delivered, failed"));
          }
        }
        auto entries = w->ListOutbox(filter);
        PERFGATE_RETURN_IF_ERROR(entries);
        return ToMessage(*entries);
      });
  // A stored gate report, in the API's JSON as `perfgate gate --json` writes it.
  Get(server, auth, R"(/api/v1/reports/([^/]+))", "http report",
      [s](const httplib::Request& r) -> absl::StatusOr<v1::GateReport> {
        PERFGATE_ASSIGN_OR_RETURN(const int64_t id, PositiveId(r.matches[1], "report"));
        return StoredReport(*s, id);
      });
  server.Post(R"(/api/v1/regressions/([^/]+)/triage)",
              [w, a](const httplib::Request& r, httplib::Response& res) {
                Reply(res, TriageRoute(*w, *a, r), "http triage");
              });
  RegisterBisections(server, stores, auth);
}

}  // namespace perfgate::coordinator
