#pragma once
/// \file zip_archive.hpp
/// Reading zip archives (PKWARE's APPNOTE.TXT 6.3, sections 4.3.6-4.3.16): the end-of-central-
/// directory record, the central directory's file headers and each entry's local header; entries
/// stored (method 0) or deflated (method 8, inflated with zlib). Every offset and size is
/// checked against the archive's bytes, and every entry's CRC-32 and size against its header.
/// Encrypted entries, other methods, multi-disk and ZIP64 archives are refused by name. An
/// archive is held in memory whole: the readers use it for archives of a few MB (RealWorld's
/// per-activity archives, and archives inside them).
#include <cstdint>
#include <string>
#include <vector>

namespace moca::data {

class ZipArchive {
 public:
  /// The archive in the file `path`. std::runtime_error if it cannot be read;
  /// std::invalid_argument naming `path` if it is not a zip archive moca reads.
  static ZipArchive open(const std::string& path);
  /// The archive in `bytes`, named `name` in messages (e.g. "outer.zip/inner.zip").
  static ZipArchive from_bytes(std::string bytes, std::string name);

  /// The entries' names, in central-directory order (folders included, ending in '/').
  const std::vector<std::string>& names() const { return names_; }
  bool contains(const std::string& entry) const;
  /// The entry's bytes, inflated and checked (CRC-32, size). std::invalid_argument naming the
  /// archive and entry for a missing or damaged entry.
  std::string read(const std::string& entry) const;
  const std::string& name() const { return name_; }

 private:
  struct Entry {
    std::uint16_t method = 0;
    std::uint32_t crc = 0, compressed = 0, size = 0, local = 0;
  };
  std::string bytes_, name_;
  std::vector<std::string> names_;
  std::vector<Entry> entries_;
};

}  // namespace moca::data
