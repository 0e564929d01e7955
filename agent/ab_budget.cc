// The seconds an A/B measurement may take (the case's budget, its shares
// for a first measurement, an extension, a confirmation and a
// confirmation's extension, the job's budget left), and the line that says
// how a measurement ended.
#include <algorithm>
#include <ostream>

#include "absl/strings/str_format.h"
#include "agent/ab.h"
#include "gate/gate.h"

namespace perfgate::agent {

double RoundsBudget(double round_s, const AbOptions& options) {
  return static_cast<double>(options.min_rounds) * round_s * 1.2;
}

double AutoBudget(double round_s, const AbOptions& options) {
  return static_cast<double>(options.max_rounds) * round_s * 1.1;
}

double CaseBudgetFor(double measurement_s, const AbOptions& options) {
  return options.confirm && options.case_budget_s > 0 ? measurement_s / gate::kFirstMeasurementShare : measurement_s;
}

double JobShare(const AbOptions& options, double job_spent_s, size_t left) {
  if (options.job_budget_s <= 0) return 0;
  return std::max(0.0, options.job_budget_s - job_spent_s) / static_cast<double>(std::max<size_t>(left, 1));
}

double MeasurementBudget(const AbOptions& options, double job_spent_s, size_t left, const CasePair* first,
                         MeasurePass pass) {
  double b = options.case_budget_s;
  if (b > 0 && first != nullptr && pass == MeasurePass::kExtension) {
    b = gate::ExtensionBudget(b, first->seconds, first->rounds, options.min_rounds, options.max_rounds);
    if (b <= 0) return 0;
  } else if (b > 0 && first != nullptr && pass == MeasurePass::kConfirmationExtension) {
    b = gate::ConfirmationExtensionBudget(first->seconds, first->rounds, options.min_rounds, options.max_rounds);
    if (b <= 0) return 0;
  } else if (b > 0 && first != nullptr) {
    b = gate::ConfirmationBudget(b, first->seconds, first->rounds, options.min_rounds);
  } else if (b > 0 && options.confirm) {
    b *= gate::kFirstMeasurementShare;
  }
  if (options.job_budget_s > 0) {
    const double job_left = JobShare(options, job_spent_s, left);
    b = b > 0 ? std::min(b, job_left) : job_left;
  }
  return b;
}

void LogPair(const CasePair& p, std::ostream& log) {
  if (p.candidate.status != CaseStatus::kOk) {
    log << ToString(p.candidate.status) << ": " << p.candidate.reason << "\n" << std::flush;
    return;
  }
  log << p.rounds << " rounds of " << (p.baseline_blocks.empty() ? 0 : p.baseline_blocks.front())
      << " samples a side in " << absl::StrFormat("%.1f", p.seconds) << " s (" << ToString(p.stopped) << ")\n"
      << std::flush;
}

}  // namespace perfgate::agent
