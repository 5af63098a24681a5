#include "moca/model/eval/detail/inference_batches.hpp"
#include "moca/common/error_text.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace moca::model::detail {

void check_fits(const CheckpointInfo& info, const data::Windows& w, const char* who) {
  w.validate(std::string(who) + ": windows");
  if (w.length != info.model.length) {
    throw_invalid(who, "windows of length " + std::to_string(w.length) +
                           " do not fit the model (length " + std::to_string(info.model.length) +
                           ")");
  }
}

std::vector<std::vector<int>> batches_by_count(const std::vector<int>& counts, int batch) {
  std::map<int, std::vector<int>> groups;
  for (size_t i = 0; i < counts.size(); ++i) groups[counts[i]].push_back(static_cast<int>(i));
  std::vector<std::vector<int>> out;
  for (auto& kv : groups) {
    for (size_t s = 0; s < kv.second.size(); s += static_cast<size_t>(batch)) {
      out.emplace_back(kv.second.begin() + static_cast<long>(s),
                       kv.second.begin() + static_cast<long>(std::min(
                                               kv.second.size(), s + static_cast<size_t>(batch))));
    }
  }
  return out;
}

}  // namespace moca::model::detail
