#pragma once
/// \file safetensors.hpp
/// The safetensors format (Hugging Face; https://github.com/huggingface/safetensors), read and
/// written without torch and without pickle:
///
///   8 bytes   N, the header's size (unsigned 64-bit, little-endian)
///   N bytes   a JSON object (UTF-8), padded with spaces: one entry per tensor,
///             "name": {"dtype": "F32", "shape": [d0, ...], "data_offsets": [begin, end]},
///             and optionally "__metadata__": {"key": "text", ...} (a string-to-string map)
///   rest      the byte buffer: every tensor's values, little-endian, C order, at
///             [begin, end) relative to the buffer's start
///
/// Reading checks what the package's own loader checks, and names the tensor at fault: the
/// header's size against the file and against kSafetensorsMaxHeader; the JSON (an object, no key
/// twice, each entry with exactly dtype, shape and data_offsets); the dtype among the format's;
/// the byte count (product of the shape times the dtype's size) against the offsets; and the
/// offsets against each other and the buffer: sorted by begin they must start at 0, follow each
/// other without overlap or gap, and end at the buffer's end. Every failure is
/// std::invalid_argument ("where: tensor 'x': ..."); a file that cannot be opened is
/// std::runtime_error.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace moca {

/// The largest header accepted (bytes): the package's own bound (MAX_HEADER_SIZE, 100 MB).
inline constexpr std::uint64_t kSafetensorsMaxHeader = 100'000'000;

/// Bytes per value of a safetensors dtype ("F32" -> 4); 0 for a name the format does not have.
std::size_t safetensors_dtype_size(const std::string& dtype);

/// One tensor of a file: where its bytes lie in the buffer.
struct SafetensorsEntry {
  std::string name;
  std::string dtype;                ///< "F32", "F16", "BF16", "F64", "I64", "I32", ...
  std::vector<std::int64_t> shape;  ///< empty for a scalar
  std::uint64_t begin = 0;          ///< byte offsets in the buffer, [begin, end)
  std::uint64_t end = 0;
  std::int64_t numel() const;
};

/// A file read into memory, validated.
struct SafetensorsFile {
  std::map<std::string, std::string> metadata;  ///< "__metadata__" (empty when absent)
  std::vector<SafetensorsEntry> tensors;        ///< in the order of their offsets
  std::vector<char> buffer;                     ///< the byte buffer

  /// The entry named `name`; std::invalid_argument when there is none.
  const SafetensorsEntry& at(const std::string& name) const;
  /// The values of `e` as float: F32 as stored; F16, BF16 and F64 converted (F64 rounded to
  /// nearest); integer and BOOL values converted exactly where float can hold them.
  /// std::invalid_argument for the 8-bit float dtypes, which moca never writes.
  std::vector<float> floats(const SafetensorsEntry& e) const;
};

/// Parses and validates `size` bytes of a safetensors file; `where` (the file's name) opens
/// every message.
SafetensorsFile parse_safetensors(const char* data, std::size_t size, const std::string& where);

/// Reads and validates the file at `path` (parse_safetensors).
SafetensorsFile read_safetensors(const std::string& path);

/// True when the first bytes of `path` look like a safetensors file: at least 9 bytes, a header
/// size within the file, and '{' opening the header. Files it cannot open read as false.
bool looks_like_safetensors(const std::string& path);

/// One tensor to write: its values as little-endian bytes in C order.
struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::vector<char> bytes;  ///< product(shape) * safetensors_dtype_size(dtype) bytes
};

/// Writes `tensors` and `metadata` to `path` atomically (write_output_file). The buffer holds the
/// tensors by decreasing dtype size (each aligned to its value size), in the given order within
/// one size; the header is padded with spaces to a multiple of 8 bytes, as the package writes it.
/// std::invalid_argument for an unknown dtype, a byte count that does not match the shape, an
/// empty or repeated name, or the reserved name "__metadata__".
void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata);

}  // namespace moca
