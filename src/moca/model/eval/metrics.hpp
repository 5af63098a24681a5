#pragma once
/// \file metrics.hpp
/// Classification metrics and fold summaries (torch-free).
#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace moca::model {

/// Metrics of one set of predictions over K classes.
struct ClassificationMetrics {
  int classes = 0;        ///< K
  long n = 0;             ///< number of predictions
  double accuracy = 0.0;  ///< top-1: fraction of predictions equal to the truth
  /// Unweighted mean of per-class F1 = 2PR/(P+R) (0 when P + R = 0) over the classes that occur
  /// in the truth or the predictions (scikit-learn's average='macro').
  double macro_f1 = 0.0;
  /// Mean of per-class recall over the classes that occur in the truth (scikit-learn's
  /// balanced_accuracy_score).
  double balanced_accuracy = 0.0;
  Eigen::MatrixXi confusion;      ///< K x K counts, row = true class, column = predicted
  std::vector<double> precision;  ///< per class (0 when never predicted)
  std::vector<double> recall;     ///< per class (0 when absent from the truth)
  std::vector<double> f1;         ///< per class
  std::vector<long> support;      ///< per class: windows of that true class
};

/// Computes the metrics. Throws std::invalid_argument if the vectors differ in length, are
/// empty, or hold a class id outside [0, classes).
ClassificationMetrics classification_metrics(const std::vector<int>& truth,
                                             const std::vector<int>& predicted, int classes);

/// JSON: accuracy, macro_f1, balanced_accuracy, n, per-class arrays and the confusion matrix.
nlohmann::json to_json(const ClassificationMetrics& m);

/// A readable confusion matrix with class names (or ids) and per-class recall.
std::string confusion_table(const ClassificationMetrics& m,
                            const std::vector<std::string>& class_names = {});

/// A predictions CSV (`moca linprobe|finetune --predictions`, read by `moca metrics`).
struct Predictions {
  std::vector<int> fold;  ///< per row; all 0 when the file has no fold column
  std::vector<int> truth;
  std::vector<int> predicted;
  int max_id() const;  ///< the largest class id in truth and predicted (0 when empty)
};
/// Reads columns truth,predicted or fold,truth,predicted (a header line is allowed). Throws
/// std::invalid_argument naming the file for another column count, and the file's line and the
/// column for a non-integer or negative entry (`p.csv:4: column 2 (2.5) must be a non-negative
/// integer id`: lines 1-based with the header and blank lines counted, as the CSV reader names
/// its errors); std::runtime_error when the file cannot be read.
Predictions read_predictions_csv(const std::string& path);

/// Metrics of all predictions pooled and of each fold (in fold order), over `classes` classes
/// (0 = max id + 1; at least 2).
struct PredictionMetrics {
  ClassificationMetrics pooled;
  std::vector<int> fold_ids;
  std::vector<ClassificationMetrics> folds;
};
PredictionMetrics prediction_metrics(const Predictions& p, int classes = 0);

/// Mean and sample standard deviation (n - 1 denominator; 0 for n = 1) of fold results.
struct MeanSd {
  double mean = 0.0;
  double sd = 0.0;
  int n = 0;
};
/// Throws std::invalid_argument on an empty vector.
MeanSd mean_sd(const std::vector<double>& values);

}  // namespace moca::model
