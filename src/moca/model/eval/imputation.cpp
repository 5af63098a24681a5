#include "moca/model/eval/imputation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/random.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy.hpp"
#include "moca/model/io/checkpoint.hpp"
#include "moca/model/model_options.hpp"

namespace moca::model {

ImputationError masked_reconstruction_error(const std::string& checkpoint,
                                            const data::Windows& windows,
                                            const std::vector<masking::Mask>& masks,
                                            const InferenceOptions& options) {
  if (masks.empty()) throw_invalid("masked_reconstruction_error()", "no masks");
  const masking::Grid grid{windows.channels, masks[0].patches(),
                           windows.length / std::max(masks[0].patches(), 1)};
  const data::RowMatrixXf rec = reconstruct_with_model(checkpoint, windows, masks, options);
  const ImputationError e = imputation_error(windows, rec, masks, grid);
  if (e.count == 0) throw_invalid("masked_reconstruction_error()", "no masked samples");
  return e;
}

void ImputeOptions::validate() const {
  if (tasks.empty()) throw_invalid("ImputeOptions::validate()", "tasks is empty");
  if (!baselines && checkpoints.empty()) {
    throw_invalid("ImputeOptions::validate()",
                  "nothing to evaluate (no checkpoints and baselines off)");
  }
  if (!labels.empty() && labels.size() != checkpoints.size()) {
    throw_invalid("ImputeOptions::validate()", std::to_string(labels.size()) + " labels for " +
                                                   std::to_string(checkpoints.size()) +
                                                   " checkpoints");
  }
  check_ranges(*this);  // the rows' ranges (schema): patch_length, MICE, the inference batch
  mice.validate();
  inference.runtime.validate();
}

nlohmann::json ImputeTable::to_json() const {
  nlohmann::json j;
  j["methods"] = methods;
  j["tasks"] = tasks;
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : cells) {
    nlohmann::json cell = {
        {"method", c.method}, {"task", c.task}, {"count", c.count}, {"applicable", c.applicable}};
    if (c.applicable) {
      cell["mae"] = c.mae;
      cell["mse"] = c.mse;
      cell["nmse"] = c.nmse;  // NaN (constant windows) is written as null
    }
    cs.push_back(cell);
  }
  j["cells"] = cs;
  j["target_variance"] = target_variance;
  j["nmse_rule"] =
      "MSE over the masked samples / unbiased variance of all values (every sample and channel) "
      "of the evaluated windows; the authors divide each batch's loss over all patches by that "
      "batch's variance";
  j["seconds"] = seconds;
  return j;
}

std::string ImputeTable::to_text() const {
  size_t w = 6;
  for (const auto& m : methods) w = std::max(w, m.size());
  std::ostringstream os;
  os << std::left << std::setw(static_cast<int>(w)) << "method";
  for (const auto& t : tasks) {
    const std::string name = t.substr(0, t.find(':'));
    os << " | " << std::setw(21) << name;
  }
  os << "\n" << std::setw(static_cast<int>(w)) << "";
  for (size_t k = 0; k < tasks.size(); ++k) os << " | " << std::setw(21) << "MAE    MSE    nMSE";
  os << "\n";
  for (const auto& m : methods) {
    os << std::left << std::setw(static_cast<int>(w)) << m;
    for (const auto& t : tasks) {
      for (const auto& c : cells) {
        if (c.method == m && c.task == t) {
          std::ostringstream cell;
          if (c.applicable) {
            cell << std::fixed << std::setprecision(3) << c.mae << "  " << c.mse << "  ";
            if (std::isfinite(c.nmse)) {
              cell << c.nmse;
            } else {
              cell << "n/a";
            }
          } else {
            cell << "n/a";
          }
          os << " | " << std::setw(21) << cell.str();
        }
      }
    }
    os << "\n";
  }
  return os.str();
}

ImputeTable evaluate_imputation(const ImputeOptions& options, const data::Windows& windows,
                                std::ostream& log) {
  return evaluate_imputation(options, data::InMemorySource(windows), log);
}

ImputeTable evaluate_imputation(const ImputeOptions& options, const data::WindowSource& windows,
                                std::ostream& log) {
  options.validate();
  if (const data::Windows* held = windows.in_memory())
    held->validate("evaluate_imputation(): windows");
  const auto t0 = std::chrono::steady_clock::now();
  const data::Windows& meta = windows.meta();
  int patch_length = options.patch_length;
  std::vector<std::string> labels = options.labels;
  std::vector<bool> stacked;
  for (size_t k = 0; k < options.checkpoints.size(); ++k) {
    const CheckpointInfo info = read_checkpoint_info(options.checkpoints[k]);
    if (k == 0) patch_length = info.model.patch_length;
    stacked.push_back(info.model.layout == TokenLayout::kStacked);
    if (info.model.patch_length != patch_length || info.model.length != meta.length) {
      throw_invalid("evaluate_imputation()",
                    "checkpoint " + options.checkpoints[k] + " has patch length " +
                        std::to_string(info.model.patch_length) + " and length " +
                        std::to_string(info.model.length) +
                        "; all models must share the grid of the windows");
    }
    if (options.labels.empty()) {
      const std::string& p = options.checkpoints[k];
      labels.push_back(
          p.substr(p.find_last_of('/') == std::string::npos ? 0 : p.find_last_of('/') + 1));
    }
  }
  const masking::Grid grid = masking::make_grid(meta.channels, meta.length, patch_length);
  ImputeTable table;
  if (options.baselines) table.methods = {"linear interpolation", "nearest neighbour", "MICE"};
  for (const auto& l : labels) table.methods.push_back(l);
  const size_t n_methods = table.methods.size(), n_base = n_methods - labels.size();
  // [task][method]: the error sums over the chunks, and whether the method can run the task.
  std::vector<std::vector<ImputationSums>> sums(options.tasks.size(),
                                                std::vector<ImputationSums>(n_methods));
  std::vector<std::vector<bool>> applicable(options.tasks.size(),
                                            std::vector<bool>(n_methods, true));
  std::vector<std::unique_ptr<masking::MaskPolicy>> policies;
  // The policies on the first chunk (the whole set in memory): the data's modality groups
  // (sensor needs >= 2) and an adaptive policy's pilot.
  auto make_policies = [&](const data::Windows& pilot) {
    if (!policies.empty()) return;
    masking::PolicyContext context;
    context.pilot = &pilot;
    for (const auto& task : options.tasks) {
      policies.push_back(masking::make_policy(task, grid, context));
      table.tasks.push_back(policies.back()->spec());
    }
  };
  // Window first + i's mask of task k: from its index in the set, whatever the chunks.
  auto task_masks = [&](size_t k, int first, const data::Windows& w) {
    std::vector<masking::Mask> masks;
    masks.reserve(static_cast<size_t>(w.size()));
    const std::uint64_t task_seed = derive_seed(options.seed, k);
    for (int i = 0; i < w.size(); ++i)
      masks.push_back(masking::window_mask(*policies[k], task_seed, first + i, w.window(i)));
    return masks;
  };
  // Read from disk, a first pass sums each task's observed samples per channel: the fallback
  // of linear and nearest for a channel a window hides whole is then the whole set's observed
  // mean, as in memory, not a chunk's.
  std::vector<Eigen::VectorXd> fallback;
  if (!windows.in_memory() && options.baselines) {
    std::vector<ObservedChannels> observed(options.tasks.size());
    data::for_each_chunk(windows, data::kEvalChunk, [&](int first, const data::Windows& w) {
      make_policies(w);
      for (size_t k = 0; k < options.tasks.size(); ++k)
        observed[k].add(w, task_masks(k, first, w), grid);
    });
    for (const auto& o : observed) fallback.push_back(o.means());
  }
  PooledMoments moments;
  std::uint64_t chunk_index = 0;
  data::for_each_chunk(windows, data::kEvalChunk, [&](int first, const data::Windows& w) {
    make_policies(w);
    moments.add(w.x);
    for (size_t k = 0; k < options.tasks.size(); ++k) {
      const std::uint64_t task_seed = derive_seed(options.seed, k);
      const std::vector<masking::Mask> masks = task_masks(k, first, w);
      std::vector<ImputationSums>& cell = sums[k];
      if (options.baselines) {
        const Eigen::VectorXd* f = fallback.empty() ? nullptr : &fallback[k];
        cell[0] += imputation_sums(w, impute_linear(w, masks, grid, f), masks, grid);
        cell[1] += imputation_sums(w, impute_nearest(w, masks, grid, f), masks, grid);
        MiceOptions mice = options.mice;
        mice.seed = derive_seed(task_seed, 0xC0FFEE);
        if (chunk_index > 0) mice.seed = derive_seed(mice.seed, chunk_index);
        cell[2] += imputation_sums(w, impute_mice(w, masks, grid, mice), masks, grid);
      }
      bool whole_columns = true;
      for (const auto& m : masks)
        for (int p = 0; p < m.patches(); ++p)
          for (int c = 1; c < m.channels(); ++c)
            whole_columns = whole_columns && m.masked(c, p) == m.masked(0, p);
      for (size_t m = 0; m < options.checkpoints.size(); ++m) {
        // A stacked-layout model can only hide whole time columns: n/a once any mask splits one.
        if (stacked[m] && !whole_columns) applicable[k][n_base + m] = false;
        if (!applicable[k][n_base + m]) continue;
        cell[n_base + m] += imputation_sums(
            w, impute_with_model(options.checkpoints[m], w, masks, options.inference), masks, grid);
      }
    }
    ++chunk_index;
    if (!windows.in_memory()) {
      log << "impute: " << first + w.size() << " of " << windows.size() << " windows\n";
    }
  });
  if (policies.empty()) throw_invalid("evaluate_imputation()", "no windows to evaluate");
  table.target_variance = moments.variance();
  for (size_t k = 0; k < options.tasks.size(); ++k) {
    const std::string& task = table.tasks[k];
    for (size_t m = 0; m < n_methods; ++m) {
      const std::string& method = table.methods[m];
      if (!applicable[k][m]) {
        table.cells.push_back({method, task, 0.0, 0.0, 0.0, 0, false});
        log << "  " << method << " " << task
            << ": n/a (a stacked-layout model can only hide whole time columns)\n";
        continue;
      }
      const ImputationError e = sums[k][m].error(table.target_variance);
      table.cells.push_back({method, task, e.mae, e.mse, e.nmse, e.count, true});
      log << "  " << std::left << std::setw(24) << method << " " << task << ": MAE " << e.mae
          << " MSE " << e.mse << " nMSE " << e.nmse << "\n";
    }
  }
  table.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return table;
}

}  // namespace moca::model
