#pragma once
/// \file embed_views.hpp
/// `moca embed` as library calls: a checkpoint's encoder features of both views (unmasked and
/// masked) of the test windows under one mask each, written as Z_U.npy, Z_M.npy, labels.npy and
/// masks.txt for the policy scorer or any CCA tool (embed_views); or pooled window embeddings of
/// one or more checkpoints and their 2-D maps (embed_maps).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/data/selection.hpp"
#include "moca/embed/umap.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/eval/inspect.hpp"

namespace moca::model {

/// Embed's two modes: the scopes of EmbedOptions' rows.
inline constexpr Scope kViewsScope = 1u;   ///< the views' features (embed_views)
inline constexpr Scope kPooledScope = 2u;  ///< pooled embeddings and maps (embed_maps)

/// A 2-D map of pooled embeddings.
enum class EmbedMap { kUmap, kPca };
inline constexpr EnumName<EmbedMap> kEmbedMapNames[] = {{EmbedMap::kUmap, "umap"},
                                                        {EmbedMap::kPca, "pca"}};

/// What `moca embed` computes and where it writes it. Unless `pool` or `map` is set it is the
/// views' features of one checkpoint (embed_views); with either, the pooled embeddings of one or
/// more checkpoints and their maps (embed_maps).
struct EmbedOptions {
  data::DataOptions data;                ///< the windows (their test part)
  std::vector<std::string> checkpoints;  ///< pre-trained MAE (views: exactly one)
  std::string policy = "cross:ratio=0.75";
  std::uint64_t seed = 0;           ///< masks: window i uses Rng(derive_seed(seed, i))
  std::vector<std::string> labels;  ///< pooled: one per checkpoint; default: the file names
  std::optional<Pool> pool;         ///< set: pooled embeddings (mean when only map is set)
  std::optional<EmbedMap> map;      ///< set: a seeded 2-D map of the pooled embeddings
  embed::UmapOptions umap;          ///< map umap (threads: the runtime's)
  std::string out_dir = "embed";    ///< created when missing
  int max_windows = 0;              ///< the first N test windows; 0 = all
  bool png = true;                  ///< maps: render the figure (else CSV, NPY and the script)
  InferenceOptions inference;

  bool pooled() const { return pool.has_value() || map.has_value(); }
  /// Throws std::invalid_argument naming the field (`EmbedOptions::max_windows`), its value and
  /// the rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp), with the scope of the mode that takes them
  /// (unused_options() lists the other mode's).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* E = "EmbedOptions";
    const Range any = Range::any();
    v(o.checkpoints, Option{E, "checkpoints", "--checkpoint",
                            "pre-trained MAE (views); with --pool/--map any checkpoints, side by "
                            "side",
                            any, kEveryScope, nullptr, Surface::kBoth, false});
    v(o.policy, Option{E, "policy", "--policy", "mask policy spec", any, kViewsScope});
    v(o.seed,
      Option{E, "seed", "--seed", "seed of the masks (with the window index)", any, kViewsScope});
    v(o.out_dir, Option{E, "out_dir", "--out", "output folder"});
    v(o.max_windows, Option{E, "max_windows", "--max-windows", "first N test windows (0 = all)",
                            Range::at_least(0)});
    v(o.labels, Option{E, "labels", "--label", "name per --checkpoint (default: file names)", any,
                       kPooledScope});
    v(o.pool,
      Option{E, "pool", "--pool",
             "cls | mean: one embedding per window (all tokens) instead of the views", any,
             kPooledScope},
      kPoolNames);
    v(o.map,
      Option{E, "map", "--map", "umap | pca: a seeded 2-D map of the pooled embeddings", any,
             kPooledScope},
      kEmbedMapNames);
    embed::UmapOptions::schema(o.umap, v);
    InferenceOptions::schema(o.inference, v);
  }
};

/// The options that the others leave without effect: the masks' (policy, seed) when pooled, the
/// pooled mode's without it, UMAP's without `map` umap.
std::vector<UnusedOption> unused_options(const EmbedOptions& options);

/// The views' features: opens the data at the checkpoint's geometry (described on `log`), draws
/// one mask per test window, writes Z_U.npy, Z_M.npy, labels.npy and masks.txt into out_dir
/// (each atomically) and returns the run's description (the caller writes it as embed.json, with
/// its "options"). std::invalid_argument for bad options or data, std::runtime_error for I/O
/// failures.
nlohmann::json embed_views(const EmbedOptions& options, std::ostream& log);

/// Pooled embeddings (options.pooled()): the first test windows through each checkpoint's encoder,
/// pooled; embedding_<label>.npy, labels.npy and classes.npy, and with `map` the 2-D map of each
/// (map_<label>.npy and .csv) and one figure of them side by side (map.dat, map.gp, map.png).
/// Reports a line per checkpoint on `out` and returns the run's description, as embed_views.
nlohmann::json embed_maps(const EmbedOptions& options, std::ostream& out, std::ostream& log);

}  // namespace moca::model
