// An enum's names as one table in the enum's order: the name of a value, and
// the value of a name. Shared by the state enums whose names the HTTP API,
// the database and the webhooks carry (bisection_state.h,
// regression_state.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace perfgate {

/// The name of `value` in `names`, the table in the enum's order.
template <typename Enum, size_t N>
constexpr std::string_view EnumName(const std::string_view (&names)[N], Enum value) {
  return names[static_cast<size_t>(value)];
}

/// The value named `name` in `names`; nullopt for a name that is none.
template <typename Enum, size_t N>
std::optional<Enum> ParseEnumName(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace perfgate
