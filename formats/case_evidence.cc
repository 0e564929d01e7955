#include "formats/case_evidence.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace perfgate {

bool Judgeable(const CaseResult& c) { return !c.samples.empty() || c.status == CaseStatus::kFailed; }

std::string WithoutSamples(const ResultSet& set) {
  if (set.cases.empty()) return "no cases";
  std::vector<std::string> empty;
  for (const CaseResult& c : set.cases) {
    if (!c.samples.empty()) continue;
    empty.push_back(absl::StrCat(c.benchmark.Key(), " ", ToString(c.status),
                                 c.reason.empty() ? "" : absl::StrCat(" (", c.reason, ")")));
  }
  const size_t n = set.cases.size();
  return absl::StrCat(n, n == 1 ? " case, " : " cases, ",
                      empty.size() == n ? std::string("none with samples")
                                        : absl::StrCat(empty.size(), " without samples"),
                      ": ", FewNames(empty));
}

std::string FewNames(const std::vector<std::string>& names) {
  constexpr size_t kShown = 5;
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(names.size(), kShown));
  std::string out = absl::StrJoin(shown, ", ");
  if (names.size() > kShown) absl::StrAppend(&out, " and ", names.size() - kShown, " more");
  return out;
}

}  // namespace perfgate
