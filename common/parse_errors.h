// What every perfgate binary prints when CLI11 refuses its command line: a
// first word that names no command is told as "unknown command 'WORD'" with
// the commands there are, not as CLI11's "A subcommand is required".
// Header-only, for the binaries that build a CLI11 app (perfgate,
// perfgate-agent, perfgate-coordinator); the rest of common/ never sees CLI11.
#pragma once

#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "common/exit_codes.h"

namespace perfgate {

/// The deepest command given on the line (`app` itself when none), its
/// words appended to `path`.
inline CLI::App* DeepestCommand(CLI::App& app, std::string* path) {
  CLI::App* at = &app;
  for (std::vector<CLI::App*> given = at->get_subcommands(); !given.empty(); given = at->get_subcommands()) {
    at = given.front();
    *path += " " + at->get_name();
  }
  return at;
}

/// Prints why `app` refused its command line (the help to `out` when it was
/// asked for) and returns the exit code: 0 after --help, kExitError else.
/// A word where a command is needed (after the program, or after a command
/// that has commands of its own) is "<program>: unknown command 'WORD'",
/// followed by the commands there are and a pointer to --help.
inline int ReportParseError(CLI::App& app, const CLI::ParseError& e, const std::string& program,
                            std::ostream& out, std::ostream& err) {
  std::string path = program;
  CLI::App* at = DeepestCommand(app, &path);
  std::string word;
  if (at->get_require_subcommand_min() > 0) {
    for (const std::string& w : app.remaining(true)) {
      if (!w.empty() && w[0] != '-') {
        word = w;
        break;
      }
    }
  }
  if (word.empty()) return app.exit(e, out, err) == 0 ? kExitPass : kExitError;
  err << program << ": unknown command '" << word << "'\nCommands:";
  for (const CLI::App* command : at->get_subcommands({})) err << " " << command->get_name();
  err << "\nRun '" << path << " --help' for what each does.\n";
  return kExitError;
}

}  // namespace perfgate
