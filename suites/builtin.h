// Every suite compiled into this binary, registered once.
#pragma once

#include "suites/registry.h"

namespace perfgate::suites {

/// The registry with every built-in suite; built on first use.
const Registry& BuiltinRegistry();

}  // namespace perfgate::suites
