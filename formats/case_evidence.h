// What a result file holds that a gate can judge: whether a case counts as
// evidence, and what a file held in its place, said in words for a message
// that refuses the file (`perfgate compare`, `ingest`, `export`).
#pragma once

#include <string>
#include <vector>

#include "formats/result_file.h"

namespace perfgate {

/// Whether a gate can judge the case: it holds samples, or it failed (a
/// failure is evidence a gate reports); a case skipped without samples
/// says nothing.
bool Judgeable(const CaseResult& c);

/// What `set` holds in place of samples, for a message that names the file:
/// "no cases", or the cases without samples with their status and reason
/// ("1 case, none with samples: gbench/whocares skipped (only aggregates
/// (zz) and no median or mean)"), five at most and a count of the rest.
std::string WithoutSamples(const ResultSet& set);

/// Up to five of `names` joined by ", ", then " and N more" for the rest.
std::string FewNames(const std::vector<std::string>& names);

}  // namespace perfgate
