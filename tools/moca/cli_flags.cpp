// The flag groups of the `moca` subcommands and the dispatch of the parsed one (cli.hpp).
#include "cli.hpp"
#include "data_flags.hpp"
#include "enum_option.hpp"
#include "run_cli.hpp"

namespace moca::tools {

void add_data_options(CLI::App* app, DataOptions& d, bool split) {
  // a command on every window (predict) has no split flags to ignore
  add_data_flags(app, d, data::command_data_scope(split));
}

void add_runtime_options(CLI::App* app, model::RuntimeOptions& r, bool training) {
  add_enum_option(app, "--device", r.device, model::kDeviceNames, "auto | cpu | cuda");
  app->add_option("--threads", r.threads, "CPU threads (0 = hardware cores)")
      ->capture_default_str();
  app->add_flag("--tf32,!--no-tf32", r.tf32,
                "CUDA: float32 products on the tensor cores' TF32 (default) or in full float32");
  if (training) {
    add_enum_option(app, "--precision", r.precision, model::kPrecisionNames,
                    "fp32 | bf16 (autocast of the training forward passes; meant for CUDA)");
    app->add_flag("--cuda-graphs,!--no-cuda-graphs", r.cuda_graphs,
                  "CUDA pre-training: the step replayed as a CUDA graph (default) or every step "
                  "eager");
  }
  // The CUDA-only switches beside --device cpu (with auto the device is known at run time only).
  after_parse(app, [app, &r] {
    if (r.device != model::Device::kCpu) return;
    for (const char* flag : {"--tf32", "--cuda-graphs"}) {
      inert_option(*app, flag, "it is for CUDA runs; the device is cpu");
    }
  });
}

void add_dist_options(CLI::App* app, model::DistOptions& d) {
  add_enum_option(app, "--backend", d.backend, model::kDistBackendChoices,
                  "data-parallel: gloo | nccl | auto (nccl on CUDA when built with it)");
  app->add_option("--dist-timeout", d.timeout_s,
                  "data-parallel: seconds a rendezvous or collective may wait for the other ranks")
      ->capture_default_str();
}

void add_no_progress(CLI::App* app, bool& no_progress) {
  app->add_flag("--no-progress", no_progress,
                "no progress bar (commands without one accept it and ignore it)");
}

int run_parsed(const CLI::App& app, const std::vector<Subcommand>& subs) {
  for (const Subcommand& s : subs) {
    if (s.app->parsed()) return s.run(config_json(app));
  }
  return 0;
}

}  // namespace moca::tools
