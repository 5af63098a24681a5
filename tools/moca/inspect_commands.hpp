#pragma once
/// \file inspect_commands.hpp
/// The bodies of `moca attention` and `moca embed --pool/--map` (what an encoder learned). As in
/// commands.hpp: a report on `out`, notes on `log`, the JSON document returned;
/// std::invalid_argument for bad options or data (exit 2), std::runtime_error otherwise (exit 1).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "moca/embed/umap.hpp"

namespace moca::tools {

/// moca attention: the inspection pass on chosen test windows.
struct AttentionCommand {
  DataOptions data;
  model::InferenceOptions inference;
  std::string model;         ///< MAE or classifier checkpoint
  std::vector<int> windows;  ///< test-window indices
  std::string policy;        ///< empty: every token enters; else one mask per window
  std::uint64_t seed = 0;    ///< masks: window i uses Rng(derive_seed(seed, i))
  std::string out_dir = "attention";
  bool png = true;
};
nlohmann::json run_attention(const AttentionCommand& cmd, std::ostream& out, std::ostream& log);

/// moca embed --pool cls|mean [--map umap|pca]: pooled embeddings of the test windows of one or
/// more checkpoints and their 2-D maps.
struct EmbedMapCommand {
  DataOptions data;
  model::InferenceOptions inference;
  std::vector<std::string> checkpoints;
  std::vector<std::string> labels;  ///< one per checkpoint; default: the file names
  std::string pool = "mean";        ///< cls | mean
  std::string map;                  ///< "" (embeddings only) | umap | pca
  embed::UmapOptions umap;
  int max_windows = 0;  ///< first N test windows (0 = all)
  std::string out_dir = "embed";
  bool png = true;
};
nlohmann::json run_embed_map(const EmbedMapCommand& cmd, std::ostream& out, std::ostream& log);

}  // namespace moca::tools
