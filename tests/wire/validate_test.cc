// The strict checks of Ingest requests (wire/validate.h): every refusal is
// INVALID_ARGUMENT naming the field.
#include "wire/validate.h"

#include <gmock/gmock.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "common/identity.h"
#include "wire/convert.h"

namespace perfgate::wire {
namespace {

using ::testing::HasSubstr;

v1::OpenRunRequest Open() {
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = "node-1";
  meta.environment = {"cpu-amd-epyc", {{"cpu_model", "AMD EPYC"}}};
  meta.branch = "main";
  meta.commit = "abc";
  meta.started_at = std::chrono::system_clock::now();
  meta.details = {{"gpu0.serial", "1654922001234"}};
  v1::OpenRunRequest r;
  ToProto(meta, &r);
  return r;
}

v1::ResultBatch Batch(std::vector<uint32_t> indices) {
  CaseResult c;
  c.benchmark = {"kernels", "copy", {{"bytes", "3145728"}}};
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  for (uint32_t i : indices) c.samples.push_back({i, {1.0}, false});
  c.status = CaseStatus::kOk;
  v1::ResultBatch b;
  b.set_run_id(NewUuid());
  b.set_sequence(1);
  ToProto(c, b.add_cases());
  return b;
}

// Sets `key` in a map of text on the wire, as a protobuf map's [] would.
void Put(google::protobuf::RepeatedPtrField<v1::TextEntry>* m, const std::string& key, const std::string& value) {
  for (v1::TextEntry& e : *m) {
    if (e.key() == key) {
      e.set_value(value);
      return;
    }
  }
  v1::TextEntry* e = m->Add();
  e->set_key(key);
  e->set_value(value);
}

void ExpectRefused(const absl::Status& s, const std::string& field) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(field));
}

TEST(ValidateTest, AWellFormedRunAndBatchPass) {
  EXPECT_TRUE(ValidateOpenRun(Open()).ok()) << ValidateOpenRun(Open());
  EXPECT_TRUE(ValidateBatch(Batch({0, 1, 2})).ok()) << ValidateBatch(Batch({0, 1, 2}));
}

TEST(ValidateTest, WhatTheConversionRefusesIsRefusedFirst) {
  // Found by the ingest_request fuzz target: no trigger passed the checks
  // and failed only in the conversion after them.
  v1::OpenRunRequest r = Open();
  r.set_trigger(v1::TRIGGER_UNSPECIFIED);
  ExpectRefused(ValidateOpenRun(r), "trigger");
}

TEST(ValidateTest, ANulByteIsRefusedNotTruncated) {
  v1::OpenRunRequest r = Open();
  r.set_branch(std::string("ma\0in", 5));
  ExpectRefused(ValidateOpenRun(r), "branch: holds a NUL byte");
}

TEST(ValidateTest, InvalidUtf8IsRefusedNamingTheField) {
  for (const std::string bad : {"\xff", "\xc0\xaf", "\xed\xa0\x80", "ab\xe2\x82", "\xf4\x90\x80\x80"}) {
    v1::OpenRunRequest r = Open();
    r.set_node(bad);
    ExpectRefused(ValidateOpenRun(r), "node: is not valid UTF-8");
  }
  v1::OpenRunRequest r = Open();
  Put(r.mutable_details(), "gpu0.serial", "\xfe");
  ExpectRefused(ValidateOpenRun(r), "details['gpu0.serial']");
  EXPECT_TRUE(IsUtf8("ünï ℕ⁰ 😀"));
}

TEST(ValidateTest, AMapKeyThatIsNotUtf8IsRefusedNamingTheKey) {
  v1::OpenRunRequest r = Open();
  Put(r.mutable_details(), "gpu\xff", "1");
  ExpectRefused(ValidateOpenRun(r), R"(details key "gpu\xff": is not valid UTF-8)");
  r = Open();
  Put(r.mutable_environment()->mutable_fields(), "\xc0\xaf", "x");
  ExpectRefused(ValidateOpenRun(r), R"(environment.fields key "\xc0\xaf": is not valid UTF-8)");
  v1::ResultBatch b = Batch({0});
  Put(b.mutable_cases(0)->mutable_benchmark()->mutable_params(), "by\xfftes", "1");
  ExpectRefused(ValidateBatch(b), R"(cases[0].benchmark.params key "by\xfftes": is not valid UTF-8)");
}

TEST(ValidateTest, AMapKeyGivenTwiceIsRefused) {
  v1::OpenRunRequest r = Open();
  *r.add_details() = r.details(0);
  ExpectRefused(ValidateOpenRun(r), R"(details key "gpu0.serial": is given twice)");
  v1::ResultBatch b = Batch({0});
  v1::BenchmarkId* id = b.mutable_cases(0)->mutable_benchmark();
  *id->add_params() = id->params(0);
  ExpectRefused(ValidateBatch(b), R"(cases[0].benchmark.params key "bytes": is given twice)");
}

// A client built when details were a map<string, bytes> sends each entry as
// a message of key 1 and value 2 under field 12: the same bytes as one
// TextEntry, so it is read as before.
TEST(ValidateTest, AMapSentByAnOlderClientIsReadAsTheSameEntries) {
  std::string wire;
  {
    google::protobuf::io::StringOutputStream raw(&wire);
    google::protobuf::io::CodedOutputStream out(&raw);
    const std::string entry = std::string("\x0a\x0bgpu0.serial\x12\x04", 15) + "1234";
    out.WriteTag(google::protobuf::internal::WireFormatLite::MakeTag(
        12, google::protobuf::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    out.WriteVarint32(static_cast<uint32_t>(entry.size()));
    out.WriteString(entry);
  }
  v1::OpenRunRequest r;
  ASSERT_TRUE(r.ParseFromString(wire));
  ASSERT_EQ(r.details_size(), 1);
  EXPECT_EQ(r.details(0).key(), "gpu0.serial");
  EXPECT_EQ(r.details(0).value(), "1234");
  // And what this version writes for one entry is that very encoding.
  v1::OpenRunRequest written;
  Put(written.mutable_details(), "gpu0.serial", "1234");
  EXPECT_EQ(written.SerializeAsString(), wire);
}

TEST(ValidateTest, EveryStringAndMapIsBounded) {
  v1::OpenRunRequest r = Open();
  r.set_branch(std::string(3000, 'b'));
  ExpectRefused(ValidateOpenRun(r), "branch: is 3000 bytes; at most 255");
  r = Open();
  r.set_repo(std::string(1 << 20, 'r'));
  ExpectRefused(ValidateOpenRun(r), "repo");
  r = Open();
  r.mutable_environment()->set_sku(std::string(3000, 's'));
  ExpectRefused(ValidateOpenRun(r), "environment.sku");
  r = Open();
  for (int i = 0; i < 40; ++i) Put(r.mutable_details(), "k" + std::to_string(i), std::string(1000, 'v'));
  ExpectRefused(ValidateOpenRun(r), "details: 4");  // 40 kB of details, over 16384
  r = Open();
  Put(r.mutable_details(), "big", std::string(8 << 20, 'v'));
  ExpectRefused(ValidateOpenRun(r), "details['big']");
}

TEST(ValidateTest, TimestampsOutsideTheRangeAreRefused) {
  v1::OpenRunRequest r = Open();
  r.mutable_started_at()->set_seconds(-5'600'000'000);  // the year 1792
  ExpectRefused(ValidateOpenRun(r), "started_at");
  r.mutable_started_at()->set_seconds(1'700'000'000);
  r.mutable_started_at()->set_nanos(-1);
  ExpectRefused(ValidateOpenRun(r), "started_at");
  r.mutable_started_at()->set_nanos(0);
  EXPECT_TRUE(ValidateOpenRun(r).ok());
}

TEST(ValidateTest, ADuplicateSampleIndexInABatchIsRefused) {
  ExpectRefused(ValidateBatch(Batch({0, 1, 1})), "sample index 1 appears twice");
  // The same case in two parts of one batch counts as one case.
  v1::ResultBatch b = Batch({0, 1});
  *b.add_cases() = b.cases(0);
  ExpectRefused(ValidateBatch(b), "sample index 0 appears twice");
}

TEST(ValidateTest, ASampleIndexAboveTheStoredRangeIsRefused) {
  ExpectRefused(ValidateBatch(Batch({2147483648u})), "index: 2147483648 is above 2147483647");
}

TEST(ValidateTest, BenchmarkIdsFollowTheKeyGrammarOfQueries) {
  for (const auto& [suite, name, value] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"ünï", "copy", "1"}, {"kernels", "co py", "1"}, {"kernels", "copy", "a b"},
           {"kernels", "copy", "\"q\""}, {"kernels", "copy", "é"}}) {
    v1::ResultBatch b = Batch({0});
    b.mutable_cases(0)->mutable_benchmark()->set_suite(suite);
    b.mutable_cases(0)->mutable_benchmark()->set_name(name);
    Put(b.mutable_cases(0)->mutable_benchmark()->mutable_params(), "bytes", value);
    ExpectRefused(ValidateBatch(b), "cases[0].benchmark");
    BenchmarkId id{suite, name, {{"bytes", value}}};
    EXPECT_FALSE(ParseBenchmarkKey(id.Key()).ok()) << id.Key();
  }
  // What ingest accepts, a query can name.
  BenchmarkId ok{"kernels", "copy", {{"bytes", "3145728"}, {"dtype", "fp16"}}};
  auto parsed = ParseBenchmarkKey(ok.Key());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->Key(), ok.Key());
  EXPECT_FALSE(ParseBenchmarkKey("kernels/copy{dtype=fp16,bytes=1}").ok());  // not sorted
}

TEST(ValidateTest, ACloseIsBounded) {
  v1::CloseRunRequest c;
  c.set_run_id(NewUuid());
  c.set_status(v1::RUN_COMPLETE);
  EXPECT_TRUE(ValidateCloseRun(c).ok());
  c.set_reason(std::string("x\0y", 3));
  ExpectRefused(ValidateCloseRun(c), "reason: holds a NUL byte");
  c.set_reason("");
  for (int i = 0; i < 65; ++i) c.add_invalid_reasons("throttled");
  ExpectRefused(ValidateCloseRun(c), "invalid_reasons");
  c.clear_invalid_reasons();
  c.set_status(v1::RUN_RUNNING);
  ExpectRefused(ValidateCloseRun(c), "status");
}

}  // namespace
}  // namespace perfgate::wire
