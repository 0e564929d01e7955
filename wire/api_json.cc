#include "wire/api_json.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace perfgate::wire {

std::string ToApiJson(const google::protobuf::Message& message, bool indented) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = indented;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  // protobuf's printer does not fail on a message it can print: a string
  // field that is not UTF-8 (the coordinator checks every field it stores;
  // a probe's note may quote a program's output) is printed without its
  // bad bytes, with an error logged. "{}" only if that ever changes.
  if (!google::protobuf::util::MessageToJsonString(message, &out, options).ok()) return "{}";
  return out;
}

absl::Status FromApiJson(std::string_view text, google::protobuf::Message* message, std::string_view what) {
  message->Clear();
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(text.data(), text.size()), message, options);
  if (parsed.ok()) return absl::OkStatus();
  // The parser's first line names the field and the reason; the lines after
  // it quote the input, which may be anything (bytes that are not UTF-8
  // among them), so they are left out, and any byte beyond ASCII is shown
  // as '?'.
  std::string reason = parsed.message().as_string();
  reason = reason.substr(0, reason.find('\n'));
  for (char& c : reason) {
    if (static_cast<unsigned char>(c) >= 0x80) c = '?';
  }
  return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": ", reason));
}

}  // namespace perfgate::wire
