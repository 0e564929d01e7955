// The API's enums on the wire: each of the domain's names is the message
// enum's name without its prefix, in the same order, so a state or verdict
// never changes meaning between the coordinator, `perfgate` and the
// dashboard; and the API's JSON of a message refuses what the message lacks.
#include "wire/api_convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "absl/strings/ascii.h"
#include "wire/api_json.h"

namespace perfgate::wire {
namespace {

template <typename Domain, typename Message, size_t N>
void ExpectSameNames(const std::string_view (&names)[N], const std::string& prefix,
                     const google::protobuf::EnumDescriptor* descriptor) {
  ASSERT_EQ(static_cast<size_t>(descriptor->value_count()), N + 1) << descriptor->full_name();
  for (size_t i = 0; i < N; ++i) {
    const auto domain = static_cast<Domain>(i);
    const Message m = ToProto(domain);
    EXPECT_EQ(descriptor->FindValueByNumber(m)->name(), prefix + absl::AsciiStrToUpper(std::string(names[i])));
    EXPECT_EQ(FromProto(m), domain);
  }
  EXPECT_FALSE(FromProto(static_cast<Message>(0)).has_value()) << "UNSPECIFIED is no state";
  EXPECT_FALSE(FromProto(static_cast<Message>(N + 1)).has_value()) << "a number no value has";
}

TEST(ApiConvert, TheDomainsNamesAreTheMessagesInTheSameOrder) {
  ExpectSameNames<BisectionState, v1::BisectionState>(kBisectionStateNames, "BISECTION_STATE_",
                                                      v1::BisectionState_descriptor());
  ExpectSameNames<ProbeVerdict, v1::ProbeVerdict>(kProbeVerdictNames, "PROBE_VERDICT_", v1::ProbeVerdict_descriptor());
  ExpectSameNames<RegressionState, v1::RegressionState>(kRegressionStateNames, "REGRESSION_STATE_",
                                                        v1::RegressionState_descriptor());
}

TEST(ApiConvert, AnIntervalNotMeasuredIsNoInterval) {
  EXPECT_TRUE(IntervalOf(0.1, 0.2).has_value());
  EXPECT_FALSE(IntervalOf(NAN, 0.2).has_value());
  EXPECT_FALSE(IntervalOf(0.1, INFINITY).has_value());
  double low = 0, high = 0;
  GetInterval(false, v1::ChangeInterval(), &low, &high);
  EXPECT_TRUE(std::isnan(low) && std::isnan(high));
}

TEST(ApiJson, ReadsWhatItWritesAndRefusesWhatTheMessageLacks) {
  v1::BisectionProbe p;
  p.set_commit("c1");
  p.set_verdict(v1::PROBE_VERDICT_CARRIES);
  p.set_change(0.2);
  v1::BisectionProbe back;
  ASSERT_TRUE(FromApiJson(ToApiJson(p), &back, "probe").ok());
  EXPECT_EQ(back.SerializeAsString(), p.SerializeAsString());
  const absl::Status unknown = FromApiJson(R"({"commit": "c1", "colour": "red"})", &back, "probe");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("colour"), std::string::npos) << unknown;
  EXPECT_NE(unknown.message().find("probe"), std::string::npos) << unknown;
  EXPECT_FALSE(FromApiJson("not json", &back, "probe").ok());
  EXPECT_FALSE(FromApiJson(R"({"verdict": "PROBE_VERDICT_MAYBE"})", &back, "probe").ok());
  EXPECT_FALSE(FromApiJson(R"({"attempt": "x"})", &back, "probe").ok());
}

}  // namespace
}  // namespace perfgate::wire
