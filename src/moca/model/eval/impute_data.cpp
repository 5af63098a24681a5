#include "moca/model/eval/impute_data.hpp"

#include <algorithm>
#include <sstream>

#include "moca/model/eval/protocol.hpp"

namespace moca::model {

void ImputeDataOptions::validate() const {
  impute.validate();
  check_ranges(*this);
  data.validate();
}

ImputeResult impute_data(const ImputeDataOptions& o, std::ostream& log) {
  o.validate();
  ModelGeometry geometry{0, 0.0, 0};  // (no checkpoint: the selection's length at 50 Hz)
  if (!o.impute.checkpoints.empty()) geometry = checkpoint_geometry(o.impute.checkpoints[0]);
  const auto d =
      data::select_test(o.data, log, geometry.length, geometry.sample_rate_hz, o.max_windows);
  const data::WindowSource& test = *d->windows;
  const data::Windows& meta = test.meta();
  log << "impute: " << test.size() << " test windows"
      << (d->streamed() ? " (read " + std::to_string(data::kEvalChunk) + " at a time)" : "")
      << "\n";
  ImputeOptions options = o.impute;
  if (meta.modalities.size() == 1 && options.tasks == ImputeOptions{}.tasks) {
    // The default task list's sensor task masks one modality against the others.
    options.tasks.erase(
        std::remove_if(options.tasks.begin(), options.tasks.end(),
                       [](const std::string& t) { return t.rfind("sensor", 0) == 0; }),
        options.tasks.end());
    log << "impute: the data has one modality group (" << meta.modalities[0].name
        << "): the sensor task (one modality kept) is left out\n";
  }
  const auto table = evaluate_imputation(options, test, log);
  ImputeResult r;
  nlohmann::json& j = r.json;
  j["command"] = "impute";
  j["data"] = d->data;
  j["data"]["evaluated_windows"] = test.size();
  j["seed"] = o.impute.seed;
  j["mice"] = {{"iterations", o.impute.mice.iterations},
               {"draws", o.impute.mice.draws},
               {"ridge", o.impute.mice.ridge},
               {"posterior", o.impute.mice.posterior}};
  j["table"] = table.to_json();
  std::ostringstream text;
  text << "imputation error on masked samples (" << test.size() << " test windows, " << d->source
       << ")\n"
       << table.to_text();
  r.text = text.str();
  return r;
}

}  // namespace moca::model
