#include "moca/model/eval/classify.hpp"

#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "moca/common/output_file.hpp"
#include "moca/data/hmp.hpp"
#include "moca/model/eval/metrics.hpp"

namespace moca::model {

void ClassifyOptions::validate() const {
  data.validate();
  run.validate();
  check_ranges(*this);
  if (adl_loso && !data.data.empty()) {
    throw std::invalid_argument(
        "the protocol adl-loso reads ClassifyOptions::hmp (or $MOCA_HMP_DIR); for another data "
        "set use DataOptions::data with the protocol loso (DataOptions::data was " +
        data.data + ")");
  }
  if (input_seconds > 0 && run.downstream.mode == DownstreamMode::kScratch) {
    throw std::invalid_argument(
        "ClassifyOptions::input_seconds sets a pre-trained encoder's input length; a model "
        "trained from scratch takes DataOptions::window_length");
  }
}

std::string ClassifyOptions::protocol_name() const {
  return adl_loso ? "adl-loso" : to_string(run.protocol);
}

std::string Classification::confusion_table() const {
  if (result.folds.size() != 1) return {};
  return model::confusion_table(result.folds[0].result.test, class_names);
}

std::string Classification::summary_line() const {
  const auto a = mean_sd(result.scores.accuracy), m = mean_sd(result.scores.macro_f1),
             b = mean_sd(result.scores.balanced_accuracy);
  const size_t splits = result.folds.size();
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << command << " (" << protocol << ", " << splits
      << (splits == 1 ? " split" : " splits") << ", " << source << "): top-1 " << 100 * a.mean;
  if (a.n > 1) out << " +- " << 100 * a.sd;
  out << " %, macro-F1 " << 100 * m.mean;
  if (m.n > 1) out << " +- " << 100 * m.sd;
  out << " %, balanced accuracy " << 100 * b.mean;
  if (b.n > 1) out << " +- " << 100 * b.sd;
  out << " %";
  return out.str();
}

namespace {

// The data of a classification; adl-loso stands for HMP under loso with the paper's classes,
// and the log says so.
data::Dataset open_classify_data(const ClassifyOptions& o, const ModelGeometry* geometry,
                                 std::ostream& log) {
  data::DataOptions dopts = o.data;
  if (o.adl_loso) {
    const data::AdlTransferData adl = data::adl_transfer_data(
        o.hmp, o.adl_classes == AdlClasses::kPaper, dopts.dataset.keep_classes);
    dopts.data = adl.spec;
    dopts.dataset.keep_classes = adl.keep_classes;
    log << "adl-loso: protocol loso on " << dopts.data
        << (dopts.dataset.keep_classes.empty() ? ", every class"
                                               : ", classes " + dopts.dataset.keep_classes)
        << "\n";
  }
  return geometry ? data::select_described(dopts, log, geometry->length, geometry->sample_rate_hz)
                  : data::select_described(dopts, log);
}

}  // namespace

Classification classify(const ClassifyOptions& options, RunContext& context) {
  std::ostream& log = context.log();
  options.validate();
  const DownstreamOptions& d = options.run.downstream;
  check_writable(replace_fold(options.run.save_model, 0), "ProtocolOptions::save_model");
  // The checkpoint fixes the windows' length and rate; data at another rate or length is
  // resampled and cropped/padded to it (open_dataset says so).
  ModelGeometry geometry;
  const bool scratch = d.mode == DownstreamMode::kScratch;
  if (!scratch) geometry = checkpoint_geometry(replace_fold(d.checkpoint, 0));
  if (options.input_seconds > 0) {
    std::string note;
    geometry = geometry_at_seconds(geometry, options.input_seconds,
                                   "ClassifyOptions::input_seconds", &note);
    log << note << "\n";
  }
  const data::Dataset ds = open_classify_data(options, scratch ? nullptr : &geometry, log);
  Classification c;
  c.command = to_string(d.mode);
  c.protocol = options.protocol_name();
  c.source = ds.spec.to_string();
  c.class_names = ds.windows.class_names;
  ProtocolOptions po = options.run;
  po.protocol_name = c.protocol;
  po.source = c.source;
  c.result = run_protocol(po, ds.windows, context);
  nlohmann::json& j = c.json;
  j["command"] = c.command;
  j["protocol"] = c.protocol;
  j["data"] = ds.to_json();
  j["data"]["source"] = c.source;
  j["settings"] = d.to_json();
  j["label_fraction"] = po.label_fraction;
  j["folds"] = c.result.folds_json();
  if (!po.save_model.empty()) j["saved_models"] = c.result.saved_json();
  j["summary"] = c.result.scores.summary_json();
  return c;
}

}  // namespace moca::model
