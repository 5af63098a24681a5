#include "moca/model/eval/imputation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/random.hpp"
#include "moca/masking/make_policy.hpp"
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
  options.validate();
  windows.validate("evaluate_imputation(): windows");
  const auto t0 = std::chrono::steady_clock::now();
  int patch_length = options.patch_length;
  std::vector<std::string> labels = options.labels;
  std::vector<bool> stacked;
  for (size_t k = 0; k < options.checkpoints.size(); ++k) {
    const CheckpointInfo info = read_checkpoint_info(options.checkpoints[k]);
    if (k == 0) patch_length = info.model.patch_length;
    stacked.push_back(info.model.layout == TokenLayout::kStacked);
    if (info.model.patch_length != patch_length || info.model.length != windows.length) {
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
  const masking::Grid grid = masking::make_grid(windows.channels, windows.length, patch_length);
  ImputeTable table;
  table.target_variance = pooled_variance(windows.x);
  if (options.baselines) table.methods = {"linear interpolation", "nearest neighbour", "MICE"};
  for (const auto& l : labels) table.methods.push_back(l);
  for (size_t k = 0; k < options.tasks.size(); ++k) {
    masking::PolicyContext context;
    context.pilot = &windows;  // the data's modality groups (sensor needs >= 2)
    const auto policy = masking::make_policy(options.tasks[k], grid, context);
    table.tasks.push_back(policy->spec());
    std::vector<masking::Mask> masks;
    masks.reserve(static_cast<size_t>(windows.size()));
    const std::uint64_t task_seed = derive_seed(options.seed, k);
    for (int i = 0; i < windows.size(); ++i) {
      Rng rng(derive_seed(task_seed, static_cast<std::uint64_t>(i)));
      masks.push_back(policy->sample(rng, windows.window(i)));
    }
    auto add = [&](const std::string& method, const data::RowMatrixXf& imputed) {
      const auto e = imputation_error(windows, imputed, masks, grid);
      table.cells.push_back({method, policy->spec(), e.mae, e.mse, e.nmse, e.count, true});
      log << "  " << std::left << std::setw(24) << method << " " << policy->spec() << ": MAE "
          << e.mae << " MSE " << e.mse << " nMSE " << e.nmse << "\n";
    };
    if (options.baselines) {
      add("linear interpolation", impute_linear(windows, masks, grid));
      add("nearest neighbour", impute_nearest(windows, masks, grid));
      MiceOptions mice = options.mice;
      mice.seed = derive_seed(task_seed, 0xC0FFEE);
      add("MICE", impute_mice(windows, masks, grid, mice));
    }
    bool whole_columns = true;
    for (const auto& m : masks)
      for (int p = 0; p < m.patches(); ++p)
        for (int c = 1; c < m.channels(); ++c)
          whole_columns = whole_columns && m.masked(c, p) == m.masked(0, p);
    for (size_t m = 0; m < options.checkpoints.size(); ++m) {
      if (stacked[m] && !whole_columns) {
        table.cells.push_back({labels[m], policy->spec(), 0.0, 0.0, 0.0, 0, false});
        log << "  " << labels[m] << " " << policy->spec()
            << ": n/a (a stacked-layout model can only hide whole time columns)\n";
        continue;
      }
      add(labels[m], impute_with_model(options.checkpoints[m], windows, masks, options.inference));
    }
  }
  table.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return table;
}

}  // namespace moca::model
