#pragma once
/// \file npy_header.hpp
/// The header of a NumPy .npy file without its data: what a memory map of the array needs (the
/// element type, shape, order and where the data starts), checked against the file's size.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace moca {

/// A .npy file's header.
struct NpyHeader {
  std::vector<std::int64_t> shape;  ///< e.g. {N, C, L}
  std::string dtype;                ///< as in the header, e.g. "<f4", "<f2", "<U7"
  bool fortran_order = false;       ///< the array is stored column-major
  std::int64_t data_offset = 0;     ///< bytes before the first element
  std::int64_t file_size = 0;       ///< the file's size in bytes
  /// Product of shape (1 for a 0-d array); std::invalid_argument naming `path` on overflow.
  std::int64_t count(const std::string& path) const;
};

/// Reads the magic string, version and header dictionary of `path` (versions 1-3, the rules of
/// read_npy). Throws std::runtime_error when the file cannot be opened and std::invalid_argument
/// naming it for a malformed header.
NpyHeader read_npy_header(const std::string& path);

/// The element width in bytes of a numeric .npy dtype that a memory map reads ('<f4' 4, '<f2' 2,
/// '<f8' 8, '<i8' 8, '<i4' 4, '|u1'/'|i1'/'|b1' 1), or 0 for any other (strings, big-endian,
/// objects).
int npy_numeric_width(const std::string& dtype);

/// Throws std::invalid_argument naming `path` unless the file holds the whole array that its
/// header states: data_offset + count x width bytes (a truncated file says both sizes; trailing
/// bytes are allowed, as numpy allows them).
void require_npy_complete(const NpyHeader& h, int width, const std::string& path);

/// write_npy_rows (matrix_io.hpp) with elements of the numeric `dtype` ('<f4', '<f2', ...):
/// `put(bytes)` takes one row, the product of row_shape elements of the dtype's width.
/// std::invalid_argument for a dtype that is not numeric.
std::int64_t write_npy_byte_rows(
    const std::string& path, const std::vector<std::int64_t>& row_shape, const std::string& dtype,
    const std::function<void(const std::function<void(const char*)>& put)>& producer);

}  // namespace moca
