#include "run_cli.hpp"

#include <cctype>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "field_flags.hpp"
#include "moca/common/error_text.hpp"
#include "moca/common/memory.hpp"
#include "moca/common/output_file.hpp"

namespace moca::tools {

namespace {

std::string g_tool = "moca";  // the running program's name, for the terminate handler
// The parse of this process (one run_cli per program): its command line, the checks to run
// after it and the options they found without effect.
std::vector<std::string> g_args;
std::vector<std::pair<const CLI::App*, std::function<void()>>> g_after_parse;
std::set<const CLI::Option*> g_inert;

// Whether `app` or a subcommand on its command line has the option `flag`.
bool has_flag_in(const CLI::App& app, const std::string& flag) {
  if (app.get_option_no_throw(flag) != nullptr) return true;
  for (const CLI::App* sub : app.get_subcommands())
    if (has_flag_in(*sub, flag)) return true;
  return false;
}

// The message as the program's user reads it: flags instead of library field names.
std::string message_of(const std::exception& e) {
  return with_flag_names(debug_errors() ? std::string(e.what()) : exception_text(e));
}

[[noreturn]] void on_terminate() {
  std::string message = "internal error: terminate called";
  if (const std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::exception& e) {
      message = "internal error: " + message_of(e);
    } catch (...) {
      message = "internal error: unknown exception";
    }
  }
  std::cerr << g_tool << ": " << message << std::endl;
  std::_Exit(1);
}

}  // namespace

std::ostream& report_stream(const std::string& result_path) {
  return writes_standard_output(result_path) ? std::cerr : std::cout;
}

bool debug_errors() {
  const char* v = std::getenv("MOCA_DEBUG");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

int run_program(const std::string& tool, const std::function<int()>& body) {
  g_tool = tool;
  std::set_terminate(on_terminate);
  std::signal(SIGPIPE, SIG_IGN);
  tune_allocator();
  int status = 1;
  try {
    status = body();
  } catch (const std::invalid_argument& e) {
    std::cerr << tool << ": " << message_of(e) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << tool << ": out of memory (std::bad_alloc)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << message_of(e) << "\n";
    return 1;
  } catch (...) {
    std::cerr << tool << ": unknown error (an exception that is not a std::exception)\n";
    return 1;
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << tool << ": cannot write standard output (" << std::strerror(errno) << ")\n";
    return 1;
  }
  return status;
}

namespace {

/// One `key = value` line of a config file.
struct ConfigKey {
  int line = 0;
  std::string key;
};

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

/// CLI11's "A subcommand is required" said for the program: the word given where a command was
/// expected (if any) and the commands there are, e.g. "unknown command 'bogus' (commands:
/// pretrain, launch, ...)" or, under a parsed command, "unknown data command 'x' (data commands:
/// inspect, export, window)". "" for any other error.
std::string command_error(const CLI::App& app, const CLI::ParseError& e) {
  if (std::string(e.what()) != "A subcommand is required") return "";
  const CLI::App* at = &app;
  std::string path;
  for (std::vector<CLI::App*> parsed = app.get_subcommands(); !parsed.empty();
       parsed = at->get_subcommands()) {
    at = parsed.front();
    path += at->get_name() + " ";
  }
  std::string names;
  for (const CLI::App* sub : at->get_subcommands({})) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  if (names.empty()) return "";
  for (const std::string& word : app.remaining(true)) {
    if (!word.empty() && word[0] != '-') {
      return "unknown " + path + "command '" + word + "' (" + path + "commands: " + names + ")";
    }
  }
  return "a " + path + "command is required (" + path + "commands: " + names + ")";
}

/// The FILE of --config FILE / --config=FILE in argv ("" if none).
std::string config_path(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--config" && i + 1 < argc) return argv[i + 1];
    if (a.rfind("--config=", 0) == 0) return a.substr(9);
  }
  return "";
}

/// Whether argv gives --key itself (the command line overrides the file).
bool on_command_line(const std::string& key, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--" + key || a.rfind("--" + key + "=", 0) == 0) return true;
  }
  return false;
}

/// The option a config key names (a top-level key, or `section.key` / a [section] key of a
/// subcommand), or nullptr.
const CLI::Option* config_option(const CLI::App& app, const std::string& key) {
  const size_t dot = key.find('.');
  if (dot != std::string::npos) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == key.substr(0, dot)) return config_option(*sub, key.substr(dot + 1));
    }
    return nullptr;
  }
  const CLI::Option* o = app.get_option_no_throw("--" + key);
  if (o == nullptr && key.size() == 1) o = app.get_option_no_throw("-" + key);
  return o != nullptr && o->get_configurable() ? o : nullptr;
}

/// Subcommands (at any depth) hand the options they do not know to their parent, so that
/// `tool command --config F` and `tool command --print-config` reach the app's.
void fall_through(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->fallthrough();
    fall_through(*sub);
  }
}

/// The keys of a config file, each checked against the program's options: an unknown key is
/// std::invalid_argument naming the file, line and key. A file that cannot be read is left to
/// CLI11 (its own error).
std::vector<ConfigKey> scan_config(const CLI::App& app, const std::string& path) {
  std::vector<ConfigKey> keys;
  std::ifstream in(path);
  std::string text, section;
  for (int line = 1; std::getline(in, text); ++line) {
    text = trimmed(text);
    if (text.empty() || text[0] == '#' || text[0] == ';') continue;
    if (text.front() == '[' && text.back() == ']') {
      section = trimmed(text.substr(1, text.size() - 2));
      continue;
    }
    std::string key = trimmed(text.substr(0, text.find('=')));
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') &&
        key.back() == key.front()) {
      key = key.substr(1, key.size() - 2);
    }
    if (!section.empty()) key = section + "." + key;
    if (config_option(app, key) == nullptr) {
      throw std::invalid_argument(path + ":" + std::to_string(line) + ": unknown key '" + key +
                                  "' (not an option of this program; --print-config lists them)");
    }
    keys.push_back({line, key});
  }
  return keys;
}

/// `message` prefixed with FILE:LINE: key 'K': when it names the option of a key the config
/// file set (and the command line did not).
std::string locate(const std::string& message, const std::string& path,
                   const std::vector<ConfigKey>& keys, int argc, char** argv) {
  for (const ConfigKey& k : keys) {
    const std::string flag = "--" + k.key.substr(k.key.rfind('.') + 1);
    for (size_t at = message.find(flag); at != std::string::npos; at = message.find(flag, at + 1)) {
      const size_t end = at + flag.size();
      const bool whole =
          end == message.size() || !(std::isalnum(static_cast<unsigned char>(message[end])) ||
                                     message[end] == '-' || message[end] == '_');
      if (whole && !on_command_line(k.key, argc, argv)) {
        return path + ":" + std::to_string(k.line) + ": key '" + k.key + "': " + message;
      }
    }
  }
  return message;
}

/// The values of one option as the config file records them: what was given (command line or
/// file), else its default; nullopt to leave it out (an unset flag or an option without a
/// default, or an empty list default).
std::optional<std::vector<std::string>> config_items(const CLI::Option& o) {
  if (o.count() > 0) return o.reduced_results();
  const std::string d = o.get_default_str();
  if (o.get_expected_min() == 0 || d.empty()) return std::nullopt;
  if (o.get_items_expected_max() > 1 && d.size() >= 2 && d.front() == '[' && d.back() == ']') {
    if (d.size() == 2) return std::nullopt;
    return CLI::detail::split(d.substr(1, d.size() - 2), ',');
  }
  return std::vector<std::string>{d};
}

/// Whether `o` is written to the config: configurable, named, and not excluded by a given option.
bool recorded(const CLI::Option& o) {
  if (!o.get_configurable() || o.get_single_name().empty() || g_inert.count(&o) != 0) return false;
  if (o.count() > 0) return true;
  for (const CLI::Option* x : o.get_excludes()) {
    if (x->count() > 0) return false;
  }
  return true;
}

/// The effective options of `app` and its parsed subcommands as TOML: every configurable option
/// that was given, and every other one with a default unless a given option excludes it.
void write_config(const CLI::App& app, const std::string& prefix, std::ostream& out) {
  for (const CLI::Option* o : app.get_options({})) {
    if (!recorded(*o)) continue;
    if (const auto items = config_items(*o)) {
      out << prefix << o->get_single_name() << " = "
          << CLI::detail::ini_join(*items, ',', '[', ']', '"', '\'') << "\n";
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) {
    write_config(*sub, prefix + sub->get_name() + ".", out);
  }
}

/// One config value as JSON, typed as a TOML reader types what write_config writes (CLI11's
/// convert_arg_for_ini): true/false, a number (an integer when it is one), else a string.
nlohmann::json json_item(const std::string& arg) {
  if (arg == "true" || arg == "false") return arg == "true";
  const bool hex = arg.size() > 1 && arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X');
  double value = 0;
  if (!arg.empty() && !hex && CLI::detail::lexical_cast(arg, value)) {
    std::int64_t whole = 0;
    if (arg.find_first_of(".eEnN") == std::string::npos && CLI::detail::lexical_cast(arg, whole)) {
      return whole;
    }
    return value;
  }
  return arg;
}

}  // namespace

void after_parse(const CLI::App* app, std::function<void()> check) {
  g_after_parse.emplace_back(app, std::move(check));
}

bool stated(const CLI::Option& o) {
  if (o.count() == 0) return false;
  for (const std::string& arg : g_args) {
    for (const std::string& name : o.get_lnames()) {
      if (arg == "--" + name || arg.rfind("--" + name + "=", 0) == 0) return true;
    }
    for (const std::string& name : o.get_snames()) {
      if (arg.rfind("-" + name, 0) == 0) return true;
    }
  }
  // from the config file: stated unless it holds the default
  const auto given = o.reduced_results();
  const std::string d = o.get_default_str();
  if (given.size() == 1 && given.front() == d) return false;
  return !(d.size() >= 2 && d.front() == '[' && d.back() == ']' &&
           CLI::detail::join(given, ",") == d.substr(1, d.size() - 2));
}

void inert_option(const CLI::App& app, const std::string& flag, const std::string& why) {
  const CLI::Option* o = app.get_option_no_throw(flag);
  if (o == nullptr) return;
  if (stated(*o)) {
    const auto given = o->reduced_results();
    const std::string value = given.empty() ? "" : " (" + CLI::detail::join(given, ",") + ")";
    throw std::invalid_argument(flag + value + " takes no effect: " + why);
  }
  g_inert.insert(o);
}

void inert_fields(const CLI::App& app, const std::vector<UnusedOption>& unused) {
  const auto has_flag = [&app](const std::string& f) { return has_flag_in(app, f); };
  for (const UnusedOption& u : unused) {
    const std::string flag = with_flag_names(u.field, has_flag);
    if (flag.rfind("--", 0) == 0) inert_option(app, flag, u.why);
  }
}

nlohmann::json config_json(const CLI::App& app) {
  nlohmann::json j = nlohmann::json::object();
  for (const CLI::Option* o : app.get_options({})) {
    if (!recorded(*o)) continue;
    if (const auto items = config_items(*o)) {
      nlohmann::json& v = j[o->get_single_name()];
      if (items->size() == 1) {
        v = json_item(items->front());
      } else {
        v = nlohmann::json::array();
        for (const std::string& item : *items) v.push_back(json_item(item));
      }
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) j[sub->get_name()] = config_json(*sub);
  return j;
}

nlohmann::json& program_options() {
  static nlohmann::json options;
  return options;
}

void record_program_options(nlohmann::json& doc) {
  if (!program_options().empty()) doc["options"] = program_options();
}

int run_cli(const std::string& tool, CLI::App& app, int argc, char** argv,
            const std::function<int()>& body) {
  app.set_config("--config", "",
                 "read options from this TOML file (`key = value`, keys are the long flag "
                 "names; the command line overrides it)");
  bool print_config = false;
  app.add_flag("--print-config", print_config,
               "print the effective options (given and defaults) as a --config file, then exit")
      ->configurable(false);
  app.allow_config_extras(CLI::config_extras_mode::error);
  fall_through(app);
  const std::string path = config_path(argc, argv);
  std::vector<ConfigKey> keys;
  // The library's messages name option fields; the user reads this program's flags.
  const auto has_flag = [&app](const std::string& flag) { return has_flag_in(app, flag); };
  g_args.assign(argv + 1, argv + argc);
  try {
    if (!path.empty()) keys = scan_config(app, path);
    app.parse(argc, argv);
    for (const auto& [owner, check] : g_after_parse) {
      if (owner == nullptr || owner->parsed()) check();
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string command = command_error(app, e);
    std::cerr << tool << ": "
              << (command.empty() ? locate(with_flag_names(e.what()), path, keys, argc, argv)
                                  : command)
              << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << tool << ": " << locate(with_flag_names(e.what(), has_flag), path, keys, argc, argv)
              << "\n";
    return 2;
  }
  if (print_config) {
    return run_program(tool, [&] {
      write_config(app, "", std::cout);
      return 0;
    });
  }
  program_options() = config_json(app);
  return run_program(tool, [&] {
    try {
      return body();
    } catch (const std::invalid_argument& e) {
      const std::string message = with_flag_names(e.what(), has_flag);
      throw std::invalid_argument(keys.empty() ? message : locate(message, path, keys, argc, argv));
    }
  });
}

}  // namespace moca::tools
