#pragma once
/// \file run_cli.hpp
/// The one main() wrapper of every moca program (tools/, simulations/, bench/).
///
/// Exit codes: 0 success; 2 usage error (a CLI11 parse error or std::invalid_argument: a bad
/// option or value); 1 any other failure (std::runtime_error, std::bad_alloc, LibTorch's
/// c10::Error, anything else). Every failure is one line `tool: message` on stderr; a LibTorch
/// backtrace is dropped unless the environment sets MOCA_DEBUG=1.
///
/// Also, for the life of the call: SIGPIPE is ignored, so a closed pipe or FIFO is a write error
/// reported like any other instead of a silent death; std::terminate (an exception escaping a
/// worker thread or a destructor) prints one line and exits 1 instead of aborting with a core;
/// standard output is flushed at the end and a failure to write it (e.g. a full disk) is exit 1.
#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"

namespace moca::tools {

/// Runs `body` (returning the exit status) with the error mapping above.
int run_program(const std::string& tool, const std::function<int()>& body);

/// Parses `argv` with `app` (--help prints the help and returns 0), then run_program(body).
/// Adds to `app` `--config FILE` (a TOML file of the long flag names; subcommands' keys as
/// `[command]` sections or `command.key`; the command line overrides it) and `--print-config`
/// (prints the effective options, given and defaults, in that format and returns 0 without
/// running `body`). An unknown key in the file, or a bad value of a key it sets, is a usage
/// error `FILE:LINE: ...` naming the key. Subcommands pass options they do not know to their
/// parent, so `tool command --config FILE` works.
int run_cli(const std::string& tool, CLI::App& app, int argc, char** argv,
            const std::function<int()>& body);

/// The effective options of a parsed `app` as JSON, the same keys and values --print-config
/// writes as TOML (a subcommand's options as an object under its name): what every program
/// records as its result JSON's "options", so a result tells how to repeat it.
nlohmann::json config_json(const CLI::App& app);

/// The effective options of this program's run (config_json of its parsed app), which run_cli
/// sets after parsing, before the body: what every results file of the run records as its
/// "options" (record_program_options), so a result tells how to repeat it. Empty for a library
/// caller (tests, Python), whose results record none.
nlohmann::json& program_options();

/// Sets doc["options"] to program_options() when the program has any.
void record_program_options(nlohmann::json& doc);

/// Registers `check`, which run_cli runs after parsing `argv` and before --print-config and the
/// body (in registration order): it declares the options the parsed values leave without effect
/// (inert_option). A check registered for a subcommand that was not given is skipped when `app`
/// says so (pass the subcommand).
void after_parse(const CLI::App* app, std::function<void()> check);

/// Whether the user stated `option`: gave it on the command line, or in the --config file at a
/// value other than its default (a --print-config file lists every option at its value, so
/// repeating a run with one states only what differs from the defaults).
bool stated(const CLI::Option& option);

/// Declares that `flag` of `app` takes no effect with the other options (`why`, e.g. "only
/// generator data uses it; the data is hapt:DIR"). Stated (above), it is a usage error
/// `FLAG (VALUE) takes no effect: WHY`; otherwise it is left out of --print-config and of
/// config_json (the results' "options"), which record only what took effect. A flag `app` does
/// not have is ignored.
void inert_option(const CLI::App& app, const std::string& flag, const std::string& why);

/// inert_option for each of `unused` (a library struct's unused_options()): the flag that sets
/// the field (`Owner::key`) in this program (field_flags.hpp), if it has one, with its why.
void inert_fields(const CLI::App& app, const std::vector<UnusedOption>& unused);

/// Where a program prints its human-readable report: std::cout, or std::cerr when its result
/// file `result_path` (--json FILE, kcca's --output FILE) is standard output (`-`, /dev/stdout),
/// so that standard output carries the JSON alone.
std::ostream& report_stream(const std::string& result_path);

/// True when MOCA_DEBUG=1: error messages keep LibTorch's backtrace.
bool debug_errors();

}  // namespace moca::tools
