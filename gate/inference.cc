#include "gate/inference.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace perfgate::gate {

using stats::Interval;
using stats::Mean;
using stats::Median;
using stats::Quantile;
using stats::ResampledMedian;
using stats::Stdev;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Beyond this many pairs (m·n) the exact table (up to m·n/2 counts) would cost
// too much memory and time, and the normal approximation is as good.
constexpr double kMaxExactCells = 1e7;

bool AllFinite(std::span<const double> v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// Interval with its ends in increasing order: orienting a change by direction
// can swap them.
Interval Ordered(double a, double b) { return a <= b ? Interval{a, b} : Interval{b, a}; }

// Midranks (1-based) of xy, and the tie term Σ (t³ - t) over groups of equal values.
std::vector<double> MidRanks(std::span<const double> xy, double* tie_term) {
  std::vector<size_t> order(xy.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return xy[a] < xy[b]; });
  std::vector<double> ranks(xy.size());
  *tie_term = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && xy[order[j + 1]] == xy[order[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + j) + 1.0;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    const double t = static_cast<double>(j - i + 1);
    *tie_term += t * t * t - t;
    i = j + 1;
  }
  return ranks;
}

// Counts of the arrangements of m x's and n y's giving U = 0..max_k: the
// low coefficients of the Gaussian binomial [m+n choose m]_q, built as
// Π_{i=1..m} (1 - q^{n+i}) / (1 - q^i). Each factor is one pass of the
// counting recursion, and a coefficient depends only on lower ones, so the
// truncated table is exact. long double keeps counts exact up to 2^64.
std::vector<long double> ExactUCounts(unsigned m, unsigned n, size_t max_k) {
  if (m > n) std::swap(m, n);  // the distribution is the same; fewer passes
  std::vector<long double> c(max_k + 1, 0.0L);
  c[0] = 1.0L;
  for (size_t i = 1; i <= m; ++i) {
    const size_t shift = n + i;
    for (size_t k = max_k; k >= shift; --k) c[k] -= c[k - shift];
    for (size_t k = i; k <= max_k; ++k) c[k] += c[k - i];
  }
  return c;
}

// C(m+n, m), the number of arrangements, as a product of ratios.
long double Arrangements(unsigned m, unsigned n) {
  if (m > n) std::swap(m, n);
  long double total = 1.0L;
  for (unsigned i = 1; i <= m; ++i) total = total * static_cast<long double>(n + i) / static_cast<long double>(i);
  return total;
}

}  // namespace

double RelativeChange(double baseline_median, double candidate_median, bool higher_is_better) {
  if (!std::isfinite(baseline_median) || !std::isfinite(candidate_median) || baseline_median == 0.0) return kNaN;
  const double delta = higher_is_better ? baseline_median - candidate_median : candidate_median - baseline_median;
  return delta / baseline_median;
}

ChangeEstimate BootstrapRelativeChange(std::span<const double> baseline, std::span<const double> candidate,
                                       bool higher_is_better, double confidence, unsigned resamples,
                                       uint64_t seed) {
  ChangeEstimate out;
  if (baseline.empty() || candidate.empty()) return out;
  out.change = RelativeChange(Median(baseline), Median(candidate), higher_is_better);
  if (std::isnan(out.change) || resamples == 0) return out;
  std::mt19937_64 rng(seed);
  std::vector<double> changes, scratch;
  changes.reserve(resamples);
  for (unsigned r = 0; r < resamples; ++r) {
    const double b = ResampledMedian(baseline, rng, scratch);
    const double c = ResampledMedian(candidate, rng, scratch);
    const double change = RelativeChange(b, c, higher_is_better);
    // A resampled baseline median of zero has no relative change; leave it out.
    if (!std::isnan(change)) changes.push_back(change);
  }
  if (changes.empty()) return out;
  const double tail = (1.0 - confidence) / 2.0;
  out.ci = {Quantile(changes, tail), Quantile(changes, 1.0 - tail)};
  return out;
}

double MannWhitneyExactSf(unsigned m, unsigned n, double u) {
  if (m == 0 || n == 0 || std::isnan(u)) return kNaN;
  const double mn = static_cast<double>(m) * n;
  const double k = std::ceil(u);
  if (k <= 0) return 1.0;
  if (k > mn) return 0.0;
  // Sum whichever tail is shorter; U is symmetric about m·n/2, so
  // P(U >= k) = P(U <= m·n - k).
  const size_t kk = static_cast<size_t>(k);
  const size_t mirror = static_cast<size_t>(mn) - kk;
  const bool upper = mirror <= kk;
  const size_t last = upper ? mirror : kk - 1;
  const std::vector<long double> counts = ExactUCounts(m, n, last);
  const long double tail = std::accumulate(counts.begin(), counts.end(), 0.0L) / Arrangements(m, n);
  return static_cast<double>(upper ? tail : 1.0L - tail);
}

MannWhitneyResult MannWhitneyU(std::span<const double> x, std::span<const double> y, MannWhitneyMethod method) {
  MannWhitneyResult out;
  if (x.empty() || y.empty() || !AllFinite(x) || !AllFinite(y)) return out;
  const size_t n1 = x.size(), n2 = y.size();
  std::vector<double> xy(x.begin(), x.end());
  xy.insert(xy.end(), y.begin(), y.end());
  double tie_term = 0;
  const std::vector<double> ranks = MidRanks(xy, &tie_term);
  const double r1 = std::accumulate(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(n1), 0.0);
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2);
  const double u1 = r1 - d1 * (d1 + 1.0) / 2.0;
  const double u_max = std::max(u1, d1 * d2 - u1);
  out.u = u1;

  bool exact = false;
  switch (method) {
    case MannWhitneyMethod::kAuto:
      exact = (n1 <= 8 || n2 <= 8) && tie_term == 0 && d1 * d2 <= kMaxExactCells;
      break;
    case MannWhitneyMethod::kExact:
      exact = d1 * d2 <= kMaxExactCells;
      break;
    case MannWhitneyMethod::kAsymptotic:
      exact = false;
      break;
  }
  double p = kNaN;
  if (exact) {
    // With ties U can be a half-integer; scipy truncates it.
    p = 2.0 * MannWhitneyExactSf(static_cast<unsigned>(n1), static_cast<unsigned>(n2), std::floor(u_max));
  } else {
    const double n = d1 + d2;
    const double sd = std::sqrt(d1 * d2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0))));
    // u_max >= m·n/2, so subtracting 1/2 always moves U toward the mean.
    const double numerator = u_max - d1 * d2 / 2.0 - 0.5;
    if (!(sd > 0)) {
      p = numerator > 0 ? 0.0 : 1.0;
    } else {
      p = 2.0 * boost::math::cdf(boost::math::complement(boost::math::normal(), numerator / sd));
    }
  }
  out.p_value = std::clamp(p, 0.0, 1.0);
  out.exact = exact;
  return out;
}

std::vector<double> BenjaminiHochberg(std::span<const double> p_values) {
  std::vector<double> adjusted(p_values.size(), kNaN);
  std::vector<size_t> order;
  for (size_t i = 0; i < p_values.size(); ++i) {
    if (!std::isnan(p_values[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p_values[a] < p_values[b]; });
  const double m = static_cast<double>(order.size());
  // Step up from the largest p: each adjusted value is the smallest m/rank·p
  // at its rank or above, which keeps them monotone in p.
  double running = 1.0;
  for (size_t r = order.size(); r-- > 0;) {
    const size_t i = order[r];
    running = std::min(running, p_values[i] * m / static_cast<double>(r + 1));
    adjusted[i] = running;
  }
  return adjusted;
}

HistoryComparison CompareWithHistory(std::span<const double> history_medians, double candidate_median,
                                     bool higher_is_better, double confidence) {
  HistoryComparison out;
  out.history_runs = static_cast<unsigned>(history_medians.size());
  if (history_medians.empty() || !AllFinite(history_medians)) return out;
  const double centre = Median(history_medians);
  out.change = RelativeChange(centre, candidate_median, higher_is_better);
  if (history_medians.size() < 2 || std::isnan(out.change)) return out;

  const double k = static_cast<double>(history_medians.size());
  const double mean = Mean(history_medians);
  const double spread = Stdev(history_medians) * std::sqrt(1.0 + 1.0 / k);
  const boost::math::students_t t_dist(k - 1.0);
  const double t_crit = boost::math::quantile(t_dist, 1.0 - (1.0 - confidence) / 2.0);
  const double half = t_crit * spread;
  out.ci = Ordered(RelativeChange(centre, mean - half, higher_is_better),
                   RelativeChange(centre, mean + half, higher_is_better));
  out.change_ci = Ordered(RelativeChange(centre, candidate_median - half, higher_is_better),
                          RelativeChange(centre, candidate_median + half, higher_is_better));
  const double diff = candidate_median - mean;
  if (!(spread > 0)) {
    out.p_value = diff == 0 ? 1.0 : 0.0;
  } else {
    out.p_value = 2.0 * boost::math::cdf(boost::math::complement(t_dist, std::fabs(diff) / spread));
  }
  return out;
}

double OrientedLogRatio(double baseline, double candidate, bool higher_is_better) {
  if (!(baseline > 0) || !(candidate > 0) || !std::isfinite(baseline) || !std::isfinite(candidate)) {
    return kNaN;
  }
  const double r = std::log(candidate / baseline);
  return higher_is_better ? -r : r;
}

double ChangeFromLogRatio(double r, bool higher_is_better) {
  if (std::isnan(r)) return kNaN;
  return higher_is_better ? 1.0 - std::exp(-r) : std::expm1(r);
}

ShiftEstimate HodgesLehmannShift(std::span<const double> x, std::span<const double> y, double confidence) {
  ShiftEstimate out;
  if (x.empty() || y.empty() || !AllFinite(x) || !AllFinite(y)) return out;
  std::vector<double> diffs;
  diffs.reserve(x.size() * y.size());
  for (double b : x) {
    for (double c : y) diffs.push_back(c - b);
  }
  std::sort(diffs.begin(), diffs.end());
  out.shift = Median(diffs);
  const unsigned m = static_cast<unsigned>(x.size()), n = static_cast<unsigned>(y.size());
  const double mn = static_cast<double>(m) * n;
  const double alpha = 1.0 - confidence;
  const bool small = m <= 30 && n <= 30;
  out.p_value = MannWhitneyU(x, y, small ? MannWhitneyMethod::kExact : MannWhitneyMethod::kAsymptotic).p_value;
  // k = how many differences are cut from each end: the largest k with
  // P(U <= k - 1) <= alpha / 2; P(U <= k - 1) = P(U >= mn - k + 1).
  size_t k = 0;
  if (small) {
    while (k + 1 <= static_cast<size_t>(mn / 2) &&
           MannWhitneyExactSf(m, n, mn - static_cast<double>(k + 1) + 1.0) <= alpha / 2.0) {
      ++k;
    }
  } else {
    const double z = boost::math::quantile(boost::math::normal(), 1.0 - alpha / 2.0);
    const double cut = std::floor(mn / 2.0 - z * std::sqrt(mn * (m + n + 1.0) / 12.0));
    k = cut > 0 ? static_cast<size_t>(cut) : 0;
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (k == 0) {
    out.ci = {-inf, inf};
  } else {
    out.ci = {diffs[k - 1], diffs[diffs.size() - k]};
  }
  return out;
}

namespace {

// Counts of subsets of {1..n} by rank sum 0..n(n+1)/2: the exact null
// distribution of the signed-rank statistic (each count over 2^n).
std::vector<long double> SignedRankCounts(unsigned n) {
  const size_t max = static_cast<size_t>(n) * (n + 1) / 2;
  std::vector<long double> c(max + 1, 0.0L);
  c[0] = 1.0L;
  for (unsigned r = 1; r <= n; ++r) {
    for (size_t s = max; s >= r; --s) c[s] += c[s - r];
  }
  return c;
}

// P(W+ <= w) under the null, exact, for n pairs.
double SignedRankCdf(unsigned n, double w) {
  if (w < 0) return 0.0;
  const std::vector<long double> c = SignedRankCounts(n);
  long double sum = 0;
  for (size_t s = 0; s < c.size() && static_cast<double>(s) <= w; ++s) sum += c[s];
  return static_cast<double>(sum / std::pow(2.0L, static_cast<long double>(n)));
}

constexpr unsigned kMaxExactPairs = 30;

}  // namespace

double WilcoxonSignedRankP(std::span<const double> d) {
  std::vector<double> nz;
  for (double x : d) {
    if (!std::isfinite(x)) return kNaN;
    if (x != 0) nz.push_back(x);
  }
  if (nz.empty()) return kNaN;
  std::vector<double> abs(nz.size());
  for (size_t i = 0; i < nz.size(); ++i) abs[i] = std::fabs(nz[i]);
  double tie_term = 0;
  const std::vector<double> ranks = MidRanks(abs, &tie_term);
  double w_plus = 0;
  for (size_t i = 0; i < nz.size(); ++i) {
    if (nz[i] > 0) w_plus += ranks[i];
  }
  const double n = static_cast<double>(nz.size());
  const double total = n * (n + 1) / 2;
  const double w = std::min(w_plus, total - w_plus);
  double p = kNaN;
  if (nz.size() <= kMaxExactPairs && tie_term == 0) {
    p = 2.0 * SignedRankCdf(static_cast<unsigned>(nz.size()), w);
  } else {
    const double mean = total / 2;
    const double sd = std::sqrt(n * (n + 1) * (2 * n + 1) / 24.0 - tie_term / 48.0);
    if (!(sd > 0)) return 1.0;
    const double z = (mean - w - 0.5) / sd;
    p = 2.0 * boost::math::cdf(boost::math::complement(boost::math::normal(), std::max(z, 0.0)));
  }
  return std::clamp(p, 0.0, 1.0);
}

ShiftEstimate HodgesLehmannPaired(std::span<const double> d, double confidence) {
  ShiftEstimate out;
  if (d.empty() || !AllFinite(d)) return out;
  std::vector<double> walsh;
  walsh.reserve(d.size() * (d.size() + 1) / 2);
  for (size_t i = 0; i < d.size(); ++i) {
    for (size_t j = i; j < d.size(); ++j) walsh.push_back((d[i] + d[j]) / 2.0);
  }
  std::sort(walsh.begin(), walsh.end());
  out.shift = Median(walsh);
  out.p_value = WilcoxonSignedRankP(d);
  if (std::isnan(out.p_value)) out.p_value = 1.0;  // every difference zero
  const unsigned n = static_cast<unsigned>(d.size());
  const double alpha = 1.0 - confidence;
  // k Walsh averages cut from each end: the largest k with P(W+ <= k-1) <= alpha/2.
  size_t k = 0;
  if (n <= kMaxExactPairs) {
    const std::vector<long double> c = SignedRankCounts(n);
    const long double all = std::pow(2.0L, static_cast<long double>(n));
    long double cdf = 0;
    for (size_t s = 0; s < c.size(); ++s) {
      cdf += c[s];  // P(W+ <= s)
      if (cdf / all > alpha / 2.0) break;
      k = s + 1;
    }
  } else {
    const double nn = n;
    const double z = boost::math::quantile(boost::math::normal(), 1.0 - alpha / 2.0);
    const double cut = std::floor(nn * (nn + 1) / 4 - z * std::sqrt(nn * (nn + 1) * (2 * nn + 1) / 24.0));
    k = cut > 0 ? static_cast<size_t>(cut) : 0;
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (k == 0 || k > walsh.size() / 2) {
    out.ci = {-inf, inf};
  } else {
    out.ci = {walsh[k - 1], walsh[walsh.size() - k]};
  }
  return out;
}

ShiftEstimate TShift(double baseline_mean, unsigned kb, double candidate_mean, unsigned kc, double spread,
                     double df, double confidence) {
  ShiftEstimate out;
  if (kb == 0 || kc == 0 || !(df >= 1) || !std::isfinite(spread) || spread < 0 ||
      !std::isfinite(baseline_mean) || !std::isfinite(candidate_mean)) {
    return out;
  }
  out.df = df;
  out.shift = candidate_mean - baseline_mean;
  const double se = spread * std::sqrt(1.0 / kb + 1.0 / kc);
  const boost::math::students_t t_dist(df);
  const double half = boost::math::quantile(t_dist, 1.0 - (1.0 - confidence) / 2.0) * se;
  out.ci = {out.shift - half, out.shift + half};
  if (!(se > 0)) {
    out.p_value = out.shift == 0 ? 1.0 : 0.0;
  } else {
    out.p_value = 2.0 * boost::math::cdf(boost::math::complement(t_dist, std::fabs(out.shift) / se));
  }
  return out;
}

ShiftEstimate PairedTShift(std::span<const double> d, double confidence) {
  ShiftEstimate out;
  if (d.size() < 2) return out;
  const double n = static_cast<double>(d.size());
  double mean = 0;
  for (double x : d) mean += x;
  mean /= n;
  double ss = 0;
  for (double x : d) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / (n - 1));
  // One sample of n against zero: TShift's se is spread·sqrt(1/kb + 1/kc),
  // which with kb = kc = 2n is sd / sqrt(n).
  const unsigned k = static_cast<unsigned>(2 * d.size());
  return TShift(0.0, k, mean, k, sd, n - 1, confidence);
}

double StudentTQuantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0) || !std::isfinite(df)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return boost::math::quantile(boost::math::students_t(df), p);
}

}  // namespace perfgate::gate
