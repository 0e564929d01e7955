// Inference for the gate: how much a metric changed, oriented by its
// direction, and how sure we are. A/B samples (baseline and candidate measured
// together), a candidate against the medians of past runs, and the correction
// for testing many metrics at once. Deterministic: bootstraps take a seed.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "common/stats.h"

namespace perfgate::gate {

/// Relative change of medians oriented so that > 0 is WORSE for the metric's direction:
///   lower_is_better: (median(cand) - median(base)) / median(base)
///   higher_is_better: (median(base) - median(cand)) / median(base)
/// NaN when the baseline median is zero or either median is not finite.
double RelativeChange(double baseline_median, double candidate_median, bool higher_is_better);

/// A relative change (as RelativeChange) with its confidence interval.
struct ChangeEstimate {
  double change = std::numeric_limits<double>::quiet_NaN();
  stats::Interval ci;
};
/// RelativeChange of the medians, and a percentile-bootstrap CI of it that
/// resamples each side independently (seeded: same data + seed → same CI).
/// Either side empty gives NaN change and CI.
ChangeEstimate BootstrapRelativeChange(std::span<const double> baseline, std::span<const double> candidate,
                                       bool higher_is_better, double confidence = 0.95,
                                       unsigned resamples = 2000, uint64_t seed = 0x5eed);

/// How MannWhitneyU computes its p-value (the names of scipy.stats.mannwhitneyu).
enum class MannWhitneyMethod { kAuto, kExact, kAsymptotic };

/// Outcome of a Mann–Whitney U test.
struct MannWhitneyResult {
  double u = std::numeric_limits<double>::quiet_NaN();        // U of the first sample
  double p_value = std::numeric_limits<double>::quiet_NaN();  // two-sided
  bool exact = false;                                         // exact null distribution used
};
/// Two-sided Mann–Whitney U, agreeing with scipy.stats.mannwhitneyu. kAuto is
/// scipy's rule: exact when either sample has <= 8 values and there are no
/// ties; otherwise the normal approximation with tie and continuity
/// correction. kExact ignores ties as scipy does (U truncated to an integer).
/// Both exact choices fall back to the approximation beyond 10^7 pairs (m·n).
/// u is U of the first sample (scipy's convention). An empty sample or a NaN
/// value gives NaN u and p.
MannWhitneyResult MannWhitneyU(std::span<const double> x, std::span<const double> y,
                               MannWhitneyMethod method = MannWhitneyMethod::kAuto);

/// P(U >= u) under the null for samples of sizes m and n without ties, from
/// the exact distribution of U. NaN when m or n is zero.
double MannWhitneyExactSf(unsigned m, unsigned n, double u);

/// Benjamini–Hochberg adjusted p-values (same order as input; monotone; capped at 1), as R's
/// p.adjust(method="BH") / statsmodels fdr_bh. NaN entries stay NaN and are not counted.
std::vector<double> BenjaminiHochberg(std::span<const double> p_values);

/// A candidate run's median against the medians of past runs.
struct HistoryComparison {
  double change = std::numeric_limits<double>::quiet_NaN();  // RelativeChange(median(history), candidate)
  stats::Interval ci;            // prediction interval of a new unchanged run, in units of change
  double p_value = std::numeric_limits<double>::quiet_NaN();  // two-sided, Student t with K-1 d.o.f.
  unsigned history_runs = 0;  // K
  stats::Interval change_ci;     // the same half-width centred on the candidate: plausible true changes
};
/// Candidate run median against the medians of K history runs: change = RelativeChange(median(history), candidate, dir);
/// the between-run spread of the history gives a Student-t prediction interval for a new run
/// (mean ± t_{1-α/2, K-1} · s · sqrt(1 + 1/K)), expressed as an interval of the relative change
/// (ci: where an unchanged candidate would fall; change_ci: candidate - mean ± the same half-width);
/// p_value two-sided from the t statistic (candidate - mean)/(s·sqrt(1+1/K)) with K-1 d.o.f. K < 2 → NaN p and CI.
/// s = 0 gives a zero-width interval and p 1 when the candidate equals the mean, else 0.
HistoryComparison CompareWithHistory(std::span<const double> history_medians, double candidate_median,
                                     bool higher_is_better, double confidence = 0.95);

/// The oriented log-ratio of two positive values: log(candidate / baseline)
/// for lower-is-better metrics, log(baseline / candidate) for higher-is-better
/// ones, so that > 0 is worse and a metric and its reciprocal (time and
/// throughput of one case) give the same number. NaN unless both are > 0.
double OrientedLogRatio(double baseline, double candidate, bool higher_is_better);

/// The relative change (as RelativeChange) that an oriented log-ratio r
/// stands for: e^r - 1 for lower-is-better, 1 - e^-r for higher-is-better.
double ChangeFromLogRatio(double r, bool higher_is_better);

/// A shift between two groups of processes, on the oriented log scale (> 0
/// is worse), with its interval and two-sided p-value.
struct ShiftEstimate {
  double shift = std::numeric_limits<double>::quiet_NaN();
  stats::Interval ci;  // either end may be infinite when too few processes bound it
  double p_value = std::numeric_limits<double>::quiet_NaN();
  double df = std::numeric_limits<double>::quiet_NaN();  // t tests only
};

/// Hodges–Lehmann shift of y over x — the median of the m·n differences
/// y_j - x_i — with the distribution-free interval that inverts the
/// Mann–Whitney test (Moses): the k-th smallest and k-th largest difference,
/// k from the exact distribution of U (normal approximation beyond 30 a
/// side), and the Mann–Whitney p-value (exact without ties up to 30 a side).
/// Ranks make it robust: one process hit by a burst moves one rank. When
/// too few processes exist for the confidence asked, the ends are ±inf.
/// Empty input gives NaN.
ShiftEstimate HodgesLehmannShift(std::span<const double> x, std::span<const double> y,
                                 double confidence = 0.95);

/// Two-sided Wilcoxon signed-rank p-value of paired differences d (zeros
/// dropped, as scipy's "wilcox" zero method): exact without ties up to 30
/// pairs, else the normal approximation with tie correction. NaN when no
/// non-zero difference remains.
double WilcoxonSignedRankP(std::span<const double> d);

/// Hodges–Lehmann estimate of the centre of paired differences d (the
/// median of the Walsh averages (d_i + d_j) / 2, i <= j) with the interval
/// that inverts the signed-rank test, and its p-value. The pairs are the
/// rounds of an interleaved A/B job: pairing cancels drift that both blocks
/// of a round share; ranks keep one burst-hit round from moving the
/// estimate. Ends are ±inf when too few pairs bound it.
ShiftEstimate HodgesLehmannPaired(std::span<const double> d, double confidence = 0.95);

/// The difference of mean values between kc candidate and kb baseline
/// processes when the between-process standard deviation is `spread` with
/// `df` degrees of freedom (estimated from the series' own processes, a
/// stored calibration, or both pooled): Student t interval and p-value,
/// se = spread · sqrt(1/kb + 1/kc). NaN when df < 1 or a count is 0.
ShiftEstimate TShift(double baseline_mean, unsigned kb, double candidate_mean, unsigned kc,
                     double spread, double df, double confidence = 0.95);

/// The mean of paired differences d with its Student t interval and
/// two-sided p-value (n - 1 degrees of freedom, se = sd(d) / sqrt(n)). NaN
/// with fewer than 2 differences.
ShiftEstimate PairedTShift(std::span<const double> d, double confidence = 0.95);

/// The p quantile of Student's t distribution with df degrees of freedom
/// (p in (0, 1), df > 0); NaN otherwise.
double StudentTQuantile(double p, double df);

}  // namespace perfgate::gate
