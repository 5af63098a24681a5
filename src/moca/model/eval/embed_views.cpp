#include "moca/model/eval/embed_views.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "moca/common/matrix_io.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/model/eval/encoder_features.hpp"
#include "moca/model/eval/protocol.hpp"

namespace moca::model {

void EmbedOptions::validate() const {
  if (checkpoints.empty()) throw std::invalid_argument("EmbedOptions::checkpoints is required");
  if (!pooled() && checkpoints.size() != 1) {
    throw_invalid("", "EmbedOptions::checkpoints", std::to_string(checkpoints.size()) + " files",
                  "must be one without EmbedOptions::pool or EmbedOptions::map");
  }
  if (!labels.empty() && labels.size() != checkpoints.size()) {
    throw_invalid(
        "", "EmbedOptions::labels", std::to_string(labels.size()) + " names",
        "must be one per EmbedOptions::checkpoints (" + std::to_string(checkpoints.size()) + ")");
  }
  check_ranges(*this);
  if (map == EmbedMap::kUmap) umap.validate();
  inference.runtime.validate();
  data.validate();
}

std::vector<UnusedOption> unused_options(const EmbedOptions& o) {
  std::vector<UnusedOption> unused;
  const std::string views =
      "the pooled embeddings (EmbedOptions::pool, EmbedOptions::map) take "
      "every token and draw no masks";
  const std::string pooled =
      "only the pooled embeddings use it (EmbedOptions::pool or "
      "EmbedOptions::map)";
  for (const Option& row : option_rows<EmbedOptions>()) {
    if (row.scope == kViewsScope && o.pooled()) unused.push_back({row.field(), views});
    if (row.scope == kPooledScope && !o.pooled()) unused.push_back({row.field(), pooled});
  }
  if (o.map != EmbedMap::kUmap) {
    for (const Option& row : option_rows<embed::UmapOptions>()) {
      unused.push_back({row.field(), "only EmbedOptions::map umap uses it"});
    }
  }
  return unused;
}

nlohmann::json embed_views(const EmbedOptions& o, std::ostream& log) {
  o.validate();
  check_writable_folder(o.out_dir, "EmbedOptions::out_dir");
  if (o.pooled()) throw std::invalid_argument("embed_views(): the options ask for embed_maps()");
  const std::string& checkpoint = o.checkpoints.front();
  const ModelGeometry geometry = checkpoint_geometry(checkpoint);
  const data::SplitSelection d =
      data::select_and_split(o.data, log, geometry.length, geometry.sample_rate_hz);
  const data::Windows test = data::first_windows(d.test, o.max_windows);
  EncoderFeatures enc(checkpoint, o.inference);
  const masking::Grid grid =
      masking::make_grid(test.channels, test.length, enc.info().model.patch_length);
  masking::PolicyContext context;
  context.pilot = &test;
  const auto policy = masking::make_policy(o.policy, grid, context);
  const std::vector<masking::Mask> masks = masking::window_masks(*policy, test, o.seed);
  std::ostringstream mask_text;
  for (const masking::Mask& m : masks) {
    std::string cells = m.to_string();  // one line per window: rows joined
    cells.erase(std::remove(cells.begin(), cells.end(), '\n'), cells.end());
    mask_text << cells << "\n";
  }
  const ViewFeatures f = enc.view_features(test, masks);
  create_output_folder(o.out_dir);
  auto save = [&](const std::string& name, const Eigen::MatrixXd& m) {
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = m;
    write_npy(o.out_dir + "/" + name, {r.rows(), r.cols()}, r.data());
  };
  save("Z_U.npy", f.unmasked);
  save("Z_M.npy", f.masked);
  std::vector<std::int64_t> labels(test.labels.data(), test.labels.data() + test.size());
  write_npy_int(o.out_dir + "/labels.npy", {static_cast<std::int64_t>(labels.size())},
                labels.data());
  write_output_text(o.out_dir + "/masks.txt", mask_text.str());
  nlohmann::json j;
  j["command"] = "embed";
  j["data"] = d.to_json();
  j["checkpoint"] = checkpoint;
  j["policy"] = policy->spec();
  j["seed"] = o.seed;
  j["windows"] = test.size();
  j["dim"] = enc.dim();
  j["files"] = {"Z_U.npy", "Z_M.npy", "labels.npy", "masks.txt"};
  j["features"] =
      "mean of the encoder outputs (final norm, cls excluded) over each view's tokens; the "
      "unmasked view feeds the visible tokens, the masked view the masked tokens";
  return j;
}

}  // namespace moca::model
