// The gate's verdict of one case in an A/B result, for the tests of the
// suites' and the programs' A/B.
#pragma once

#include <string>

#include "agent/ab.h"

namespace perfgate::agent {

/// The first verdict of case `key` in `r`; null when it has none.
inline const gate::MetricVerdict* VerdictOf(const AbResult& r, const std::string& key) {
  for (const gate::MetricVerdict& v : r.gate.verdicts) {
    if (v.benchmark == key) return &v;
  }
  return nullptr;
}

}  // namespace perfgate::agent
