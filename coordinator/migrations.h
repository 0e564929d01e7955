// The schema's versioned migrations, embedded from coordinator/migrations/.
#pragma once

#include <span>

namespace perfgate::coordinator {

/// One migration: applied once, in version order, in its own transaction.
struct Migration {
  int version;
  const char* name;
  const char* sql;
};

/// Every migration this binary knows, ascending by version.
std::span<const Migration> Migrations();

}  // namespace perfgate::coordinator
