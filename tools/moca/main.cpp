// moca: pre-train MoCA masked autoencoders with any masking policy, probe and fine-tune them,
// impute missing data, and export the encoder as a feature map. See docs/model.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "commands.hpp"
#include "data_flags.hpp"
#include "launch.hpp"
#include "moca/model/distributed.hpp"
#include "run_cli.hpp"

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int sig) {
  g_stop.store(true);
  std::signal(sig, SIG_DFL);  // a second signal ends the process at once
}

void add_data_options(CLI::App* app, moca::tools::DataOptions& d) {
  moca::tools::add_data_flags(app, d.data, d.dataset);
  app->add_option("--split", d.split, "random | subject-kfold | all")->capture_default_str();
  app->add_option("--split-seed", d.split_seed, "seed of the split")->capture_default_str();
  app->add_option("--train-fraction", d.train_fraction, "random split: training fraction")
      ->capture_default_str();
  app->add_option("--folds", d.folds, "subject-kfold: k")->capture_default_str();
  app->add_option("--fold", d.fold, "subject-kfold: test fold")->capture_default_str();
  app->add_option("--window-length", d.window_length,
                  "samples per window at 50 Hz (a checkpoint's own length wins)")
      ->capture_default_str();
  app->add_option("--synthetic-windows", d.synthetic_windows, "generator: windows")
      ->capture_default_str();
  app->add_option("--coupling", d.coupling, "generator: cross-modal coupling in [0, 1]")
      ->capture_default_str();
  app->add_option("--synthetic-seed", d.synthetic_seed, "generator: seed")->capture_default_str();
}

void add_runtime_options(CLI::App* app, moca::model::RuntimeOptions& r, bool training = false) {
  app->add_option("--device", r.device, "auto | cpu | cuda")->capture_default_str();
  app->add_option("--threads", r.threads, "CPU threads (0 = hardware cores)")
      ->capture_default_str();
  if (training) {
    app->add_option("--precision", r.precision,
                    "fp32 | bf16 (autocast of the training forward passes; meant for CUDA)")
        ->capture_default_str();
  }
}

void add_dist_options(CLI::App* app, moca::model::DistOptions& d) {
  app->add_option("--backend", d.backend,
                  "data-parallel: gloo | nccl | auto (nccl on CUDA when built with it)")
      ->capture_default_str();
  app->add_option("--dist-timeout", d.timeout_s,
                  "data-parallel: seconds a rendezvous or collective may wait for the other ranks")
      ->capture_default_str();
  app->add_option("--grad-sync", d.grad_sync,
                  "data-parallel: buckets (flattened all-reduce after backward) | reducer "
                  "(c10d::Reducer, overlaps backward; --batch-shards 1)")
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  // libgomp reads OMP_WAIT_POLICY when it is loaded, before main. Its default (spin, then
  // sleep) makes idle pool threads compete with the working ones — ~40 % slower CPU training
  // steps measured (docs/benchmarks/model.md) — so without an explicit choice the tool restarts
  // itself once with passive waiting. A failed exec just continues.
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);
  }
  using namespace moca;
  CLI::App app{
      "moca: MoCA masked autoencoders for multi-modal wearable time series\n"
      "(runs with OMP_WAIT_POLICY=passive unless the environment sets it)"};
  app.require_subcommand(1);

  // pretrain
  tools::PretrainCommand pre;
  bool no_progress = false;
  auto* p = app.add_subcommand("pretrain", "pre-train a MoCA MAE with a masking policy");
  add_data_options(p, pre.data);
  add_runtime_options(p, pre.train.runtime, true);
  p->add_option("--batch-shards", pre.train.runtime.batch_shards,
                "CPU: concurrent batch blocks, one thread each (0 = --threads, 1 = off)")
      ->capture_default_str();
  p->add_option("--preset", pre.train.preset, "paper-base | tiny | cpu-small")
      ->capture_default_str();
  p->add_option("--patch-length", pre.train.patch_length, "samples per patch")
      ->capture_default_str();
  p->add_option("--layout", pre.train.layout, "modality | stacked")->capture_default_str();
  p->add_option("--pos-embed", pre.train.pos_embed, "2d (paper) | 1d (released code)")
      ->capture_default_str();
  p->add_option("--loss", pre.train.loss, "all (paper) | masked")->capture_default_str();
  p->add_flag("--norm-pix-loss", pre.train.norm_pix_loss, "per-patch normalised targets");
  p->add_option("--policy", pre.train.policy, "masking policy spec")->capture_default_str();
  p->add_option("--epochs", pre.train.epochs)->capture_default_str();
  p->add_option("--batch", pre.train.batch_size)->capture_default_str();
  p->add_option("--lr", pre.train.lr, "peak learning rate")->capture_default_str();
  p->add_option("--min-lr", pre.train.min_lr)->capture_default_str();
  p->add_option("--warmup-epochs", pre.train.warmup_epochs)->capture_default_str();
  p->add_option("--weight-decay", pre.train.weight_decay)->capture_default_str();
  p->add_flag("--augment", pre.train.augment, "on-the-fly Algorithm 1 augmentation");
  p->add_option("--augment-probability", pre.train.augment_probability)->capture_default_str();
  p->add_option("--checkpoint", pre.train.checkpoint, "checkpoint file")->capture_default_str();
  p->add_option("--metrics", pre.train.metrics,
                "JSON-lines log (default <checkpoint>.metrics.jsonl)");
  p->add_option("--checkpoint-every", pre.train.checkpoint_every, "epochs")->capture_default_str();
  p->add_flag("--resume", pre.train.resume, "continue from --checkpoint");
  p->add_option("--seed", pre.train.seed)->capture_default_str();
  p->add_option("--stop-after", pre.train.stop_after_iterations,
                "checkpoint and stop after this many iterations (-1 = never)");
  p->add_option("--json", pre.json, "summary JSON file");
  add_dist_options(p, pre.train.dist);

  // launch
  tools::LaunchCommand lau;
  auto* la = app.add_subcommand(
      "launch",
      "run a data-parallel command on this node: moca launch --nproc N -- pretrain ... (sets "
      "RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT like torchrun)");
  la->add_option("--nproc", lau.nproc, "ranks to start")->capture_default_str();
  la->add_option("--master-addr", lau.master_addr, "rendezvous address")->capture_default_str();
  la->add_option("--master-port", lau.master_port, "rendezvous port (0 = a free one)")
      ->capture_default_str();
  la->add_option("--kill-after", lau.kill_after,
                 "seconds the other ranks get to exit after one fails, then SIGKILL")
      ->capture_default_str();
  la->add_option("command", lau.command, "-- then the moca command and its options")->required();

  // linprobe / finetune
  tools::ClassifyCommand lin, fin;
  lin.options = model::downstream_defaults(model::DownstreamMode::kLinearProbe);
  fin.options = model::downstream_defaults(model::DownstreamMode::kFinetune);
  bool from_scratch = false;
  auto add_classify = [&](CLI::App* s, tools::ClassifyCommand& c, bool finetune) {
    add_data_options(s, c.data);
    add_runtime_options(s, c.options.runtime, true);
    add_dist_options(s, c.options.dist);
    s->add_option("--checkpoint", c.options.checkpoint,
                  "pre-trained MAE ('{fold}' is replaced by the fold index)");
    s->add_option("--protocol", c.protocol,
                  "random | subject-kfold | loso (on --data, any data set) | adl-loso (= --data "
                  "hmp:HMP --protocol loso, the paper's 5 classes)")
        ->capture_default_str();
    s->add_option("--hmp", c.hmp, "UCI ADL (HMP) folder for adl-loso (default $MOCA_HMP_DIR)");
    s->add_option("--adl-classes", c.adl_classes,
                  "adl-loso: paper (5 activities of the paper's table) | all (14)")
        ->capture_default_str();
    s->add_option("--epochs", c.options.epochs)->capture_default_str();
    s->add_option("--batch", c.options.batch_size)->capture_default_str();
    s->add_option("--lr", c.options.lr)->capture_default_str();
    s->add_option("--min-lr", c.options.min_lr)->capture_default_str();
    s->add_option("--warmup-epochs", c.options.warmup_epochs)->capture_default_str();
    s->add_option("--weight-decay", c.options.weight_decay)->capture_default_str();
    s->add_option("--classes", c.options.classes, "0 = from the data")->capture_default_str();
    s->add_option("--seed", c.options.seed)->capture_default_str();
    s->add_option("--json", c.json, "result JSON file");
    s->add_option("--predictions", c.predictions, "CSV fold,truth,predicted");
    if (finetune) {
      s->add_option("--layer-decay", c.options.layer_decay)->capture_default_str();
      s->add_option("--label-smoothing", c.options.label_smoothing)->capture_default_str();
      s->add_option("--drop-path", c.options.drop_path)->capture_default_str();
      s->add_flag("--from-scratch", from_scratch,
                  "supervised ViT baseline from random initialisation (no checkpoint)");
      s->add_option("--preset", c.options.preset, "architecture for --from-scratch")
          ->capture_default_str();
      s->add_option("--patch-length", c.options.patch_length, "for --from-scratch")
          ->capture_default_str();
      s->add_option("--layout", c.options.layout, "for --from-scratch")->capture_default_str();
      s->add_option("--pos-embed", c.options.pos_embed, "for --from-scratch")
          ->capture_default_str();
    }
  };
  auto* l = app.add_subcommand("linprobe", "linear probe on a frozen pre-trained encoder");
  add_classify(l, lin, false);
  auto* f = app.add_subcommand("finetune", "fine-tune a pre-trained encoder (or --from-scratch)");
  add_classify(f, fin, true);

  // metrics
  tools::MetricsCommand met;
  auto* m = app.add_subcommand("metrics", "top-1, macro-F1, balanced accuracy, confusion matrix");
  m->add_option("--predictions", met.predictions, "CSV truth,predicted or fold,truth,predicted")
      ->required();
  m->add_option("--classes", met.classes, "0 = max id + 1")->capture_default_str();
  m->add_option("--json", met.json, "result JSON file");

  // impute
  tools::ImputeCommand imp;
  imp.data.split = "random";
  auto* i = app.add_subcommand("impute", "the four imputation tasks: models and baselines");
  add_data_options(i, imp.data);
  add_runtime_options(i, imp.options.inference.runtime);
  i->add_option("--checkpoint", imp.options.checkpoints, "pre-trained MAE(s)");
  i->add_option("--label", imp.options.labels, "row name per checkpoint");
  i->add_option("--task", imp.options.tasks, "policy specs of the tasks")->capture_default_str();
  bool no_baselines = false;
  i->add_flag("--no-baselines", no_baselines, "skip linear, nearest and MICE");
  i->add_option("--mice-iterations", imp.options.mice.iterations)->capture_default_str();
  i->add_option("--mice-draws", imp.options.mice.draws)->capture_default_str();
  i->add_option("--patch-length", imp.options.patch_length, "grid without a checkpoint")
      ->capture_default_str();
  i->add_option("--max-windows", imp.max_windows, "first N test windows (0 = all)")
      ->capture_default_str();
  i->add_option("--seed", imp.options.seed)->capture_default_str();
  i->add_option("--json", imp.json, "result JSON file");

  // embed
  tools::EmbedCommand emb;
  auto* e = app.add_subcommand("embed", "encoder features of both views (for CCA scoring)");
  add_data_options(e, emb.data);
  add_runtime_options(e, emb.inference.runtime);
  e->add_option("--checkpoint", emb.checkpoint, "pre-trained MAE")->required();
  e->add_option("--policy", emb.policy)->capture_default_str();
  e->add_option("--seed", emb.seed)->capture_default_str();
  e->add_option("--out", emb.out_dir, "output folder")->capture_default_str();
  e->add_option("--max-windows", emb.max_windows, "first N test windows (0 = all)")
      ->capture_default_str();

  // reconstruct
  tools::ReconstructCommand rec;
  auto* r = app.add_subcommand("reconstruct", "CSV and PNG of a reconstructed test window");
  add_data_options(r, rec.data);
  add_runtime_options(r, rec.options.inference.runtime);
  r->add_option("--checkpoint", rec.options.checkpoint, "pre-trained MAE")->required();
  r->add_option("--window", rec.options.window, "test window index")->capture_default_str();
  r->add_option("--policy", rec.options.policy)->capture_default_str();
  r->add_option("--seed", rec.options.seed)->capture_default_str();
  r->add_option("--out", rec.options.out, "output prefix")->capture_default_str();
  bool no_png = false;
  r->add_flag("--no-png", no_png, "CSV only");

  // data inspect / export
  auto* dat = app.add_subcommand("data", "inspect or export a data set (any --data source)");
  dat->require_subcommand(1);
  tools::DataInspectCommand ins;
  auto* di = dat->add_subcommand("inspect", "what the loader sees and what each program does");
  add_data_options(di, ins.data);
  di->add_option("--checkpoint", ins.checkpoint, "open at this model's length and rate");
  di->add_option("--json", ins.json, "result JSON file");
  tools::DataExportCommand exp;
  auto* de = dat->add_subcommand("export", "write any source as an ssl-wearables .npy folder");
  add_data_options(de, exp.data);
  de->add_option("--out", exp.out_dir, "output folder (created)")->required();
  de->add_option("--transitions", exp.transitions,
                 "export N Algorithm-1 transitions from the 7:3 training split instead")
      ->capture_default_str();
  de->add_option("--seed", exp.seed, "seed of the transitions")->capture_default_str();

  // Flags every command accepts.
  for (CLI::App* sub : {p, l, f, m, i, e, r, di, de}) {
    sub->add_flag("--no-progress", no_progress,
                  "no progress bar (commands without one accept it and ignore it)");
  }

  // Data-parallel classification: rank 0 alone logs, prints and writes the result files.
  auto run_classify_rank = [](tools::ClassifyCommand c) {
    if (model::read_dist_env().rank == 0) {
      tools::run_classify(c, std::cout, std::cerr);
      return;
    }
    std::ostream null_out(nullptr);
    c.json.clear();
    c.predictions.clear();
    c.options.progress = false;
    tools::run_classify(c, null_out, null_out);
  };
  return tools::run_cli("moca", app, argc, argv, [&] {
    if (p->parsed()) {
      pre.train.progress = !no_progress;
      struct sigaction sa {};
      sa.sa_handler = on_signal;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGINT, &sa, nullptr);
      sigaction(SIGTERM, &sa, nullptr);
      // Data-parallel: only rank 0 logs (rank errors still reach stderr through run_cli).
      std::ostream null_log(nullptr);
      const bool root = model::read_dist_env().rank == 0;
      tools::run_pretrain(pre, std::cout, root ? std::cerr : null_log, &g_stop);
    } else if (la->parsed()) {
      return tools::run_launch(lau, std::cerr);
    } else if (l->parsed()) {
      lin.options.progress = !no_progress;
      run_classify_rank(lin);
    } else if (f->parsed()) {
      fin.options.progress = !no_progress;
      if (from_scratch) {
        fin.options.mode = model::DownstreamMode::kScratch;
        if (!fin.options.checkpoint.empty()) {
          throw std::invalid_argument("--from-scratch takes no --checkpoint");
        }
      }
      run_classify_rank(fin);
    } else if (m->parsed()) {
      tools::run_metrics(met, std::cout);
    } else if (i->parsed()) {
      imp.options.baselines = !no_baselines;
      tools::run_impute(imp, std::cout, std::cerr);
    } else if (e->parsed()) {
      tools::run_embed(emb, std::cout, std::cerr);
    } else if (di->parsed()) {
      tools::run_data_inspect(ins, std::cout, std::cerr);
    } else if (de->parsed()) {
      tools::run_data_export(exp, std::cout, std::cerr);
    } else if (r->parsed()) {
      rec.options.png = !no_png;
      tools::run_reconstruct(rec, std::cout, std::cerr);
    }
    return 0;
  });
}
