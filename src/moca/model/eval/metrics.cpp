#include "moca/model/eval/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/common/number_text.hpp"

namespace moca::model {

ClassificationMetrics classification_metrics(const std::vector<int>& truth,
                                             const std::vector<int>& predicted, int classes) {
  if (truth.size() != predicted.size()) {
    throw_invalid("classification_metrics()", std::to_string(truth.size()) + " true labels but " +
                                                  std::to_string(predicted.size()) +
                                                  " predictions");
  }
  if (truth.empty()) throw_invalid("classification_metrics()", "no predictions");
  if (classes < 1) {
    throw_invalid("classification_metrics()",
                  "classes (" + std::to_string(classes) + ") must be >= 1");
  }
  ClassificationMetrics m;
  m.classes = classes;
  m.n = static_cast<long>(truth.size());
  m.confusion = Eigen::MatrixXi::Zero(classes, classes);
  for (size_t i = 0; i < truth.size(); ++i) {
    const int t = truth[i], p = predicted[i];
    if (t < 0 || t >= classes || p < 0 || p >= classes) {
      throw_invalid("classification_metrics()",
                    "entry " + std::to_string(i) + " has class ids (" + std::to_string(t) + ", " +
                        std::to_string(p) + ") outside [0, " + std::to_string(classes) + ")");
    }
    ++m.confusion(t, p);
  }
  long correct = 0;
  double f1_sum = 0.0, recall_sum = 0.0;
  int f1_classes = 0, recall_classes = 0;
  for (int k = 0; k < classes; ++k) {
    const long tp = m.confusion(k, k);
    const long actual = m.confusion.row(k).sum();
    const long predicted_k = m.confusion.col(k).sum();
    correct += tp;
    const double prec = predicted_k > 0 ? static_cast<double>(tp) / predicted_k : 0.0;
    const double rec = actual > 0 ? static_cast<double>(tp) / actual : 0.0;
    const double f1 = prec + rec > 0.0 ? 2.0 * prec * rec / (prec + rec) : 0.0;
    m.precision.push_back(prec);
    m.recall.push_back(rec);
    m.f1.push_back(f1);
    m.support.push_back(actual);
    if (actual > 0 || predicted_k > 0) {
      f1_sum += f1;
      ++f1_classes;
    }
    if (actual > 0) {
      recall_sum += rec;
      ++recall_classes;
    }
  }
  m.accuracy = static_cast<double>(correct) / static_cast<double>(m.n);
  m.macro_f1 = f1_classes > 0 ? f1_sum / f1_classes : 0.0;
  m.balanced_accuracy = recall_classes > 0 ? recall_sum / recall_classes : 0.0;
  return m;
}

nlohmann::json to_json(const ClassificationMetrics& m) {
  nlohmann::json j;
  j["n"] = m.n;
  j["classes"] = m.classes;
  j["accuracy"] = m.accuracy;
  j["macro_f1"] = m.macro_f1;
  j["balanced_accuracy"] = m.balanced_accuracy;
  j["precision"] = m.precision;
  j["recall"] = m.recall;
  j["f1"] = m.f1;
  j["support"] = m.support;
  nlohmann::json rows = nlohmann::json::array();
  for (int r = 0; r < m.confusion.rows(); ++r) {
    std::vector<int> row(static_cast<size_t>(m.confusion.cols()));
    for (int c = 0; c < m.confusion.cols(); ++c) row[static_cast<size_t>(c)] = m.confusion(r, c);
    rows.push_back(row);
  }
  j["confusion"] = rows;
  return j;
}

std::string confusion_table(const ClassificationMetrics& m, const std::vector<std::string>& names) {
  auto name = [&](int k) {
    return k < static_cast<int>(names.size()) ? names[static_cast<size_t>(k)] : std::to_string(k);
  };
  size_t w = 6;
  for (int k = 0; k < m.classes; ++k) w = std::max(w, name(k).size());
  std::ostringstream os;
  os << std::left << std::setw(static_cast<int>(w)) << "true\\pred";
  for (int k = 0; k < m.classes; ++k) os << std::right << std::setw(7) << k;
  os << std::setw(9) << "recall"
     << "\n";
  for (int r = 0; r < m.classes; ++r) {
    os << std::left << std::setw(static_cast<int>(w)) << name(r);
    for (int c = 0; c < m.classes; ++c) os << std::right << std::setw(7) << m.confusion(r, c);
    os << std::setw(9) << std::fixed << std::setprecision(3) << m.recall[static_cast<size_t>(r)]
       << "\n";
  }
  return os.str();
}

int Predictions::max_id() const {
  int m = 0;
  for (int t : truth) m = std::max(m, t);
  for (int p : predicted) m = std::max(m, p);
  return m;
}

Predictions read_predictions_csv(const std::string& path) {
  std::vector<long> lines;
  const Eigen::MatrixXd m = read_csv_matrix(path, nullptr, &lines);
  if (m.cols() != 2 && m.cols() != 3) {
    throw_invalid("read_predictions_csv()",
                  path + " has " + std::to_string(m.cols()) +
                      " columns; expected truth,predicted or fold,truth,predicted");
  }
  const int off = m.cols() == 3 ? 1 : 0;
  Predictions p;
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index k = 0; k < m.cols(); ++k) {
      if (m(i, k) != std::floor(m(i, k)) || m(i, k) < 0) {
        // Named as the CSV reader names its errors: the file's line (1-based, header counted)
        // and the 1-based column.
        throw_invalid("", path + ":" + std::to_string(lines[static_cast<size_t>(i)]) + ": column " +
                              std::to_string(k + 1) + " (" + format_number(m(i, k)) +
                              ") must be a non-negative integer id");
      }
    }
    p.fold.push_back(off ? static_cast<int>(m(i, 0)) : 0);
    p.truth.push_back(static_cast<int>(m(i, off)));
    p.predicted.push_back(static_cast<int>(m(i, off + 1)));
  }
  return p;
}

PredictionMetrics prediction_metrics(const Predictions& p, int classes) {
  const int k = std::max(classes > 0 ? classes : p.max_id() + 1, 2);
  PredictionMetrics r;
  r.pooled = classification_metrics(p.truth, p.predicted, k);
  std::map<int, std::pair<std::vector<int>, std::vector<int>>> by_fold;
  for (size_t i = 0; i < p.truth.size(); ++i) {
    by_fold[p.fold[i]].first.push_back(p.truth[i]);
    by_fold[p.fold[i]].second.push_back(p.predicted[i]);
  }
  for (const auto& [fold, tp] : by_fold) {
    r.fold_ids.push_back(fold);
    r.folds.push_back(classification_metrics(tp.first, tp.second, k));
  }
  return r;
}

MeanSd mean_sd(const std::vector<double>& v) {
  if (v.empty()) throw_invalid("mean_sd()", "no values");
  MeanSd r;
  r.n = static_cast<int>(v.size());
  for (double x : v) r.mean += x;
  r.mean /= r.n;
  if (r.n > 1) {
    double ss = 0.0;
    for (double x : v) ss += (x - r.mean) * (x - r.mean);
    r.sd = std::sqrt(ss / (r.n - 1));
  }
  return r;
}

}  // namespace moca::model
