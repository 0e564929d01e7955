#include "wire/query_convert.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "wire/convert.h"
#include "wire/field_error.h"

namespace perfgate::wire {
namespace {

absl::StatusOr<gate::FleetOutlier> OutlierFromProto(const v1::FleetOutlier& o, const std::string& field) {
  gate::FleetOutlier out;
  out.node = o.node();
  out.run_id = o.run_id();
  out.benchmark = o.benchmark();
  out.metric = o.metric();
  out.unit = o.unit();
  auto direction = FromProto(o.direction(), field + ".direction");
  PERFGATE_RETURN_IF_ERROR(direction);
  out.direction = *direction;
  out.node_median = o.node_median();
  out.fleet_median = o.fleet_median();
  out.mad = o.mad();
  out.deviation = o.deviation();
  if (o.side() == gate::ToString(gate::FleetSide::kWorse)) {
    out.side = gate::FleetSide::kWorse;
  } else if (o.side() == gate::ToString(gate::FleetSide::kBetter)) {
    out.side = gate::FleetSide::kBetter;
  } else {
    return FieldError(field + ".side", absl::StrCat("'", o.side(), "' is neither worse nor better"));
  }
  out.nodes = o.nodes();
  for (const v1::FieldDifference& d : o.differing_fields()) {
    out.differing_fields.push_back({d.name(), d.node_value(), d.majority_value()});
  }
  return out;
}

}  // namespace

void ToProto(const HistoryReport& history, v1::HistoryResponse* out) {
  out->set_unit(history.series.unit);
  out->set_direction(ToProto(history.series.direction));
  for (const HistoryPoint& p : history.series.points) {
    v1::HistoryPoint* point = out->add_points();
    point->set_run_id(p.run_id);
    point->set_commit(p.commit);
    point->set_branch(p.branch);
    point->set_node(p.node);
    ToProto(p.finished_at, point->mutable_finished_at());
    point->set_median(p.median);
    point->set_n(p.n);
  }
  for (const HistoryChange& c : history.changes) {
    v1::ChangePoint* change = out->add_change_points();
    change->set_index(static_cast<uint32_t>(c.index));
    if (c.index < history.series.points.size()) {
      change->set_commit(history.series.points[c.index].commit);
      change->set_run_id(history.series.points[c.index].run_id);
    }
    change->set_median_after(c.median_after);
    change->set_median_before(c.median_before);
    change->set_change(c.change);
    change->set_statistic(c.statistic);
    change->set_p_value(c.p_value);
  }
}

absl::StatusOr<HistoryReport> FromProto(const v1::HistoryResponse& history) {
  HistoryReport out;
  out.series.unit = history.unit();
  auto direction = FromProto(history.direction(), "direction");
  PERFGATE_RETURN_IF_ERROR(direction);
  out.series.direction = *direction;
  for (const v1::HistoryPoint& p : history.points()) {
    out.series.points.push_back(
        {p.run_id(), p.commit(), p.branch(), p.node(), FromProto(p.finished_at()), p.median(), p.n()});
  }
  for (int i = 0; i < history.change_points_size(); ++i) {
    const v1::ChangePoint& c = history.change_points(i);
    if (c.index() >= out.series.points.size()) {
      return FieldError(absl::StrCat("change_points[", i, "].index"),
                 absl::StrCat(c.index(), " is not one of the ", out.series.points.size(), " points"));
    }
    out.changes.push_back(
        {c.index(), c.median_before(), c.median_after(), c.change(), c.statistic(), c.p_value()});
  }
  return out;
}

void ToProto(const MetricSummary& m, v1::MetricSummary* out) {
  out->set_benchmark(m.benchmark);
  out->set_metric(m.metric);
  out->set_unit(m.unit);
  out->set_direction(ToProto(m.direction));
  out->set_n(m.n);
  out->set_n_throttled(m.n_throttled);
  out->set_median(m.median);
  out->set_mean(m.mean);
  out->set_stdev(m.stdev);
  out->set_min(m.min);
  out->set_max(m.max);
  out->set_noise(m.noise);
  out->set_status(ToProto(m.status));
  out->set_reason(m.reason);
  out->set_mad(m.mad);
  out->set_p5(m.p5);
  out->set_p95(m.p95);
  out->set_median_ci_low(m.median_ci_low);
  out->set_median_ci_high(m.median_ci_high);
}

void ToProto(const gate::FleetReport& fleet, v1::FleetResponse* out) {
  out->set_nodes(fleet.nodes);
  out->set_k(fleet.k);
  for (const gate::FleetOutlier& o : fleet.outliers) {
    v1::FleetOutlier* outlier = out->add_outliers();
    outlier->set_node(o.node);
    outlier->set_run_id(o.run_id);
    outlier->set_benchmark(o.benchmark);
    outlier->set_metric(o.metric);
    outlier->set_unit(o.unit);
    outlier->set_direction(ToProto(o.direction));
    outlier->set_node_median(o.node_median);
    outlier->set_fleet_median(o.fleet_median);
    outlier->set_mad(o.mad);
    outlier->set_deviation(o.deviation);
    outlier->set_side(gate::ToString(o.side));
    outlier->set_nodes(o.nodes);
    for (const gate::FieldDifference& d : o.differing_fields) {
      v1::FieldDifference* f = outlier->add_differing_fields();
      f->set_name(d.name);
      f->set_node_value(d.node_value);
      f->set_majority_value(d.majority_value);
    }
  }
  for (const gate::FleetNode& n : fleet.node_summary) {
    v1::FleetNode* node = out->add_node_summary();
    node->set_node(n.node);
    node->set_run_id(n.run_id);
    node->set_worse(n.worse);
    node->set_better(n.better);
  }
}

absl::StatusOr<gate::FleetReport> FromProto(const v1::FleetResponse& fleet) {
  gate::FleetReport out;
  out.nodes = fleet.nodes();
  out.k = fleet.k();
  for (int i = 0; i < fleet.outliers_size(); ++i) {
    auto o = OutlierFromProto(fleet.outliers(i), absl::StrCat("outliers[", i, "]"));
    PERFGATE_RETURN_IF_ERROR(o);
    out.outliers.push_back(*std::move(o));
  }
  for (const v1::FleetNode& n : fleet.node_summary()) {
    out.node_summary.push_back({n.node(), n.run_id(), n.worse(), n.better()});
  }
  return out;
}

}  // namespace perfgate::wire
