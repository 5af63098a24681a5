#pragma once
/// \file matrix_io.hpp
/// Reading and writing numeric arrays: CSV (header optional) and NumPy .npy (v1/v2/v3,
/// little-endian float32/float64/int32/int64, C or Fortran order). Every malformed input
/// raises an exception naming the file, the line or field, and the rule it broke.
#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace moca {

/// An n-dimensional array read from a file: values in C (row-major) order, as double.
struct NdArray {
  std::vector<std::int64_t> shape;  ///< e.g. {N, C, L}
  std::vector<double> data;         ///< product(shape) values, C order
  std::string dtype;                ///< source dtype as in the .npy header, e.g. "<f4"
  /// For string dtypes ('<U<n>' UTF-32 or '|S<n>' bytes) the values as UTF-8 text, C order, with
  /// numpy's trailing NUL padding removed; `data` is then empty. Empty for numeric dtypes.
  std::vector<std::string> strings;
  /// The header's fortran_order: the file stored the array column-major (the values above are
  /// converted to C order either way).
  bool fortran_order = false;
  bool is_string() const { return dtype.size() > 2 && (dtype[1] == 'U' || dtype[1] == 'S'); }
  std::int64_t size() const;  ///< product of shape (1 for a 0-d array)
};

/// Reads a CSV of numbers into a matrix. A first line with any non-numeric cell is taken as a
/// header (its names go to `header` if not null). Empty lines at the end are ignored.
/// Throws std::runtime_error (cannot open) or std::invalid_argument naming file, line and column
/// for: no data rows, ragged rows, non-numeric cells, NaN or Inf values. `lines`, if not null,
/// receives each row's line number in the file (1-based, the header and empty lines counted), so
/// a caller's own checks name the line as these errors do (`path:LINE: ...`).
Eigen::MatrixXd read_csv_matrix(const std::string& path, std::vector<std::string>* header = nullptr,
                                std::vector<long>* lines = nullptr);

/// Reads a .npy file (any supported dtype, any rank). Numeric dtypes go to `data`; the string
/// dtypes '<U<n>' and '|S<n>' go to `strings` (see NdArray). Throws std::invalid_argument on a bad
/// magic string, unsupported dtype or byte order (e.g. object arrays '|O', which need pickle),
/// malformed header, or truncated data.
NdArray read_npy(const std::string& path);

/// Reads a 2-D .npy (or 1-D, as an n x 1 column) into a matrix; NaN/Inf are rejected.
Eigen::MatrixXd read_npy_matrix(const std::string& path);

/// Reads a matrix from CSV or NPY, chosen by the file extension (.npy, otherwise CSV).
Eigen::MatrixXd read_matrix(const std::string& path);

/// Writes a .npy file (float64 '<f8' or float32 '<f4', C order) atomically.
void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, const double* data,
               bool as_float32 = false);
/// Writes a float32 ('<f4', C order) .npy of shape (N, row_shape...) atomically, with rows that
/// come one at a time: `producer` calls `put(row)` once per row (a row is the product of
/// row_shape floats) and N is the number of calls. Memory does not grow with N: the header is
/// written with room for any N and rewritten in place at the end. If `producer` throws, the
/// exception propagates unchanged and `path` is left as it was. Returns N.
std::int64_t write_npy_rows(
    const std::string& path, const std::vector<std::int64_t>& row_shape,
    const std::function<void(const std::function<void(const float*)>& put)>& producer);
/// Writes a .npy of int64 values ('<i8') atomically.
void write_npy_int(const std::string& path, const std::vector<std::int64_t>& shape,
                   const std::int64_t* data);

/// Writes a 1-D .npy of strings as numpy's '<U<n>' (UTF-32LE, n = longest string in code points,
/// at least 1) atomically; `values` must be valid UTF-8 (std::invalid_argument otherwise).
void write_npy_strings(const std::string& path, const std::vector<std::string>& values);

/// Writes a matrix as CSV (optional header line), full precision, atomically.
void write_csv_matrix(const std::string& path, const Eigen::MatrixXd& m,
                      const std::vector<std::string>& header = {});

}  // namespace moca
