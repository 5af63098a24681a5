// `moca pretrain`, `moca launch`, `moca linprobe` and `moca finetune`: flags -> commands.hpp.
#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "cli.hpp"
#include "enum_option.hpp"
#include "launch.hpp"
#include "moca/model/dist/run_context.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"

namespace moca::tools {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int sig) {
  g_stop.store(true);
  std::signal(sig, SIG_DFL);  // a second signal ends the process at once
}

// SIGINT / SIGTERM ask pre-training to checkpoint and stop. SA_ONSTACK: on the threads that run
// oneDNN's GEMM kernels, which have an alternate signal stack, the handler must not run on the
// interrupted stack (src/moca/model/kernels/gemm.cpp).
void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// The process's run context (made once, before the command's work): the environment's ranks,
// the log (std::cerr) on rank 0 and nowhere on the others. Rank errors still reach stderr
// through run_cli.
model::RunContext make_context(const model::DistOptions& dist, const model::RuntimeOptions& rt) {
  return model::make_run_context(dist, rt.uses_cuda(), std::cerr);
}

// Data-parallel classification: rank 0 alone logs, prints and writes the result files.
void run_classify_rank(ClassifyCommand& c) {
  const model::DownstreamOptions& d = c.options.run.downstream;
  model::RunContext context = make_context(d.dist, d.runtime);
  if (!context.is_root()) c.options.run.downstream.progress = false;
  run_classify(c, report_stream(c.json), context);
}

// The JSON "options" of a run whose default warm-up yielded record the warm-up it used.
void record_warmup(nlohmann::json& options, const std::string& command, const std::string& note,
                   double used) {
  if (!note.empty() && options.contains(command)) options[command]["warmup-epochs"] = used;
}

// The flags of `linprobe` / `finetune` that are not fields of ClassifyCommand, and --protocol
// (model::Protocol's names and adl-loso).
struct ClassifyFlags {
  bool no_progress = false;
  bool from_scratch = false;
  void apply(ClassifyCommand& c) const {
    model::DownstreamOptions& o = c.options.run.downstream;
    o.progress = !no_progress;
    if (from_scratch) {
      o.mode = model::DownstreamMode::kScratch;
      if (!o.checkpoint.empty()) {
        throw std::invalid_argument("--from-scratch takes no --checkpoint");
      }
    }
  }
};

// The flags that the other flags leave without effect: beside a checkpoint, which brings its
// own architecture, the from-scratch-only rows (--preset, --patch-length, --layout, --pos-embed,
// --scratch-init);
// the split rows of the protocols that do not use them.
void add_effect_checks(const CLI::App* s, const ClassifyFlags& flags, ClassifyCommand& c) {
  after_parse(s, [s, &flags, &c] {
    if (!flags.from_scratch) {
      for (const std::string& flag : scope_flags(c.options.run.downstream, model::kScratchScope)) {
        inert_option(*s, flag,
                     "it sets the architecture of --from-scratch, and --checkpoint brings its "
                     "own");
      }
    }
    // The mode as the body will set it (ClassifyFlags::apply), so that the scratch mode's own
    // rules (--pos-embed beside --scratch-init timm) apply here too.
    model::ProtocolOptions run = c.options.run;
    if (flags.from_scratch) run.downstream.mode = model::DownstreamMode::kScratch;
    inert_fields(*s, model::unused_options(run));
  });
}

}  // namespace

Subcommand add_pretrain_cli(CLI::App& app) {
  auto pre = std::make_shared<PretrainCommand>();
  auto no_progress = std::make_shared<bool>(false);
  model::PretrainOptions& t = pre->train;
  auto* p = app.add_subcommand("pretrain", "pre-train a MoCA MAE with a masking policy");
  add_data_options(p, pre->data, true, data::kStreamScope);
  add_runtime_options(p, t.runtime, model::RuntimeOptions::kPretrainRuntimeScope);
  add_schema_options(p, t, kEveryScope);
  p->add_option("--json", pre->json, "summary JSON file");
  add_dist_options(p, t.dist);
  add_no_progress(p, *no_progress);
  after_parse(p, [p, pre] { inert_fields(*p, model::unused_options(pre->train)); });
  return {p, [pre, no_progress]() {
            record_warmup(program_options(), "pretrain", pre->train.warmup_note(),
                          pre->train.effective_warmup_epochs());
            pre->train.progress = !*no_progress;
            install_stop_handlers();
            model::RunContext context = make_context(pre->train.dist, pre->train.runtime);
            run_pretrain(*pre, report_stream(pre->json), context, &g_stop);
            return 0;
          }};
}

Subcommand add_launch_cli(CLI::App& app) {
  auto lau = std::make_shared<LaunchCommand>();
  auto* la = app.add_subcommand(
      "launch",
      "run a data-parallel command on this node: moca launch --nproc N -- pretrain ... (sets "
      "RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT like torchrun)");
  la->add_option("--nproc", lau->nproc, "ranks to start")->capture_default_str();
  la->add_option("--master-addr", lau->master_addr, "rendezvous address")->capture_default_str();
  la->add_option("--master-port", lau->master_port, "rendezvous port (0 = a free one)")
      ->capture_default_str();
  la->add_option("--kill-after", lau->kill_after,
                 "seconds the other ranks get to exit after one fails, then SIGKILL")
      ->capture_default_str();
  la->add_option("command", lau->command, "-- then the moca command and its options")->required();
  return {la, [lau]() { return run_launch(*lau, std::cerr); }};
}

namespace {

// --protocol of linprobe / finetune: model::Protocol's names, and adl-loso (--data hmp:HMP
// --protocol loso with the paper's classes).
void add_classify_protocol(CLI::App* app, ClassifyCommand& c) {
  const std::string choices = enum_choices(model::kProtocolNames) + ", adl-loso";
  app->add_option_function<std::string>(
         "--protocol",
         [&c, choices](const std::string& text) {
           c.options.adl_loso = text == "adl-loso";
           if (c.options.adl_loso) {
             c.options.run.protocol = model::Protocol::kLoso;
           } else {
             for (const auto& row : model::kProtocolNames)
               if (text == row.name) return void(c.options.run.protocol = row.value);
             throw CLI::ValidationError("--protocol (" + text + ") must be one of: " + choices);
           }
         },
         "random | subject-kfold | loso (on --data, any data set) | predefined (the data's own "
         "training and test part: a .ts archive set's TRAIN and TEST files, split.npy) | adl-loso "
         "(= --data hmp:HMP --protocol loso, the paper's 5 classes)")
      ->default_str(c.options.protocol_name());
}

}  // namespace

Subcommand add_classify_cli(CLI::App& app, bool finetune) {
  auto c = std::make_shared<ClassifyCommand>();
  auto text = std::make_shared<ClassifyFlags>();
  model::ClassifyOptions& o = c->options;
  o.run.downstream = model::downstream_defaults(finetune ? model::DownstreamMode::kFinetune
                                                         : model::DownstreamMode::kLinearProbe);
  auto* s =
      finetune
          ? app.add_subcommand("finetune", "fine-tune a pre-trained encoder (or --from-scratch)")
          : app.add_subcommand("linprobe", "linear probe on a frozen pre-trained encoder");
  add_data_options(s, o.data, /*split=*/false);  // the protocol's rows split the windows
  // --precision only where it takes effect: a probe trains its head on features computed once
  // in fp32, so a bf16 flag would change nothing there
  add_runtime_options(s, o.run.downstream.runtime,
                      finetune ? model::RuntimeOptions::kTrainingRuntimeScope
                               : model::RuntimeOptions::kInferenceRuntimeScope);
  add_dist_options(s, o.run.downstream.dist);
  add_classify_protocol(s, *c);
  add_schema_options(
      s, o.run, finetune ? model::kFinetuneScope | model::kScratchScope : model::kLinearProbeScope);
  add_schema_options(s, o, kEveryScope);  // model::ClassifyOptions::schema
  s->add_option("--json", c->json, "result JSON file");
  s->add_option("--predictions", c->predictions, "CSV fold,truth,predicted");
  if (finetune) {
    s->add_flag("--from-scratch", text->from_scratch,
                "supervised ViT baseline from random initialisation (no checkpoint)");
  }
  add_no_progress(s, text->no_progress);
  add_effect_checks(s, *text, *c);
  return {s, [c, text, finetune]() {
            text->apply(*c);
            const model::DownstreamOptions& d = c->options.run.downstream;
            record_warmup(program_options(), finetune ? "finetune" : "linprobe", d.warmup_note(),
                          d.effective_warmup_epochs());
            run_classify_rank(*c);
            return 0;
          }};
}

}  // namespace moca::tools
