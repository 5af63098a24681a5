#pragma once
/// \file synthetic.hpp
/// The built-in synthetic IMU generator (the embedded default data set): windows of a waist-worn
/// 3-axis accelerometer (g) and 3-axis gyroscope (rad/s) for the paper's 7 classes, with a dial for
/// the strength of the cross-modal (acc <-> gyro) coupling. The full generative model, with its
/// equations, is in docs/data.md; in short, per window i with class k:
///
///   latent motion M = (k, subject mount tilt, posture / gait / transition parameters)
///   a(t)  = R(theta(t)) u_k + b(t)             accelerometer: gravity seen through the body's
///                                               orientation, plus body acceleration b(t)
///   w(t)  = -d theta / dt                       the angular velocity of the same motion
///   acc(t)  = a(t) + noise * e_a(t)
///   gyro(t) = sqrt(c) w(t) + sqrt(1 - c) w'(t) + noise * e_g(t)
///
/// where w'(t) is the angular velocity of an independent latent motion M' (its own class, subject,
/// phases), c = `coupling` and e_a, e_g are independent N(0, 1) white noise. So at c = 0 the gyro
/// channels are a function of M' and noise only and are statistically independent of the acc
/// channels (and of the label); at c = 1 the gyro measures exactly the rotation that moves gravity
/// in the acc channels and the gait harmonics that drive both; between, the cross-modal dependence
/// (same time slice) grows with c. Within-modality structure (acc axes among themselves, gyro axes
/// among themselves) is present at every c.
#include <cstdint>
#include <string>

#include "moca/data/windows.hpp"

namespace moca::data {

/// Options of generate_synthetic (defaults: 1000 four-second windows at 50 Hz, coupling 0.8).
struct SyntheticOptions {
  int windows = 1000;            ///< number of windows n (>= 1)
  int length = 200;              ///< samples per window L (>= 8)
  double sample_rate_hz = 50.0;  ///< sampling rate (> 0, <= 10000)
  double coupling = 0.8;         ///< cross-modal coupling c in [0, 1]: 0 = independent modalities,
                                 ///< 1 = gyro measures the acc's own motion
  double noise = 0.02;           ///< white sensor noise std (g for acc, rad/s for gyro), >= 0
  int subjects = 10;             ///< number of synthetic subjects (>= 1); window i has subject
                                 ///< i mod subjects, each with its own sensor mount tilt
  std::uint64_t seed = 0;        ///< same seed, same windows (every window has its own stream)

  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;
};

/// Generates `options.windows` windows: 6 channels acc_x, acc_y, acc_z, gyro_x, gyro_y, gyro_z;
/// labels 0..6 (class names as har_class_names()) balanced by construction (window classes are a
/// seeded shuffle of i mod 7); subjects i mod `subjects`. Deterministic per seed and independent
/// of the thread count (windows are generated in parallel, each from Rng(derive_seed(seed, i))).
Windows generate_synthetic(const SyntheticOptions& options);

}  // namespace moca::data
