// The exit codes of every perfgate binary (perfgate, perfgate-agent,
// perfgate-coordinator): one vocabulary, so that a CI step reads any of
// them the same way.
#pragma once

namespace perfgate {

/// Everything checked passed (or the command had nothing to judge).
inline constexpr int kExitPass = 0;
/// The check failed: a regression, a floor missed, a metric missing, or a
/// case that failed its verification.
inline constexpr int kExitRegression = 1;
/// The command could not do its work: a bad command line or configuration,
/// a file that cannot be read, a call that failed.
inline constexpr int kExitError = 2;
/// The evidence could not decide (too noisy, no baseline, an unfit
/// environment) and the policy reports it.
inline constexpr int kExitInconclusive = 3;

}  // namespace perfgate
