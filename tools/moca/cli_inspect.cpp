// `moca attention` and the --pool/--map flags of `moca embed`: flags -> inspect_commands.hpp.
#include <iostream>
#include <memory>

#include "cli.hpp"

namespace moca::tools {

Subcommand add_attention_cli(CLI::App& app) {
  auto c = std::make_shared<AttentionCommand>();
  auto flags = std::make_shared<std::pair<bool, bool>>(false, false);  // no-progress, no-png
  auto* a = app.add_subcommand("attention",
                               "attention maps, cls attention and rollout of chosen test windows");
  add_data_options(a, c->data);
  add_runtime_options(a, c->inference.runtime);
  a->add_option("--model", c->model, "MAE or classifier checkpoint")->required();
  a->add_option("--windows", c->windows, "test-window indices, comma-separated")
      ->delimiter(',')
      ->required();
  a->add_option("--policy", c->policy, "mask the windows with this policy (default: no mask)");
  a->add_option("--seed", c->seed, "masks: window i uses derive_seed(seed, i)")
      ->capture_default_str();
  a->add_option("--out", c->out_dir, "output folder")->capture_default_str();
  a->add_flag("--no-png", flags->second, "CSV and JSON only");
  add_no_progress(a, flags->first);
  return {a, [c, flags]() {
            c->png = !flags->second;
            run_attention(*c, std::cout, std::cerr);
            return 0;
          }};
}

void add_embed_map_options(CLI::App* app, EmbedMapCommand& m, bool& no_png) {
  m.pool.clear();  // unset: the views' features (EmbedCommand) unless --map is given
  app->add_option("--label", m.labels, "name per --checkpoint (default: file names)");
  app->add_option("--pool", m.pool,
                  "cls | mean: one embedding per window (all tokens) instead of the views");
  app->add_option("--map", m.map, "umap | pca: a seeded 2-D map of the pooled embeddings");
  app->add_option("--neighbors", m.umap.neighbors, "UMAP k (counting the point)")
      ->capture_default_str();
  app->add_option("--min-dist", m.umap.min_dist, "UMAP min_dist")->capture_default_str();
  app->add_option("--umap-epochs", m.umap.epochs, "0 = 500 (n <= 10000) or 200")
      ->capture_default_str();
  app->add_option("--map-seed", m.umap.seed, "UMAP layout seed")->capture_default_str();
  app->add_flag("--no-png", no_png, "maps: CSV, NPY and the gnuplot script only");
}

EmbedMapCommand embed_map_command(const EmbedCommand& views, const EmbedMapCommand& map,
                                  bool no_png) {
  EmbedMapCommand c = map;
  c.data = views.options.data;
  c.inference = views.options.inference;
  c.out_dir = views.options.out_dir;
  c.max_windows = views.options.max_windows;
  c.umap.threads = views.options.inference.runtime.threads;
  c.png = !no_png;
  if (c.pool.empty()) c.pool = "mean";
  return c;
}

}  // namespace moca::tools
