#include "coordinator/series.h"

namespace perfgate::coordinator {

ValidHistory ValidPoints(const Series& series) {
  ValidHistory out;
  out.history.unit = series.unit;
  out.history.direction = series.direction;
  for (size_t i = 0; i < series.points.size(); ++i) {
    if (!series.points[i].valid()) continue;
    out.history.points.push_back(series.points[i].point);
    out.source_index.push_back(i);
  }
  return out;
}

}  // namespace perfgate::coordinator
