#include "moca/data/zip_archive.hpp"

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

namespace moca::data {

namespace zip_detail {

constexpr std::uint32_t kEndRecord = 0x06054b50;      // end of central directory
constexpr std::uint32_t kCentralHeader = 0x02014b50;  // central directory file header
constexpr std::uint32_t kLocalHeader = 0x04034b50;    // local file header
constexpr size_t kEndRecordSize = 22;
constexpr size_t kCentralSize = 46;
constexpr size_t kLocalSize = 30;

std::uint32_t u16(const std::string& b, size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8;
}
std::uint32_t u32(const std::string& b, size_t at) {
  return u16(b, at) | u16(b, at + 2) << 16;
}

[[noreturn]] void bad(const std::string& name, const std::string& what) {
  throw std::invalid_argument(name + ": " + what);
}

}  // namespace zip_detail

ZipArchive ZipArchive::open(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read '" + path + "'");
  return from_bytes(std::move(bytes), path);
}

ZipArchive ZipArchive::from_bytes(std::string bytes, std::string name) {
  using namespace zip_detail;
  ZipArchive z;
  z.bytes_ = std::move(bytes);
  z.name_ = std::move(name);
  const std::string& b = z.bytes_;
  // The end record is the last 22 bytes, before a comment of at most 65535 bytes.
  if (b.size() < kEndRecordSize)
    bad(z.name_, "not a zip archive (" + std::to_string(b.size()) +
                     " bytes, no end-of-central-directory record)");
  size_t end = std::string::npos;
  const size_t lowest = b.size() > kEndRecordSize + 65535 ? b.size() - kEndRecordSize - 65535 : 0;
  for (size_t at = b.size() - kEndRecordSize + 1; at-- > lowest;) {
    if (u32(b, at) == kEndRecord && at + kEndRecordSize + u16(b, at + 20) == b.size()) {
      end = at;
      break;
    }
  }
  if (end == std::string::npos)
    bad(z.name_, "not a zip archive (no end-of-central-directory record)");
  const std::uint32_t disk = u16(b, end + 4), cd_disk = u16(b, end + 6);
  const std::uint32_t count = u16(b, end + 10), cd_size = u32(b, end + 12);
  const std::uint32_t cd_offset = u32(b, end + 16);
  if (count == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {
    bad(z.name_, "a ZIP64 archive (not read; unpack it with unzip)");
  }
  if (disk != 0 || cd_disk != 0 || u16(b, end + 8) != count) {
    bad(z.name_, "a multi-disk (split) archive (not read)");
  }
  if (static_cast<std::uint64_t>(cd_offset) + cd_size > end) {
    bad(z.name_, "the central directory (" + std::to_string(cd_size) + " bytes at " +
                     std::to_string(cd_offset) + ") points outside the archive");
  }
  size_t at = cd_offset;
  for (std::uint32_t k = 0; k < count; ++k) {
    if (at + kCentralSize > end || u32(b, at) != kCentralHeader) {
      bad(z.name_, "central directory entry " + std::to_string(k) + " of " + std::to_string(count) +
                       " is damaged (no file header at " + std::to_string(at) + ")");
    }
    Entry e;
    const std::uint32_t flags = u16(b, at + 8);
    e.method = static_cast<std::uint16_t>(u16(b, at + 10));
    e.crc = u32(b, at + 16);
    e.compressed = u32(b, at + 20);
    e.size = u32(b, at + 24);
    const std::uint32_t name_len = u16(b, at + 28), extra = u16(b, at + 30),
                        comment = u16(b, at + 32);
    e.local = u32(b, at + 42);
    if (at + kCentralSize + name_len + extra + comment > end) {
      bad(z.name_, "central directory entry " + std::to_string(k) + " runs past the directory");
    }
    std::string entry = b.substr(at + kCentralSize, name_len);
    if (flags & 1u) bad(z.name_, entry + " is encrypted (not read)");
    if (e.compressed == 0xffffffff || e.size == 0xffffffff || e.local == 0xffffffff) {
      bad(z.name_, entry + " has ZIP64 sizes (not read; unpack it with unzip)");
    }
    z.names_.push_back(std::move(entry));
    z.entries_.push_back(e);
    at += kCentralSize + name_len + extra + comment;
  }
  return z;
}

bool ZipArchive::contains(const std::string& entry) const {
  return std::find(names_.begin(), names_.end(), entry) != names_.end();
}

std::string ZipArchive::read(const std::string& entry) const {
  using namespace zip_detail;
  const auto it = std::find(names_.begin(), names_.end(), entry);
  if (it == names_.end()) bad(name_, "no entry " + entry);
  const Entry& e = entries_[static_cast<size_t>(it - names_.begin())];
  const std::string& b = bytes_;
  const std::string where = name_ + "/" + entry;
  if (static_cast<std::uint64_t>(e.local) + kLocalSize > b.size() ||
      u32(b, e.local) != kLocalHeader) {
    bad(where,
        "its local header (at " + std::to_string(e.local) + ") is missing or outside the archive");
  }
  const std::uint64_t data = static_cast<std::uint64_t>(e.local) + kLocalSize +
                             u16(b, e.local + 26) + u16(b, e.local + 28);
  if (data + e.compressed > b.size()) {
    bad(where, "its data (" + std::to_string(e.compressed) + " bytes at " + std::to_string(data) +
                   ") runs past the archive's end (truncated?)");
  }
  std::string out;
  if (e.method == 0) {
    if (e.compressed != e.size) bad(where, "stored with different sizes");
    out = b.substr(static_cast<size_t>(data), e.size);
  } else if (e.method == 8) {
    // deflate expands at most 1032:1; a larger stated size is a damaged (or hostile) header
    if (static_cast<std::uint64_t>(e.size) > 1032ull * e.compressed + 64) {
      bad(where, "states " + std::to_string(e.size) + " bytes from " +
                     std::to_string(e.compressed) +
                     " compressed, more than deflate can produce (damaged header)");
    }
    out.resize(e.size);
    z_stream s{};
    if (inflateInit2(&s, -MAX_WBITS) != Z_OK)
      throw std::runtime_error(where + ": zlib init failed");
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(b.data() + data));
    s.avail_in = e.compressed;
    s.next_out = reinterpret_cast<Bytef*>(out.data());
    s.avail_out = e.size;
    const int rc = inflate(&s, Z_FINISH);
    const auto produced = s.total_out;
    inflateEnd(&s);
    if (rc != Z_STREAM_END || produced != e.size) {
      bad(where, "damaged deflate data (" + std::to_string(produced) + " of " +
                     std::to_string(e.size) + " bytes inflated)");
    }
  } else {
    bad(where, "compression method " + std::to_string(e.method) +
                   " (only stored and deflated entries are read)");
  }
  const auto crc = static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(out.data()), static_cast<uInt>(out.size())));
  if (crc != e.crc) bad(where, "CRC-32 does not match its header (damaged archive)");
  return out;
}

}  // namespace moca::data
