// The flag groups of the `moca` subcommands and the dispatch of the parsed one (cli.hpp).
#include "cli.hpp"
#include "data_flags.hpp"
#include "enum_option.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"

namespace moca::tools {

void add_data_options(CLI::App* app, DataOptions& d, bool split, Scope extra) {
  // a command on every window (predict) has no split flags to ignore
  add_data_flags(app, d, data::command_data_scope(split) | extra);
}

void add_runtime_options(CLI::App* app, model::RuntimeOptions& r, Scope scope) {
  add_schema_options(app, r, scope,  // model::RuntimeOptions::schema
                     {{"--tf32", "!--no-tf32"}, {"--cuda-graphs", "!--no-cuda-graphs"}});
  // The CUDA-only switches beside --device cpu (with auto the device is known at run time only).
  after_parse(app, [app, &r] {
    if (r.device != model::Device::kCpu) return;
    for (const char* flag : {"--tf32", "--cuda-graphs"}) {
      inert_option(*app, flag, "it is for CUDA runs; the device is cpu");
    }
  });
}

void add_dist_options(CLI::App* app, model::DistOptions& d) {
  add_schema_options(app, d, kEveryScope);  // model::DistOptions::schema
}

void add_no_progress(CLI::App* app, bool& no_progress) {
  app->add_flag("--no-progress", no_progress,
                "no progress bar (commands without one accept it and ignore it)");
}

int run_parsed(const std::vector<Subcommand>& subs) {
  for (const Subcommand& s : subs) {
    if (s.app->parsed()) return s.run();
  }
  return 0;
}

}  // namespace moca::tools
