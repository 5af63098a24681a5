#pragma once
/// \file npy_meta.hpp
/// What the .npy folder readers share (npy_windows.cpp, mapped_npy.cpp): meta.json, and the
/// labels, subject ids and split entries of a 1-D array.
#include <Eigen/Core>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moca/common/matrix_io.hpp"
#include "moca/data/npy_windows.hpp"

namespace moca::data::npy_detail {

/// meta.json as read_windows_npy reads it.
struct Meta {
  bool present = false;
  std::vector<std::string> warnings;  ///< unknown keys, with the nearest known one
  NpyLayout layout = NpyLayout::kAuto;
  std::vector<std::string> channel_names, class_names, subject_names;
  double sample_rate_hz = 0.0;
  std::string description;
  std::vector<ModalityGroup> modalities;
  /// "windows", "channels", "length" as export_dataset writes them (-1: not stated); X must agree.
  std::int64_t windows = -1, channels = -1, length = -1;
};

/// Reads `path` (absent: Meta{} with present false); std::invalid_argument naming it when
/// malformed.
Meta read_meta(const std::string& path);

/// Maps the integral numbers or strings of the 1-D array `a` (read from `path`, which messages
/// name) of n entries to ids; `names` receives the names of string ids (index = id): `known`
/// when they cover every string, else the sorted distinct strings. Numbers must be integers
/// >= min_id.
Eigen::VectorXi ids_from_array(const NdArray& a, const std::string& path, Eigen::Index n,
                               const std::string& what, const std::vector<std::string>& known,
                               std::vector<std::string>& names, int min_id);

/// Checks that the ids `ids` of split entries (names from ids_from_array) are 0 train, 1 test.
void check_parts(const Eigen::VectorXi& ids, const std::vector<std::string>& names,
                 const std::string& path);

/// The split entries' known names, {"train", "test"}.
const std::vector<std::string>& part_names();

/// Writes dir/meta.json atomically for n windows with `w`'s metadata (layout, names, rate,
/// description, counts, x_dtype, modalities) and the keys of `extra` (each one of
/// npy_meta_keys(); std::logic_error otherwise).
void write_meta_json(const Windows& w, std::int64_t n, const std::string& dir, NpyLayout layout,
                     const std::string& x_dtype, const nlohmann::json& extra);

}  // namespace moca::data::npy_detail
