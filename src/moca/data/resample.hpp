#pragma once
/// \file resample.hpp
/// Band-limited resampling of windows and the crop/pad rule that brings them to a model's length.
///
/// **Resampling** (resample_bandlimited): each row (channel) is treated as samples of a signal
/// band-limited to the lower of the two Nyquist frequencies, min(from, to) / 2, and evaluated at
/// the new sample times t_j = j / to (the first sample keeps its time 0). Output j is
///   y_j = sum_k w(p_j - k) x_k / sum_k w(p_j - k),  p_j = j * from / to (input sample position),
///   w(d) = sinc(2 f_c d) * kaiser(d / h),  f_c = min(1, to / from) / 2 (cycles per input sample),
/// with a Kaiser window (beta = 8) of half-width h = 16 / min(1, to / from) input samples; the
/// input is mirrored at both ends (x_{-k} = x_k, x_{T-1+k} = x_{T-1-k}) so that the kernel never
/// runs off the window, and the weights are normalised to sum to 1 (a constant stays exactly
/// constant). Downsampling therefore low-passes first (no aliasing); upsampling interpolates with
/// the ideal (windowed) interpolator. The new length keeps the window's duration:
/// M = round(T * to / from).
///
/// **Length** (fit_length): a window of M samples is brought to the model's L by keeping the
/// central L samples (M > L; floor((M - L) / 2) dropped at the start, the rest at the end) or by
/// repeating the first and last sample (M < L; floor((L - M) / 2) copies of the first sample
/// before, the rest copies of the last after — numpy's "edge" padding).
#include "moca/data/windows.hpp"

namespace moca::data {

/// Samples after resampling T samples from `from_hz` to `to_hz`: round(T * to / from), >= 1.
int resampled_length(int samples, double from_hz, double to_hz);

/// Resamples each row of x (C x T) from `from_hz` to `to_hz` (rule above) into C x
/// resampled_length(T, from, to) columns. Equal rates return x unchanged. std::invalid_argument if
/// T < 1 or a rate is not positive and finite.
RowMatrixXf resample_bandlimited(const RowMatrixXf& x, double from_hz, double to_hz);

/// Centre crop or edge padding of each row of x (C x M) to `length` columns (rule above).
/// std::invalid_argument if length < 1 or x has no columns.
RowMatrixXf fit_length(const RowMatrixXf& x, int length);

/// Every window of `w` resampled to `to_hz` (when w.sample_rate_hz differs) and then fitted to
/// `length` samples (0 = keep the resampled length); metadata is kept, sample_rate_hz becomes
/// `to_hz`. Windows are processed in parallel (OpenMP); the result does not depend on threads.
Windows resample_windows(const Windows& w, double to_hz, int length);

}  // namespace moca::data
