// The result formats perfgate reads (formats/ only): each format's file
// defines one Format — its name, what tells its content apart, its reader —
// and format_registry.cc lists them in the order detection tries them.
// Adding a format is a file here and its line in that table; the list of
// accepted formats an unknown file is refused with comes from the table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "formats/json_fields.h"

namespace perfgate::formats {

/// One result format. A JSON format sets the json members, a text format
/// (nccl-tests) the text members; the others stay null.
struct Format {
  const char* name;         // ResultSet::format, and what --format takes
  const char* description;  // how a tool writes it and what tells it apart, for the accepted-formats text
  bool (*looks_like_json)(const json& root);
  // `name` is the file's path (nvbench finds its sample-time files beside it).
  ResultSet (*read_json)(const json& root, const std::string& name);
  bool (*looks_like_text)(const std::string& text);
  ResultSet (*read_text)(const std::string& text, const std::string& name);
};

/// Every format, in the order detection tries them (a perfgate file first;
/// pytest-benchmark and nvbench, whose files also hold "benchmarks", before
/// Google Benchmark; Bencher's loose shape last).
const std::vector<const Format*>& Formats();

/// The format of that name; nullptr when there is none.
const Format* FindFormat(std::string_view name);

/// "expected one of: NAME (how it is made: what tells it apart); ...".
std::string AcceptedFormats();

}  // namespace perfgate::formats
