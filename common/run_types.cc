#include "common/run_types.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"

namespace perfgate {
namespace {

template <typename E, size_t N>
const char* Name(const std::array<std::pair<E, const char*>, N>& table, E e) {
  for (const auto& [v, n] : table) {
    if (v == e) return n;
  }
  return "unspecified";
}

template <typename E, size_t N>
bool Parse(const std::array<std::pair<E, const char*>, N>& table, const std::string& s, E* out) {
  for (const auto& [v, n] : table) {
    if (s == n) {
      *out = v;
      return true;
    }
  }
  return false;
}

constexpr std::array<std::pair<Direction, const char*>, 2> kDirections{{
    {Direction::kHigherIsBetter, "higher_is_better"},
    {Direction::kLowerIsBetter, "lower_is_better"},
}};
constexpr std::array<std::pair<CaseStatus, const char*>, 5> kCaseStatuses{{
    {CaseStatus::kUnspecified, "unspecified"},
    {CaseStatus::kOk, "ok"},
    {CaseStatus::kTimedOut, "timed_out"},
    {CaseStatus::kSkipped, "skipped"},
    {CaseStatus::kFailed, "failed"},
}};
constexpr std::array<std::pair<Trigger, const char*>, 4> kTriggers{{
    {Trigger::kUnspecified, "unspecified"},
    {Trigger::kCi, "ci"},
    {Trigger::kSweep, "sweep"},
    {Trigger::kManual, "manual"},
}};
constexpr std::array<std::pair<RunStatus, const char*>, 4> kRunStatuses{{
    {RunStatus::kUnspecified, "unspecified"},
    {RunStatus::kRunning, "running"},
    {RunStatus::kComplete, "complete"},
    {RunStatus::kFailed, "failed"},
}};

constexpr std::array<std::pair<ValueBound::Kind, const char*>, 2> kBoundKinds{{
    {ValueBound::Kind::kAtLeast, "at_least"},
    {ValueBound::Kind::kAtMost, "at_most"},
}};

}  // namespace

const char* ToString(ValueBound::Kind k) { return Name(kBoundKinds, k); }
bool ParseBoundKind(const std::string& s, ValueBound::Kind* out) { return Parse(kBoundKinds, s, out); }
const char* ToString(Direction d) { return Name(kDirections, d); }
const char* ToString(CaseStatus s) { return Name(kCaseStatuses, s); }
const char* ToString(Trigger t) { return Name(kTriggers, t); }
const char* ToString(RunStatus s) { return Name(kRunStatuses, s); }
bool ParseDirection(const std::string& s, Direction* out) { return Parse(kDirections, s, out); }
bool ParseCaseStatus(const std::string& s, CaseStatus* out) { return Parse(kCaseStatuses, s, out); }
bool ParseTrigger(const std::string& s, Trigger* out) { return Parse(kTriggers, s, out); }
bool ParseRunStatus(const std::string& s, RunStatus* out) { return Parse(kRunStatuses, s, out); }

absl::Status CheckSampleIndicesOnce(std::map<std::string, std::vector<uint32_t>> indices) {
  for (auto& [key, seen] : indices) {
    std::sort(seen.begin(), seen.end());
    auto dup = std::adjacent_find(seen.begin(), seen.end());
    if (dup != seen.end()) {
      return absl::InvalidArgumentError(absl::StrCat("benchmark ", key, " sample index ", *dup,
                                                     " appears twice; each sample of a case has its own index"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSampleIndicesOnce(const std::vector<CaseResult>& cases) {
  std::map<std::string, std::vector<uint32_t>> indices;
  for (const CaseResult& c : cases) {
    std::vector<uint32_t>& seen = indices[c.benchmark.Key()];
    for (const Sample& s : c.samples) seen.push_back(s.index);
  }
  return CheckSampleIndicesOnce(std::move(indices));
}

}  // namespace perfgate
