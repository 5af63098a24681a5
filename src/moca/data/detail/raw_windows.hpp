#pragma once
/// \file raw_windows.hpp
/// Internal: the pieces the raw-set readers (raw_sets.cpp, realworld.cpp) share: windows of one
/// 3-axis accelerometer, collected as flat arrays and handed over as data::Windows, and
/// ssl-wearables' linear resize (utils.resize: linspace positions, linear interpolation).
#include <algorithm>
#include <vector>

#include "moca/data/windows.hpp"

namespace moca::data::detail {

/// Empty windows of channels acc_x, acc_y, acc_z (one group acc), L samples at `rate_hz`.
inline Windows acc_windows(int length, double rate_hz) {
  Windows w;
  w.channels = 3;
  w.length = length;
  w.sample_rate_hz = rate_hz;
  w.channel_names = {"acc_x", "acc_y", "acc_z"};
  w.modalities = {{"acc", {0, 1, 2}}};
  return w;
}

/// `xs` (n x 3 x L, channel-major per window), labels and subject ids into `w`.
inline void set_acc_windows(Windows& w, const std::vector<float>& xs,
                            const std::vector<int>& labels, const std::vector<int>& subjects) {
  const auto count = static_cast<Eigen::Index>(labels.size());
  w.x = Eigen::Map<const RowMatrixXf>(xs.data(), count, 3 * static_cast<Eigen::Index>(w.length));
  w.labels = Eigen::Map<const Eigen::VectorXi>(labels.data(), count);
  w.subjects = Eigen::Map<const Eigen::VectorXi>(subjects.data(), count);
}

/// Appends to `xs` one window of `rows` (W rows of x, y, z) resized linearly to L samples per
/// channel (sample t at position t (W - 1) / (L - 1)), each value divided by `divisor`.
template <class T>
void push_resized(std::vector<float>& xs, const T* rows, int W, int L, double divisor) {
  for (int c = 0; c < 3; ++c) {
    for (int t = 0; t < L; ++t) {
      const double pos = static_cast<double>(t) * (W - 1) / (L - 1);
      const auto k0 = std::min(static_cast<int>(pos), W - 2);
      const double f = pos - k0;
      const double a = rows[k0 * 3 + c], b = rows[(k0 + 1) * 3 + c];
      xs.push_back(static_cast<float>(((1 - f) * a + f * b) / divisor));
    }
  }
}

}  // namespace moca::data::detail
