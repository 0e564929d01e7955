// Query answers on the wire and back: a metric's history with its change
// points (Query.History) and the outlier nodes of a sweep (Query.Fleet), so
// the coordinator sends its domain results and the CLI renders them from the
// same types.
#pragma once

#include "absl/status/statusor.h"
#include "common/history.h"
#include "common/run_types.h"
#include "gate/fleet.h"
#include "perfgate/v1/query.pb.h"

namespace perfgate::wire {

/// Fills `out` from `history`; each change point names the commit and run of
/// the point where its level begins.
void ToProto(const HistoryReport& history, v1::HistoryResponse* out);

/// The history a coordinator sent. A direction other than higher- or
/// lower-is-better, or a change point whose index is not a point of the
/// series, is an error naming the field.
absl::StatusOr<HistoryReport> FromProto(const v1::HistoryResponse& history);

/// Fills every field of `out` from one metric's summary of a run (a
/// statistic of no sample is NaN).
void ToProto(const MetricSummary& summary, v1::MetricSummary* out);

/// Fills `out` from `fleet`.
void ToProto(const gate::FleetReport& fleet, v1::FleetResponse* out);

/// The fleet comparison a coordinator sent. A side other than "worse" or
/// "better", or an unknown direction, is an error naming the field.
absl::StatusOr<gate::FleetReport> FromProto(const v1::FleetResponse& fleet);

}  // namespace perfgate::wire
