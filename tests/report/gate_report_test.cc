#include "report/gate_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>


#include "tests/support/processes.h"

namespace perfgate::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr char kTriad[] = "kernels/triad{n=67108864}";
constexpr char kGemm[] = "kernels/gemm{dtype=bf16,k=8192,m=8192,n=8192}";
constexpr char kNew[] = "kernels/scan{n=1024}";
constexpr char kCopy[] = "kernels/copy{bytes=268435456}";
// Every character XML and Markdown treat specially.
constexpr char kNasty[] = "custom/odd{label=<a&b\"c'd>|x}";

gate::MetricVerdict Verdict(const std::string& benchmark, const std::string& metric,
                            gate::Verdict verdict, double baseline, double candidate, double change,
                            double tolerance, bool gating = true) {
  gate::MetricVerdict v;
  v.benchmark = benchmark;
  v.metric = metric;
  v.unit = metric == "time" ? "ms" : "GB/s";
  v.direction = metric == "time" ? Direction::kLowerIsBetter : Direction::kHigherIsBetter;
  v.baseline_median = baseline;
  v.candidate_median = candidate;
  v.change = change;
  v.tolerance = tolerance;
  v.floor = kNaN;
  v.verdict = verdict;
  v.gating = gating;
  v.candidate_samples = 30;
  v.baseline_runs = std::isnan(baseline) ? 0 : 3;
  v.note = "note for " + benchmark;
  // A tested change carries its interval and p-values; an untested one NaN.
  const bool tested = !std::isnan(change);
  v.change_ci_low = tested ? change - 0.01 : kNaN;
  v.change_ci_high = tested ? change + 0.01 : kNaN;
  v.p_value = tested ? 0.0005 : kNaN;
  v.p_adjusted = tested ? 0.002 : kNaN;
  v.method = tested ? gate::Method::kHistory : gate::Method::kNone;
  return v;
}

// Four metrics, worst first as the gate sorts them: one gating regression,
// one advisory regression, one without baseline, one pass.
gate::GateReport RegressionReport() {
  gate::GateReport r;
  r.report_id = 42;
  r.candidate_run_id = "6f1c2a9e-1b7d-4c3e-9a55-0e2f4b8d9c10";
  r.sku = "h100-sxm5-80gb";
  r.candidate_branch = "feature/faster-triad";
  r.candidate_commit = "0123456789abcdef0123456789abcdef01234567";
  r.baseline_branch = "main";
  r.baseline_run_ids = {"run-a", "run-b", "run-c"};
  r.fdr = 0.05;
  std::vector<gate::MetricVerdict>& verdicts = r.result.verdicts;
  verdicts.push_back(Verdict(kTriad, "bandwidth", gate::Verdict::kRegression, 16.0, 12.03, 0.248, 0.10));
  verdicts.push_back(Verdict(kGemm, "bandwidth", gate::Verdict::kRegression, 700, 665, 0.05, 0.02, false));
  verdicts.push_back(Verdict(kNew, "time", gate::Verdict::kNoBaseline, kNaN, 1.5, kNaN, 0.03));
  verdicts.push_back(Verdict(kCopy, "time", gate::Verdict::kPass, 10.0, 10.1, 0.01, 0.03));
  r.result.outcome = gate::Outcome::kRegression;
  r.result.summary = "1 of 4 metrics on h100-sxm5-80gb regressed";
  return r;
}

gate::GateReport PassReport() {
  gate::GateReport r = RegressionReport();
  r.result.verdicts.erase(r.result.verdicts.begin());
  r.result.outcome = gate::Outcome::kPass;
  return r;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A small XML reader, strict enough to catch what a report writer gets wrong:
// unbalanced tags, unquoted or unescaped attribute values, raw '<' or '&' in
// text, more than one root. It records every element with its decoded
// attributes.
struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::string parent;
};

class XmlReader {
 public:
  explicit XmlReader(const std::string& text) : text_(text) {}

  // True when the text is well-formed; error() says why not.
  bool Read() {
    if (text_.compare(0, 5, "<?xml") == 0) {
      pos_ = text_.find("?>");
      if (pos_ == std::string::npos) return Fail("unterminated prolog");
      pos_ += 2;
    }
    int roots = 0;
    while (pos_ < text_.size()) {
      if (text_[pos_] != '<') {
        std::string ignored;
        if (!ReadText('<', &ignored)) return false;
        continue;
      }
      ++pos_;
      if (pos_ < text_.size() && text_[pos_] == '/') {
        ++pos_;
        const std::string name = ReadName();
        if (stack_.empty() || stack_.back() != name) return Fail("unbalanced </" + name + ">");
        stack_.pop_back();
        if (!Expect('>')) return false;
        continue;
      }
      XmlElement e;
      e.name = ReadName();
      if (e.name.empty()) return Fail("empty tag name");
      e.parent = stack_.empty() ? "" : stack_.back();
      if (stack_.empty() && ++roots > 1) return Fail("more than one root element");
      while (true) {
        SkipSpace();
        if (pos_ >= text_.size()) return Fail("unterminated tag");
        if (text_[pos_] == '/' || text_[pos_] == '>') break;
        const std::string attribute = ReadName();
        if (attribute.empty() || !Expect('=') || !Expect('"')) return Fail("bad attribute");
        std::string value;
        if (!ReadText('"', &value)) return false;
        ++pos_;
        if (!e.attributes.emplace(attribute, value).second) return Fail("repeated attribute");
      }
      const bool empty = text_[pos_] == '/';
      if (empty) ++pos_;
      if (!Expect('>')) return false;
      if (!empty) stack_.push_back(e.name);
      elements_.push_back(std::move(e));
    }
    if (!stack_.empty()) return Fail("unclosed <" + stack_.back() + ">");
    return roots == 1 || Fail("no root element");
  }

  const std::vector<XmlElement>& elements() const { return elements_; }
  const std::string& error() const { return error_; }

  std::vector<XmlElement> Named(const std::string& name) const {
    std::vector<XmlElement> out;
    for (const XmlElement& e : elements_) {
      if (e.name == name) out.push_back(e);
    }
    return out;
  }

 private:
  bool Fail(const std::string& why) {
    error_ = why + " at offset " + std::to_string(pos_);
    return false;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Expect(char c) {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != c) return Fail(std::string("expected '") + c + "'");
    ++pos_;
    return true;
  }
  std::string ReadName() {
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            text_[pos_] == '-' || text_[pos_] == ':')) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
  // Reads up to (not including) `end`, decoding entities; refuses raw '<'
  // and a bare '&'.
  bool ReadText(char end, std::string* out) {
    static const std::map<std::string, std::string> kEntities = {
        {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
    while (pos_ < text_.size() && text_[pos_] != end) {
      const char c = text_[pos_];
      if (c == '<') return Fail("raw '<' in text or attribute");
      if (c == '&') {
        const size_t semi = text_.find(';', pos_);
        if (semi == std::string::npos) return Fail("bare '&'");
        const std::string entity = text_.substr(pos_ + 1, semi - pos_ - 1);
        if (kEntities.count(entity) != 0) {
          *out += kEntities.at(entity);
        } else if (entity.size() > 1 && entity[0] == '#' &&
                   entity.find_first_not_of("0123456789", 1) == std::string::npos) {
          *out += static_cast<char>(std::stoi(entity.substr(1)));
        } else {
          return Fail("unknown entity &" + entity + ";");
        }
        pos_ = semi + 1;
        continue;
      }
      if (end == '"' && c == '"') break;
      *out += c;
      ++pos_;
    }
    if (end == '"' && pos_ >= text_.size()) return Fail("unterminated attribute value");
    return true;
  }

  const std::string text_;
  size_t pos_ = 0;
  std::vector<std::string> stack_;
  std::vector<XmlElement> elements_;
  std::string error_;
};

TEST(ReportTable, HeaderNamesCandidateSkuBaselineBranchAndRuns) {
  const std::string table = RenderTable(RegressionReport());
  EXPECT_THAT(table, StartsWith("perfgate gate: candidate run 6f1c2a9e-1b7d-4c3e-9a55-0e2f4b8d9c10 "
                                "(feature/faster-triad @ 0123456789ab) on h100-sxm5-80gb vs "
                                "main, 3 baseline runs\n"));
}

TEST(ReportTable, HeaderNamesTheImagesOnlyWhenARunCameFromOne) {
  gate::GateReport report = RegressionReport();
  const std::string a = "sha256:" + std::string(64, 'a'), b = "sha256:" + std::string(64, 'b');
  report.candidate_image_digest = a;
  report.baseline_image_digests = {a};
  EXPECT_THAT(RenderTable(report), HasSubstr("main, 3 baseline runs; image " + a + "\n"));
  report.baseline_image_digests = {b, ""};
  EXPECT_THAT(RenderTable(report), HasSubstr("; image " + a + " vs baseline images " + b + ", (none)\n"));
  EXPECT_THAT(RenderJUnit(report), HasSubstr("name=\"baseline_image_digests\" value=\"" + b + ",\""));
  report.candidate_image_digest.clear();
  report.baseline_image_digests.clear();
  EXPECT_THAT(RenderTable(report), Not(HasSubstr("image")));
}

TEST(ReportTable, HasColumnsAndOneRowPerVerdictInServerOrder) {
  const std::string table = RenderTable(RegressionReport());
  for (const char* column :
       {"benchmark", "metric", "baseline", "candidate", "change %", "95% CI %", "p adj",
        "tolerance %", "verdict"}) {
    EXPECT_THAT(table, HasSubstr(column));
  }
  // The first mention of each key is its row; notes and the verdict line follow the table.
  const size_t triad = table.find(kTriad);
  const size_t gemm = table.find(kGemm);
  const size_t scan = table.find(kNew);
  const size_t copy = table.find(kCopy);
  ASSERT_NE(triad, std::string::npos);
  ASSERT_NE(copy, std::string::npos);
  EXPECT_LT(triad, gemm);
  EXPECT_LT(gemm, scan);
  EXPECT_LT(scan, copy);
  EXPECT_THAT(table, HasSubstr("16 GB/s"));
  EXPECT_THAT(table, HasSubstr("12.03 GB/s"));
  EXPECT_THAT(table, HasSubstr("+24.8"));
  EXPECT_THAT(table, HasSubstr("10.0"));
}

TEST(ReportTable, MarksAdvisoryMetrics) {
  const std::string table = RenderTable(RegressionReport());
  const size_t gemm_line = table.find(kGemm);
  const std::string line = table.substr(gemm_line, table.find('\n', gemm_line) - gemm_line);
  EXPECT_THAT(line, HasSubstr("regression (advisory)"));
  const size_t triad_line = table.find(kTriad);
  EXPECT_THAT(table.substr(triad_line, table.find('\n', triad_line) - triad_line),
              Not(HasSubstr("advisory")));
}

TEST(ReportTable, SaysOnceUnderTheRowsWhatAdvisoryMeans) {
  const std::string legend =
      "(advisory): a metric the policy does not gate on: it is shown but never fails the gate\n";
  const std::string table = RenderTable(RegressionReport());
  const size_t at = table.find(legend);
  ASSERT_NE(at, std::string::npos) << table;
  EXPECT_EQ(at, table.rfind(legend));
  EXPECT_GT(at, table.find(kCopy));  // under the last row
  EXPECT_LT(at, table.find("\nperfgate gate: REGRESSION"));
  EXPECT_THAT(RenderMarkdown(RegressionReport()), HasSubstr("it is shown but never fails the gate"));
  gate::GateReport all_gating = PassReport();
  for (gate::MetricVerdict& v : all_gating.result.verdicts) v.gating = true;
  EXPECT_THAT(RenderTable(all_gating), Not(HasSubstr("advisory")));
}

TEST(ReportTable, EndsWithRegressionVerdictLineNamingTheWorst) {
  const std::string table = RenderTable(RegressionReport());
  EXPECT_THAT(table, HasSubstr("\nperfgate gate: REGRESSION \u2014 1 of 4 metrics regressed "
                               "(kernels/triad{n=67108864} bandwidth +24.8 %); 1 advisory metric "
                               "regressed without failing the gate\n"));
  EXPECT_EQ(table.back(), '\n');
  EXPECT_EQ(table.rfind("perfgate gate: REGRESSION"), table.rfind("perfgate gate:"));
}

TEST(ReportTable, ListsTheNoteOfEachFailure) {
  const std::string table = RenderTable(RegressionReport());
  EXPECT_THAT(table, HasSubstr(std::string(kTriad) + " bandwidth: note for " + kTriad));
  EXPECT_THAT(table, Not(HasSubstr(std::string("note for ") + kCopy)));
}

TEST(ReportTable, PassingReportEndsWithPass) {
  const std::string table = RenderTable(PassReport());
  EXPECT_THAT(table, HasSubstr("\nperfgate gate: PASS"));
  EXPECT_THAT(table, Not(HasSubstr("REGRESSION")));
}

TEST(ReportMarkdown, StartsWithBoldStatusWordAndSummary) {
  const std::string md = RenderMarkdown(RegressionReport());
  EXPECT_THAT(md, StartsWith("**perfgate gate: REGRESSION** \u2014 1 of 4 metrics regressed"));
  EXPECT_THAT(md, HasSubstr("h100-sxm5-80gb"));
  EXPECT_THAT(md, HasSubstr("3 baseline runs"));
  EXPECT_THAT(RenderMarkdown(PassReport()), StartsWith("**perfgate gate: PASS**"));
}

TEST(ReportMarkdown, TablesRegressionsThenEverythingInsideDetails) {
  const std::string md = RenderMarkdown(RegressionReport());
  const size_t details = md.find("<details><summary>All 4 metrics</summary>");
  ASSERT_NE(details, std::string::npos);
  EXPECT_NE(md.find("</details>", details), std::string::npos);
  const std::string before = md.substr(0, details);
  const std::string inside = md.substr(details);
  // The regressions table, above the fold, has the triad row with its numbers
  // and its note, and not the passing copy.
  EXPECT_THAT(before, HasSubstr("| kernels/triad{n=67108864} | bandwidth | 16 GB/s | 12.03 GB/s | "
                                "+24.8 | \\[+23.8, +25.8\\] | 0.0020 | 10.0 | regression |"));
  EXPECT_THAT(before, HasSubstr("note for kernels/triad"));
  EXPECT_THAT(before, Not(HasSubstr(kCopy)));
  EXPECT_THAT(inside, HasSubstr(kCopy));
  EXPECT_THAT(inside, HasSubstr(kNew));
  EXPECT_EQ(Count(inside, "\n| kernels/"), 4u);
}

TEST(ReportMarkdown, PassingReportSaysNothingRegressed) {
  gate::GateReport r = PassReport();
  r.result.verdicts.erase(r.result.verdicts.begin());  // drop the advisory regression too
  EXPECT_THAT(RenderMarkdown(r), HasSubstr("No metric regressed."));
}

TEST(ReportMarkdown, EscapesTableBreakingCharacters) {
  gate::GateReport r = RegressionReport();
  r.result.verdicts[0].benchmark = kNasty;
  const std::string md = RenderMarkdown(r);
  EXPECT_THAT(md, HasSubstr("custom/odd{label=&lt;a&amp;b\"c'd&gt;\\|x}"));
  EXPECT_THAT(md, Not(HasSubstr("<a&b")));
}

TEST(ReportJUnit, IsWellFormedWithOneCasePerVerdict) {
  const std::string xml = RenderJUnit(RegressionReport());
  XmlReader reader(xml);
  ASSERT_TRUE(reader.Read()) << reader.error() << "\n" << xml;
  const auto suites = reader.Named("testsuite");
  ASSERT_EQ(suites.size(), 1u);
  EXPECT_EQ(suites[0].parent, "");
  EXPECT_EQ(suites[0].attributes.at("name"), "perfgate gate");
  EXPECT_EQ(suites[0].attributes.at("tests"), "4");
  EXPECT_EQ(suites[0].attributes.at("failures"), "1");  // the advisory one does not fail
  EXPECT_EQ(suites[0].attributes.at("skipped"), "1");

  const auto cases = reader.Named("testcase");
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].attributes.at("classname"), kTriad);
  EXPECT_EQ(cases[0].attributes.at("name"), "bandwidth");
  EXPECT_EQ(cases[3].attributes.at("classname"), kCopy);

  const auto failures = reader.Named("failure");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].parent, "testcase");
  EXPECT_EQ(failures[0].attributes.at("type"), "regression");
  EXPECT_THAT(failures[0].attributes.at("message"), HasSubstr("note for kernels/triad"));
  EXPECT_EQ(reader.Named("skipped").size(), 1u);
}

TEST(ReportJUnit, FailsOnBelowFloorAndMissingToo) {
  gate::GateReport r = RegressionReport();
  r.result.verdicts[2].verdict = gate::Verdict::kMissing;
  r.result.verdicts[3].verdict = gate::Verdict::kBelowFloor;
  XmlReader reader(RenderJUnit(r));
  ASSERT_TRUE(reader.Read()) << reader.error();
  EXPECT_EQ(reader.Named("failure").size(), 3u);
  EXPECT_EQ(reader.Named("skipped").size(), 0u);
  EXPECT_EQ(reader.Named("testsuite")[0].attributes.at("failures"), "3");
}

TEST(ReportJUnit, EscapesBenchmarkKeysAndNotes) {
  gate::GateReport r = RegressionReport();
  r.result.verdicts[0].benchmark = kNasty;
  r.result.verdicts[0].note = "median <12> & \"worse\"\nsee 'docs'";
  r.result.summary = "</testsuite><evil>";
  const std::string xml = RenderJUnit(r);
  EXPECT_THAT(xml, Not(HasSubstr("<a&b")));
  EXPECT_THAT(xml, Not(HasSubstr("<evil>")));
  XmlReader reader(xml);
  ASSERT_TRUE(reader.Read()) << reader.error() << "\n" << xml;
  EXPECT_EQ(reader.Named("testcase")[0].attributes.at("classname"), kNasty);
  EXPECT_THAT(reader.Named("failure")[0].attributes.at("message"),
              HasSubstr("median <12> & \"worse\"\nsee 'docs'"));
}

TEST(ReportExitCode, IsOneOnRegressionAndZeroOnPass) {
  EXPECT_EQ(ExitCode(RegressionReport()), 1);
  EXPECT_EQ(ExitCode(PassReport()), 0);
}

TEST(ReportExitCode, IsThreeWhenInconclusive) {
  gate::GateReport r = PassReport();
  r.result.outcome = gate::Outcome::kInconclusive;
  r.result.verdicts[2].verdict = gate::Verdict::kTooNoisy;  // the gating copy time
  EXPECT_EQ(ExitCode(r), 3);
  const std::string table = RenderTable(r);
  EXPECT_THAT(table, HasSubstr("perfgate gate: INCONCLUSIVE \u2014 2 of 3 metrics could not be judged"));
  EXPECT_THAT(table, HasSubstr("+1.0  [+0.0, +2.0]  0.0020          3.0  too noisy"));
  // JUnit shows an undecided metric as skipped, never as passed.
  EXPECT_THAT(RenderJUnit(r), HasSubstr("<skipped message=\"too noisy"));
}

TEST(ReportTable, NamesTheReasonsAnEnvironmentWasUnfit) {
  gate::GateReport r = PassReport();
  r.result.outcome = gate::Outcome::kInconclusive;
  r.result.verdicts[0].verdict = gate::Verdict::kInvalidEnvironment;
  r.result.invalid_reasons.push_back("GPU 0: PCIe link gen 4 x16 below its maximum gen 5 x16");
  EXPECT_THAT(RenderTable(r), HasSubstr("Environment unfit for gating:\n  - GPU 0: PCIe link gen 4"));
  EXPECT_THAT(RenderMarkdown(r), HasSubstr("- GPU 0: PCIe link gen 4"));
}

// The JSON renderer a caller hands WriteReportFiles (the wire's, in the commands).
std::string SummaryJson(const gate::GateReport& r) { return "{\"summary\": \"" + r.result.summary + "\"}\n"; }

TEST(ReportFiles, WritesEachRenderingThatHasAPathAndNamesAFileItCannotWrite) {
  auto dir = perfgate::testing::TempDir::Create("perfgate-report-files-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const gate::GateReport report = RegressionReport();
  ASSERT_TRUE(WriteReportFiles(report, dir->Join("r.md"), "", dir->Join("r.json"), SummaryJson).ok());
  auto md = perfgate::testing::ReadFile(dir->Join("r.md"));
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(*md, RenderMarkdown(report));
  auto json = perfgate::testing::ReadFile(dir->Join("r.json"));
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*json, SummaryJson(report));
  EXPECT_FALSE(perfgate::testing::ReadFile(dir->Join("r.xml")).ok());  // no path, no file

  const std::string nowhere = dir->Join("no-such-dir/r.xml");
  const absl::Status s = WriteReportFiles(report, "", nowhere, "", SummaryJson);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr(nowhere));
}

}  // namespace
}  // namespace perfgate::report
