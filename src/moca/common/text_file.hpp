#pragma once
/// \file text_file.hpp
/// Line-by-line reading of plain or gzip-compressed text files (zlib's gzread handles both),
/// so data sets can be read in place whether or not they were decompressed.
#include <memory>
#include <string>

namespace moca {

/// Reads lines of `path`; if `path` does not exist but `path + ".gz"` does, reads that.
class TextFileReader {
 public:
  /// Opens the file; std::runtime_error if neither `path` nor `path.gz` can be opened, or if a
  /// file named *.gz does not start with the gzip magic bytes ("not a gzip file").
  explicit TextFileReader(const std::string& path);
  ~TextFileReader();
  TextFileReader(const TextFileReader&) = delete;
  TextFileReader& operator=(const TextFileReader&) = delete;

  /// Next line without its end-of-line characters; false at end of file.
  /// std::runtime_error on a read error (e.g. a truncated gzip stream).
  bool next_line(std::string& line);
  /// 1-based number of the line last returned.
  long line_number() const { return line_no_; }
  /// The file actually opened (with .gz if that was used).
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  long line_no_ = 0;
};

/// True if `path` or `path + ".gz"` exists as a regular file.
bool text_file_exists(const std::string& path);

}  // namespace moca
