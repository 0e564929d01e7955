#include "coordinator/api/api_messages.h"

#include <algorithm>
#include <optional>

#include "coordinator/domain/regression_messages.h"
#include "gate/history_changes.h"
#include "google/protobuf/util/json_util.h"
#include "wire/api_convert.h"
#include "wire/convert.h"

namespace perfgate::coordinator {
namespace {

using wire::SetMeasured;

v1::SeriesPoint PointMessage(const Series& series, const PointGroup& g) {
  const SeriesPoint p = MergePoints(series, g);
  const HistoryPoint& first = series.points[g.first].point;
  v1::SeriesPoint m;
  m.set_run_id(p.point.run_id);
  m.set_commit(p.point.commit);
  m.set_branch(p.point.branch);
  m.set_node(p.point.node);
  wire::ToProto(p.point.finished_at, m.mutable_t());
  SetMeasured(p.point.median, &v1::SeriesPoint::set_median, &m);
  SetMeasured(p.p5, &v1::SeriesPoint::set_p5, &m);
  SetMeasured(p.p95, &v1::SeriesPoint::set_p95, &m);
  m.set_n(p.point.n);
  m.set_n_throttled(p.n_throttled);
  for (const std::string& r : p.invalid_reasons) m.add_invalid_reasons(r);
  m.set_runs(static_cast<uint32_t>(g.end - g.first));
  m.set_first_commit(first.commit);
  wire::ToProto(first.finished_at, m.mutable_t_first());
  return m;
}

v1::DeliveryState ToProto(store::DeliveryState s) {
  switch (s) {
    case store::DeliveryState::kPending: return v1::DELIVERY_STATE_PENDING;
    case store::DeliveryState::kDelivered: return v1::DELIVERY_STATE_DELIVERED;
    case store::DeliveryState::kFailed: return v1::DELIVERY_STATE_FAILED;
  }
  return v1::DELIVERY_STATE_UNSPECIFIED;
}

void SetTime(const std::optional<TimePoint>& t, google::protobuf::Timestamp* out) {
  if (t) wire::ToProto(*t, out);
}

}  // namespace

v1::CatalogResponse ToMessage(const store::Catalog& c) {
  v1::CatalogResponse out;
  for (const store::Catalog::Metric& m : c.metrics) {
    v1::CatalogResponse::Metric* metric = out.add_metrics();
    metric->set_benchmark(m.benchmark);
    metric->set_metric(m.metric);
    metric->set_unit(m.unit);
  }
  out.mutable_skus()->Assign(c.skus.begin(), c.skus.end());
  out.mutable_branches()->Assign(c.branches.begin(), c.branches.end());
  out.mutable_nodes()->Assign(c.nodes.begin(), c.nodes.end());
  return out;
}

v1::ListSweepsResponse ToMessage(const std::vector<store::Sweep>& sweeps) {
  v1::ListSweepsResponse out;
  for (const store::Sweep& s : sweeps) {
    v1::SweepInfo* m = out.add_sweeps();
    m->set_sweep(s.sweep);
    m->set_sku(s.sku);
    m->set_runs(s.runs);
    m->set_nodes(s.nodes);
    wire::ToProto(s.finished_at, m->mutable_finished_at());
  }
  return out;
}

v1::ListOutboxResponse ToMessage(const std::vector<store::OutboxEntry>& entries) {
  v1::ListOutboxResponse out;
  for (const store::OutboxEntry& e : entries) {
    v1::OutboxEntry* m = out.add_outbox();
    m->set_id(e.id);
    m->set_endpoint(e.endpoint);
    m->set_event(e.event_type);
    m->set_idempotency_key(e.idempotency_key);
    m->set_state(ToProto(e.state));
    m->set_attempts(static_cast<uint32_t>(e.attempts));
    m->set_last_error(e.last_error);
    wire::ToProto(e.created_at, m->mutable_created_at());
    SetTime(e.last_attempt_at, m->mutable_last_attempt_at());
    if (e.state == store::DeliveryState::kPending) wire::ToProto(e.next_attempt_at, m->mutable_next_attempt_at());
    SetTime(e.delivered_at, m->mutable_delivered_at());
    if (!google::protobuf::util::JsonStringToMessage(e.payload, m->mutable_payload()).ok()) m->clear_payload();
  }
  return out;
}

v1::SeriesResponse SeriesMessage(const Series& series, const std::vector<Regression>& regressions,
                                 size_t max_points) {
  const ValidHistory valid = ValidPoints(series);
  const std::vector<HistoryChange> found = gate::FindHistoryChanges(valid.history);
  std::vector<size_t> breaks;
  for (const HistoryChange& c : found) breaks.push_back(valid.source_index[c.index]);
  const std::vector<PointGroup> groups = GroupPoints(series.points.size(), breaks, max_points);
  v1::SeriesResponse out;
  out.set_unit(series.unit);
  out.set_direction(wire::ToProto(series.direction));
  out.set_runs(static_cast<uint32_t>(series.points.size()));
  for (const PointGroup& g : groups) *out.add_points() = PointMessage(series, g);
  for (const HistoryChange& c : found) {
    const size_t at = valid.source_index[c.index];
    // The group whose first run is the change's.
    const auto group = std::partition_point(groups.begin(), groups.end(),
                                            [&](const PointGroup& g) { return g.end <= at; });
    v1::SeriesChange* m = out.add_changes();
    m->set_index(static_cast<uint32_t>(group - groups.begin()));
    m->set_commit(series.points[at].point.commit);
    m->set_run_id(series.points[at].point.run_id);
    SetMeasured(c.median_before, &v1::SeriesChange::set_median_before, m);
    SetMeasured(c.median_after, &v1::SeriesChange::set_median_after, m);
    SetMeasured(c.change, &v1::SeriesChange::set_change, m);
    SetMeasured(c.p_value, &v1::SeriesChange::set_p_value, m);
  }
  for (const Regression& r : regressions) *out.add_regressions() = ToMessage(r);
  return out;
}

}  // namespace perfgate::coordinator
