#include "moca/model/eval/predict.hpp"

#include <algorithm>
#include <iomanip>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "moca/data/mapped_npy.hpp"
#include "moca/data/window_source.hpp"
#include "moca/model/eval/metrics.hpp"

namespace moca::model {

namespace {

// A subject's printable name: its pid string, its id, or empty when unknown.
std::string subject_text(const data::Windows& w, int i) {
  const int s = w.subjects(i);
  if (s < 0) return "";
  if (s < static_cast<int>(w.subject_names.size())) return w.subject_names[static_cast<size_t>(s)];
  return std::to_string(s);
}

// A CSV field: quoted when it holds a comma, quote or line break.
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

void PredictOptions::validate() const {
  if (model.empty()) {
    throw std::invalid_argument("PredictOptions::model is required (a classifier checkpoint)");
  }
  check_ranges(*this);
  runtime.validate();
  data.validate();
}

Prediction predict_data(const PredictOptions& o, std::ostream& log) {
  o.validate();
  const Classifier clf(o.model, o.runtime);
  const ClassifierSpec& spec = clf.spec();
  std::vector<std::string> notes;
  const bool by_position = o.match_channels == ChannelMatch::kPosition;
  auto prepare = [&](const data::Windows& windows, std::vector<std::string>* n) {
    return prepare_windows(
        spec, by_position ? channels_by_position(windows, spec.input_channels, n) : windows, n);
  };
  data::Dataset ds;
  data::Windows w;  // the prepared windows; streamed: their labels and subjects alone
  Eigen::MatrixXd proba;
  std::vector<int> pred;
  if (data::wants_stream(o.data)) {
    // A .npy folder read a chunk at a time (--stream, or a sharded one), each window fitted to
    // the classifier's rate and length as it is read (as open_dataset fits windows in memory),
    // then prepared.
    data::DataOptions whole = o.data;
    whole.split = data::SplitKind::kAll;
    const data::StreamSelection s = data::select_stream(whole, log);
    ds = s.described;
    const int n = s.train->size();
    const auto resampled = data::resampled_to(*s.train, spec.sample_rate_hz, spec.length, &log);
    const data::WindowSource& source =
        resampled ? static_cast<const data::WindowSource&>(*resampled) : *s.train;
    data::for_each_chunk(source, data::kEvalChunk, [&](int first, const data::Windows& chunk) {
      std::vector<std::string> chunk_notes;
      const data::Windows c = prepare(chunk, &chunk_notes);
      if (first == 0) notes = chunk_notes;
      Eigen::MatrixXd p;
      const std::vector<int> cp = clf.predict(c, o.proba ? &p : nullptr);
      pred.insert(pred.end(), cp.begin(), cp.end());
      if (o.proba) {
        proba.conservativeResize(static_cast<Eigen::Index>(pred.size()), p.cols());
        proba.bottomRows(p.rows()) = p;
      }
      if (first == 0) w = c.subset({});  // the prepared metadata; labels and subjects below
    });
    w.labels = s.train->meta().labels;
    w.subjects = s.train->meta().subjects;
    w.x.resize(n, 0);  // (no values: the rows count the windows)
  } else {
    ds = data::select_described(o.data, log, spec.length, spec.sample_rate_hz);
    w = prepare(ds.windows, &notes);
    pred = clf.predict(w, o.proba ? &proba : nullptr);
  }
  for (const auto& n : notes) log << "predict: " << n << "\n";
  bool labelled = false;
  for (int i = 0; i < w.size(); ++i) labelled = labelled || w.labels(i) >= 0;
  const std::vector<int> truth = labelled ? labels_as_classifier_ids(spec, w) : std::vector<int>{};
  Prediction p;
  std::ostringstream csv;
  csv << "window,subject,predicted" << (labelled ? ",truth" : "");
  if (o.proba)
    for (const auto& c : spec.class_names) csv << "," << csv_field("p_" + c);
  csv << "\n" << std::setprecision(9);
  for (int i = 0; i < w.size(); ++i) {
    csv << i << "," << csv_field(subject_text(w, i)) << ","
        << csv_field(spec.class_names[static_cast<size_t>(pred[static_cast<size_t>(i)])]);
    if (labelled) {
      const int t = truth[static_cast<size_t>(i)];
      csv << "," << (t >= 0 ? csv_field(spec.class_names[static_cast<size_t>(t)]) : "");
    }
    if (o.proba)
      for (Eigen::Index k = 0; k < proba.cols(); ++k) csv << "," << proba(i, k);
    csv << "\n";
  }
  p.csv = csv.str();
  nlohmann::json& j = p.json;
  j["command"] = "predict";
  j["model"] = o.model;
  j["data"] = ds.to_json();
  j["data"]["source"] = ds.spec.to_string();
  j["windows"] = w.size();
  j["class_names"] = spec.class_names;
  j["input_channels"] = spec.input_channels;
  j["notes"] = notes;
  std::vector<long> counts(spec.class_names.size(), 0);
  for (int c : pred) ++counts[static_cast<size_t>(c)];
  j["predicted_counts"] = counts;
  std::ostringstream report;
  report << "predict: " << w.size() << " windows (" << ds.spec.to_string() << ") with " << o.model
         << "\n";
  std::vector<int> t_known, p_known;
  for (size_t i = 0; i < truth.size(); ++i) {
    if (truth[i] < 0) continue;
    t_known.push_back(truth[i]);
    p_known.push_back(pred[i]);
  }
  if (!t_known.empty()) {
    const auto m = classification_metrics(t_known, p_known, clf.classes());
    j["metrics"] = to_json(m);
    report << confusion_table(m, spec.class_names);
    report << std::fixed << std::setprecision(2) << "top-1 " << 100 * m.accuracy << " %, macro-F1 "
           << 100 * m.macro_f1 << " %, balanced accuracy " << 100 * m.balanced_accuracy << " % ("
           << m.n << " labelled windows)\n";
  } else {
    report << "predict: no labels in the data; predictions only\n";
  }
  p.report = report.str();
  return p;
}

}  // namespace moca::model
