#include "moca/data/mapped_npy.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "moca/common/error_text.hpp"
#include "moca/common/fingerprint.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/common/npy_header.hpp"
#include "moca/common/output_file.hpp"
#include "moca/data/detail/npy_meta.hpp"

namespace moca::data {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits = 0;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // Inf, NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;  // +-0
  } else {        // subnormal: normalise
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: Inf
  if (abs < 0x38800000u) {               // below the smallest normal half, 2^-14: subnormal or 0
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal, 2^-25: 0
    const std::uint32_t e = abs >> 23, m = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - e;  // 14 + (127 - e) - 1 ... the subnormal's scale
    const std::uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    const std::uint32_t r = q + (rem > halfway || (rem == halfway && (q & 1u)) ? 1u : 0u);
    return static_cast<std::uint16_t>(sign | r);
  }
  // Normal: rebias the exponent, round the 13 dropped bits to nearest even (a carry may step
  // into the exponent, which is right, up to Inf).
  const std::uint32_t r = abs - 0x38000000u;  // exponent 127 -> 15
  const std::uint32_t q = r >> 13, rem = r & 0x1fffu;
  const std::uint32_t out = q + (rem > 0x1000u || (rem == 0x1000u && (q & 1u)) ? 1u : 0u);
  return static_cast<std::uint16_t>(sign | out);
}

// ---------------------------------------------------------------------------------------------
namespace {

bool exists(const std::string& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

/// "X_012.npy" -> 12 with width 3 in `digits`; -1 for another name.
long shard_number(const std::string& name, const std::string& stem, size_t* digits) {
  const std::string head = stem + "_", tail = ".npy";
  if (name.size() < head.size() + 3 + tail.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0) {
    return -1;
  }
  const std::string num = name.substr(head.size(), name.size() - head.size() - tail.size());
  if (num.size() > 9 ||
      !std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  *digits = num.size();
  return std::stol(num);
}

std::string shard_name(const std::string& stem, long k, size_t digits) {
  std::ostringstream os;
  os << stem << "_" << std::setw(static_cast<int>(digits)) << std::setfill('0') << k << ".npy";
  return os.str();
}

/// The numbered files stem_NNN.npy of `dir`, by number; std::invalid_argument for a gap or
/// mixed widths.
std::vector<std::string> numbered_files(const std::string& dir, const std::string& stem) {
  std::vector<std::pair<long, std::string>> found;
  size_t width = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    size_t digits = 0;
    const long k = shard_number(name, stem, &digits);
    if (k < 0) continue;
    if (width != 0 && digits != width) {
      throw_invalid(dir, "the shards' numbers have different widths (" + name + " beside " +
                             std::to_string(width) + "-digit names): one width for all");
    }
    width = digits;
    found.emplace_back(k, name);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (size_t i = 0; i < found.size(); ++i) {
    if (found[i].first != static_cast<long>(i)) {
      throw_invalid(dir, "shard " + shard_name(stem, static_cast<long>(i), width) +
                             " is missing (found " + found[i].second +
                             "): shards are numbered from 0 without a gap");
    }
    paths.push_back(dir + "/" + found[i].second);
  }
  return paths;
}

struct FileStamp {
  std::int64_t size = -1;
  std::int64_t mtime_ns = 0;
};

FileStamp stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {static_cast<std::int64_t>(st.st_size),
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

std::string human_bytes(std::int64_t b) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1);
  if (b >= (std::int64_t{1} << 30)) {
    os << static_cast<double>(b) / (1 << 30) << " GiB";
  } else {
    os << static_cast<double>(b) / (1 << 20) << " MiB";
  }
  return os.str();
}

}  // namespace

std::vector<std::string> npy_shard_paths(const std::string& dir) {
  const std::vector<std::string> shards = numbered_files(dir, "X");
  const bool single = exists(dir + "/X.npy");
  if (single && !shards.empty()) {
    throw_invalid(dir, "holds both X.npy and shards X_000.npy, ...: one or the other");
  }
  if (single) return {dir + "/X.npy"};
  return shards;
}

bool is_sharded_npy_folder(const std::string& dir) {
  size_t digits = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (shard_number(e.path().filename().string(), "X", &digits) == 0) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
struct MappedNpySource::Map {
  const unsigned char* base = nullptr;  ///< the whole file
  std::size_t length = 0;
  std::int64_t data_offset = 0;
};

MappedNpySource::~MappedNpySource() {
  for (auto& m : maps_) {
    if (m.base != nullptr) ::munmap(const_cast<unsigned char*>(m.base), m.length);
  }
}

MappedNpySource::MappedNpySource(const std::string& dir, const MappedNpyOptions& o,
                                 std::vector<std::string>* warnings) {
  const std::vector<std::string> xs = npy_shard_paths(dir);
  if (xs.empty()) {
    throw std::runtime_error("MappedNpySource: no X.npy and no X_000.npy in '" + dir + "'");
  }
  const bool sharded =
      xs.front().size() < 6 || xs.front().compare(xs.front().size() - 6, 6, "/X.npy") != 0;
  const npy_detail::Meta meta = npy_detail::read_meta(dir + "/meta.json");
  if (warnings != nullptr) {
    warnings->insert(warnings->end(), meta.warnings.begin(), meta.warnings.end());
  }
  // X: headers, shapes, dtype, order, sizes.
  std::int64_t c = -1, len = -1, n = 0;
  std::vector<NpyHeader> headers;
  for (const auto& path : xs) {
    NpyHeader h = read_npy_header(path);
    if (h.fortran_order && h.shape.size() > 1) {
      throw_invalid(path,
                    "X is stored in Fortran (column-major) order, which a memory map "
                    "cannot read a window at a time (the rule: refused, not copied, as a "
                    "copy would hold the whole array); save it C-ordered "
                    "(numpy.ascontiguousarray) or read the folder into memory");
    }
    if (h.dtype != "<f4" && h.dtype != "<f2") {
      throw_invalid(path, "X has dtype '" + printable(h.dtype) +
                              "'; a memory map reads little-endian float32 '<f4' or float16 "
                              "'<f2' (read float64 into memory, or export it as float32)");
    }
    if (h.shape.size() != 3) {
      throw_invalid(path, "X must be N x C x L or N x L x C (3 dimensions), got " +
                              std::to_string(h.shape.size()));
    }
    if (dtype_.empty()) {
      dtype_ = h.dtype;
      layout_ = o.layout != NpyLayout::kAuto ? o.layout : meta.layout;
      if (layout_ == NpyLayout::kAuto) {
        layout_ = h.shape[2] < h.shape[1] ? NpyLayout::kChannelsLast : NpyLayout::kChannelsFirst;
      }
    } else if (h.dtype != dtype_) {
      throw_invalid(path, "X has dtype '" + h.dtype + "', " + xs.front() + " has '" + dtype_ +
                              "': every shard has the same dtype");
    }
    const bool ncl = layout_ == NpyLayout::kChannelsFirst;
    const std::int64_t hc = ncl ? h.shape[1] : h.shape[2], hl = ncl ? h.shape[2] : h.shape[1];
    if (c < 0) {
      c = hc;
      len = hl;
      if (c < 1 || len < 1) {
        throw_invalid(path, "X has an empty axis (C = " + std::to_string(c) + ", L = " +
                                std::to_string(len) + ", layout " + to_string(layout_) + ")");
      }
    } else if (hc != c || hl != len) {
      throw_invalid(path, "X's windows are " + std::to_string(hc) + " x " + std::to_string(hl) +
                              ", " + xs.front() + "'s " + std::to_string(c) + " x " +
                              std::to_string(len) + " (C x L): every shard has the same shape");
    }
    require_npy_complete(h, npy_numeric_width(h.dtype), path);
    n += h.shape[0];
    shards_.push_back({path, h.shape[0], h.file_size});
    headers.push_back(std::move(h));
  }
  if (n < 1) throw_invalid(dir, "X holds no window");
  if (n > 2147483647) {
    throw_invalid(dir, "X holds " + std::to_string(n) + " windows, more than 2^31 - 1");
  }
  if (meta.windows >= 0 && meta.windows != n) {
    throw_invalid(dir + "/meta.json", "states windows " + std::to_string(meta.windows) +
                                          ", the X files hold " + std::to_string(n));
  }
  for (const auto& [key, stated, actual] :
       {std::tuple<const char*, std::int64_t, std::int64_t>{"channels", meta.channels, c},
        {"length", meta.length, len}}) {
    if (stated >= 0 && stated != actual) {
      throw_invalid(dir + "/meta.json", std::string("states ") + key + " " +
                                            std::to_string(stated) + ", X has " +
                                            std::to_string(actual));
    }
  }
  starts_.push_back(0);
  for (const auto& s : shards_) starts_.push_back(starts_.back() + s.windows);
  // The per-window files: all shards or none; each shard's count its X's.
  auto companions = [&](const std::vector<std::string>& stems) {
    std::vector<std::string> paths;
    if (!sharded) {
      for (const auto& stem : stems) {
        if (exists(dir + "/" + stem + ".npy"))
          return std::vector<std::string>{dir + "/" + stem + ".npy"};
      }
      return paths;
    }
    for (const auto& stem : stems) {
      paths = numbered_files(dir, stem);
      if (!paths.empty()) break;
    }
    if (!paths.empty() && paths.size() != xs.size()) {
      throw_invalid(dir, std::to_string(paths.size()) + " " + stems.front() + "_k.npy files for " +
                             std::to_string(xs.size()) + " X shards: one per shard, or none");
    }
    return paths;
  };
  auto read_concat = [&](const std::vector<std::string>& paths, const std::string& what) {
    NdArray all;
    for (size_t k = 0; k < paths.size(); ++k) {
      NdArray a = read_npy(paths[k]);
      if (a.shape.empty() || a.shape[0] != shards_[k].windows ||
          (a.shape.size() != 1 && !(a.shape.size() == 2 && a.shape[1] == 1))) {
        throw_invalid(paths[k], what + " must be 1-D with one entry per window of " +
                                    shards_[k].path + " (" + std::to_string(shards_[k].windows) +
                                    "), got shape of " +
                                    std::to_string(a.shape.empty() ? 0 : a.shape[0]) + " entries");
      }
      if (k == 0) {
        all.dtype = a.dtype;
      } else if (a.is_string() != all.is_string()) {
        throw_invalid(paths[k], what + " are " + (a.is_string() ? "strings" : "numbers") + ", " +
                                    paths[0] + "'s are not: one kind for all shards");
      }
      all.data.insert(all.data.end(), a.data.begin(), a.data.end());
      all.strings.insert(all.strings.end(), a.strings.begin(), a.strings.end());
    }
    all.shape = {n};
    return all;
  };
  meta_.channels = static_cast<int>(c);
  meta_.length = static_cast<int>(len);
  meta_.x.resize(0, c * len);
  if (!o.channel_names.empty()) {
    meta_.channel_names = o.channel_names;
  } else if (!meta.channel_names.empty()) {
    meta_.channel_names = meta.channel_names;
  } else {
    for (std::int64_t ch = 0; ch < c; ++ch)
      meta_.channel_names.push_back("ch" + std::to_string(ch));
  }
  if (static_cast<std::int64_t>(meta_.channel_names.size()) != c) {
    throw_invalid(xs.front(), std::to_string(meta_.channel_names.size()) +
                                  " channel names for C = " + std::to_string(c) + " channels");
  }
  meta_.sample_rate_hz = o.sample_rate_hz > 0 ? o.sample_rate_hz : meta.sample_rate_hz;
  meta_.class_names = meta.class_names;
  meta_.subject_names = meta.subject_names;
  meta_.modalities = meta.modalities;
  for (const auto& g : meta_.modalities) {
    for (const int ch : g.channels) {
      if (ch < 0 || ch >= c) {
        throw_invalid(dir + "/meta.json", "modality " + g.name + " names channel " +
                                              std::to_string(ch) + " of " + std::to_string(c));
      }
    }
  }
  std::vector<std::string> used = xs;
  // Labels, subject ids and split entries as ids: one file per shard (or X.npy's one).
  struct Ids {
    bool present = false;
    Eigen::VectorXi ids;
    std::vector<std::string> names;  ///< of string ids
    std::string where;               ///< what messages name
  };
  auto ids_of = [&](const std::vector<std::string>& stems, const std::string& what,
                    const std::vector<std::string>& known, int min_id) {
    Ids r;
    const std::vector<std::string> paths = companions(stems);
    if (paths.empty()) return r;
    r.present = true;
    r.where = sharded ? dir + "/" + stems.front() + "_*.npy" : paths.front();
    r.ids = npy_detail::ids_from_array(read_concat(paths, what), r.where, n, what, known, r.names,
                                       min_id);
    used.insert(used.end(), paths.begin(), paths.end());
    return r;
  };
  const Ids y = ids_of({"Y", "y"}, "labels", meta.class_names, -1);
  meta_.labels = y.present ? y.ids : Eigen::VectorXi::Constant(n, -1);
  if (!y.names.empty()) meta_.class_names = y.names;
  const Ids pid = ids_of({"pid"}, "subject ids", meta.subject_names, -1);
  meta_.subjects = pid.present ? pid.ids : Eigen::VectorXi::Constant(n, -1);
  if (!pid.names.empty()) meta_.subject_names = pid.names;
  const Ids split = ids_of({"split"}, "split entries", npy_detail::part_names(), 0);
  if (split.present) {
    npy_detail::check_parts(split.ids, split.names, split.where);
    meta_.parts = split.ids;
  }
  if (meta.present) used.push_back(dir + "/meta.json");
  meta_.description = meta.description.empty()
                          ? "windows mapped from " + dir + " (" + std::to_string(xs.size()) +
                                " file" + (xs.size() == 1 ? "" : "s") + ", " + to_string(layout_) +
                                ", " + dtype_ + ")"
                          : meta.description;
  if (meta_.sample_rate_hz <= 0) meta_.description += "; sample rate unknown";
  // Stamps and identity: names, sizes and modification times.
  std::uint64_t h = kFnv1a64Basis;
  for (const auto& path : used) {
    const FileStamp st = stamp_of(path);
    stamps_.push_back({path, st.size, st.mtime_ns});
    const std::string name = fs::path(path).filename().string();
    h = fnv1a64(name.data(), name.size(), h);
    h = fnv1a64(&st.size, sizeof st.size, h);
    h = fnv1a64(&st.mtime_ns, sizeof st.mtime_ns, h);
  }
  identity_ = "files:" + hex64(h);
  // The maps.
  for (size_t k = 0; k < xs.size(); ++k) {
    const int fd = ::open(xs[k].c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      throw std::runtime_error("cannot open '" + xs[k] + "': " + std::strerror(errno));
    }
    Map m;
    m.length = static_cast<std::size_t>(headers[k].file_size);
    m.data_offset = headers[k].data_offset;
    void* p = ::mmap(nullptr, m.length, PROT_READ, MAP_SHARED, fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) {
      throw std::runtime_error("cannot map '" + xs[k] + "': " + std::strerror(err));
    }
    m.base = static_cast<const unsigned char*>(p);
    maps_.push_back(m);
  }
}

std::int64_t MappedNpySource::data_bytes() const {
  return static_cast<std::int64_t>(size()) * row_size() * (dtype_ == "<f2" ? 2 : 4);
}

StorageLayout MappedNpySource::storage() const {
  StorageLayout s;
  s.order.resize(static_cast<size_t>(size()));
  std::iota(s.order.begin(), s.order.end(), 0);
  for (const auto& sh : shards_) s.runs.push_back(static_cast<int>(sh.windows));
  return s;
}

std::string MappedNpySource::storage_text() const {
  return std::to_string(shards_.size()) + (shards_.size() == 1 ? " file, " : " shards, ") +
         human_bytes(data_bytes()) + ", " + (dtype_ == "<f2" ? "float16" : "float32") +
         ", memory-mapped";
}

std::pair<size_t, std::int64_t> MappedNpySource::locate(int r, const char* who) const {
  if (r < 0 || r >= size()) {
    throw std::out_of_range(std::string(who) + ": row " + std::to_string(r) + " out of range [0, " +
                            std::to_string(size()) + ")");
  }
  const auto s = static_cast<size_t>(
      std::upper_bound(starts_.begin(), starts_.end(), static_cast<std::int64_t>(r)) -
      starts_.begin() - 1);
  return {s, r - starts_[s]};
}

void MappedNpySource::will_need(const int* rows, int count) const {
  const std::int64_t window = row_size() * (dtype_ == "<f2" ? 2 : 4);
  // (shard, first byte, end byte) of each window in its file, sorted and merged, page-aligned.
  std::vector<std::tuple<size_t, std::int64_t, std::int64_t>> ranges;
  ranges.reserve(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) {
    const auto [s, local] = locate(rows[k], "MappedNpySource::will_need()");
    const std::int64_t at = maps_[s].data_offset + local * window;
    ranges.emplace_back(s, at, at + window);
  }
  std::sort(ranges.begin(), ranges.end());
  static const std::int64_t page = ::sysconf(_SC_PAGESIZE);
  auto advise = [&](size_t s, std::int64_t begin, std::int64_t end) {
    begin -= begin % page;
    // Advisory: a failure (EAGAIN under memory pressure) only forgoes the read-ahead.
    ::madvise(const_cast<unsigned char*>(maps_[s].base) + begin, static_cast<size_t>(end - begin),
              MADV_WILLNEED);
  };
  for (size_t i = 0; i < ranges.size();) {
    const auto [s, begin, end0] = ranges[i];
    std::int64_t end = end0;
    size_t j = i + 1;
    while (j < ranges.size() && std::get<0>(ranges[j]) == s && std::get<1>(ranges[j]) <= end) {
      end = std::max(end, std::get<2>(ranges[j]));
      ++j;
    }
    advise(s, begin, end);
    i = j;
  }
}

void MappedNpySource::read(const int* rows, int count, float* out) const {
  const int c = meta_.channels, len = meta_.length;
  const Eigen::Index row = row_size();
  const bool half = dtype_ == "<f2", ncl = layout_ == NpyLayout::kChannelsFirst;
  const int width = half ? 2 : 4;
  for (int k = 0; k < count; ++k) {
    const int r = rows[k];
    const auto [s, local] = locate(r, "MappedNpySource::read()");
    const unsigned char* src = maps_[s].base + maps_[s].data_offset + local * row * width;
    float* dst = out + k * row;
    if (!half && ncl) {
      std::memcpy(dst, src, static_cast<size_t>(row) * 4);
    } else {
      // Element e of the stored window: NCL e = ch * L + t; NLC e = t * C + ch.
      for (int ch = 0; ch < c; ++ch) {
        for (int t = 0; t < len; ++t) {
          const std::int64_t e =
              ncl ? static_cast<std::int64_t>(ch) * len + t : static_cast<std::int64_t>(t) * c + ch;
          float v;
          if (half) {
            std::uint16_t b;
            std::memcpy(&b, src + e * 2, 2);
            v = half_to_float(b);
          } else {
            std::memcpy(&v, src + e * 4, 4);
          }
          dst[static_cast<std::int64_t>(ch) * len + t] = v;
        }
      }
    }
    for (Eigen::Index e = 0; e < row; ++e) {
      if (!std::isfinite(dst[e])) {
        throw std::runtime_error(
            shards_[s].path + ": window " + std::to_string(local) + " (row " + std::to_string(r) +
            " of the folder) holds a non-finite value at channel " + std::to_string(e / len) +
            ", sample " + std::to_string(e % len) +
            " (a streamed folder must be finite; read it into memory with --drop-nonfinite to "
            "drop such windows)");
      }
    }
  }
  count_read(count, static_cast<std::int64_t>(count) * row * width);
}

void MappedNpySource::check_unchanged() const {
  for (const auto& st : stamps_) {
    const FileStamp now = stamp_of(st.path);
    if (now.size != st.size || now.mtime_ns != st.mtime_ns) {
      throw std::runtime_error(st.path + " changed while it was read (" +
                               (now.size < 0          ? std::string("removed")
                                : now.size != st.size ? "size " + std::to_string(st.size) + " -> " +
                                                            std::to_string(now.size) + " bytes"
                                                      : std::string("modified")) +
                               "): a streamed folder must stay as it was when the run opened it");
    }
  }
}

// ---------------------------------------------------------------------------------------------
void ShardWriteOptions::validate() const {
  if (shard_bytes < 1) {
    throw_invalid("ShardWriteOptions", "shard_bytes", std::to_string(shard_bytes), "must be >= 1");
  }
  if (layout == NpyLayout::kAuto) {
    throw_invalid("ShardWriteOptions", "layout", "auto", "must be NCL or NLC");
  }
  if (chunk_windows < 1) {
    throw_invalid("ShardWriteOptions", "chunk_windows", std::to_string(chunk_windows),
                  "must be >= 1");
  }
}

namespace {

// One window (C*L floats, channel-major as Windows::x) as a shard row's bytes: NCL or NLC,
// float32 or float16.
void encode_row(const float* w, int c, int len, bool ncl, bool float16, char* out) {
  for (int ch = 0; ch < c; ++ch) {
    for (int t = 0; t < len; ++t) {
      const float v = w[static_cast<std::int64_t>(ch) * len + t];
      const std::int64_t e =
          ncl ? static_cast<std::int64_t>(ch) * len + t : static_cast<std::int64_t>(t) * c + ch;
      if (float16) {
        const std::uint16_t h = float_to_half(v);
        std::memcpy(out + e * 2, &h, 2);
      } else {
        std::memcpy(out + e * 4, &v, 4);
      }
    }
  }
}

std::vector<std::int64_t> row_shape_of(int c, int len, NpyLayout layout) {
  return layout == NpyLayout::kChannelsFirst ? std::vector<std::int64_t>{c, len}
                                             : std::vector<std::int64_t>{len, c};
}

// Y_k.npy, pid_k.npy (and split_k.npy when `meta` states parts) of the shards whose window
// counts are `counts`, then meta.json. Each file written is added to `files`; `current` names
// the one being written.
void write_companions(const Windows& meta, const std::string& dir,
                      const std::vector<std::int64_t>& counts, size_t digits,
                      const ShardWriteOptions& o, const nlohmann::json& extra,
                      std::vector<std::string>& files, std::string& current) {
  std::int64_t first = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const std::int64_t last = first + counts[k];
    std::vector<std::int64_t> labels, subjects;
    std::vector<std::string> parts;
    for (std::int64_t r = first; r < last; ++r) {
      const auto i = static_cast<Eigen::Index>(r);
      labels.push_back(meta.labels(i));
      subjects.push_back(meta.subjects(i));
      if (meta.parts.size() != 0) parts.push_back(npy_detail::part_names()[meta.parts(i) == 1]);
    }
    const std::vector<std::int64_t> shape = {counts[k]};
    const long kl = static_cast<long>(k);
    current = dir + "/" + shard_name("Y", kl, digits);
    write_npy_int(current, shape, labels.data());
    files.push_back(current);
    current = dir + "/" + shard_name("pid", kl, digits);
    write_npy_int(current, shape, subjects.data());
    files.push_back(current);
    if (!parts.empty()) {
      current = dir + "/" + shard_name("split", kl, digits);
      write_npy_strings(current, parts);
      files.push_back(current);
    }
    first = last;
  }
  current = dir + "/meta.json";
  npy_detail::write_meta_json(meta, first, dir, o.layout, o.float16 ? "<f2" : "<f4", extra);
}

// Removes the files of `files` (a failed write) and throws naming `current`.
[[noreturn]] void undo_shards(const std::vector<std::string>& files, const std::string& current,
                              const std::exception& e) {
  for (const auto& f : files) {
    std::error_code ec;
    fs::remove(f, ec);
  }
  throw std::runtime_error("write_npy_shards(): writing " + current + " failed, and the " +
                           std::to_string(files.size()) +
                           " files already written were removed: " + e.what());
}

// What an earlier export left in `dir` that `shards` new shards of `digits` digits replace.
void remove_replaced(const std::string& dir, long shards, size_t digits, bool parts) {
  std::error_code ec;
  for (const char* f : {"X.npy", "Y.npy", "y.npy", "pid.npy", "split.npy"})
    fs::remove(dir + "/" + f, ec);
  for (const std::string stem : {"X", "Y", "pid", "split"}) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      size_t d = 0;
      const long k = shard_number(e.path().filename().string(), stem, &d);
      if (k >= shards || (k >= 0 && d != digits) || (stem == "split" && k >= 0 && !parts)) {
        fs::remove(e.path(), ec);
      }
    }
  }
}

}  // namespace

std::vector<NpyShard> write_npy_shards(const WindowSource& source, const std::string& dir,
                                       const ShardWriteOptions& o) {
  o.validate();
  const Windows& meta = source.meta();
  const int n = source.size(), c = meta.channels, len = meta.length;
  if (n < 1) throw_invalid("write_npy_shards()", "the source holds no window");
  const Eigen::Index row = source.row_size();
  const int width = o.float16 ? 2 : 4;
  const std::int64_t per_shard =
      std::max<std::int64_t>(1, o.shard_bytes / (static_cast<std::int64_t>(row) * width));
  const auto shards = static_cast<long>((n + per_shard - 1) / per_shard);
  const size_t digits = std::max<size_t>(3, std::to_string(shards - 1).size());
  const bool ncl = o.layout == NpyLayout::kChannelsFirst;
  std::vector<NpyShard> written;
  std::vector<std::string> files;  // every file this call wrote, removed on failure
  std::string current;
  try {
    std::vector<float> chunk;
    std::vector<char> bytes(static_cast<size_t>(row) * width);
    std::vector<int> rows;
    std::vector<std::int64_t> counts;
    for (long k = 0; k < shards; ++k) {
      const int first = static_cast<int>(k * per_shard);
      const int last = static_cast<int>(std::min<std::int64_t>(n, first + per_shard));
      current = dir + "/" + shard_name("X", k, digits);
      write_npy_byte_rows(current, row_shape_of(c, len, o.layout), o.float16 ? "<f2" : "<f4",
                          [&](const auto& put) {
                            for (int at = first; at < last; at += o.chunk_windows) {
                              const int m = std::min(o.chunk_windows, last - at);
                              rows.resize(static_cast<size_t>(m));
                              std::iota(rows.begin(), rows.end(), at);
                              chunk.resize(static_cast<size_t>(m) * static_cast<size_t>(row));
                              source.read(rows.data(), m, chunk.data());
                              for (int i = 0; i < m; ++i) {
                                encode_row(chunk.data() + static_cast<std::int64_t>(i) * row, c,
                                           len, ncl, o.float16, bytes.data());
                                put(bytes.data());
                              }
                            }
                          });
      files.push_back(current);
      written.push_back({current, last - first, stamp_of(current).size});
      counts.push_back(last - first);
    }
    write_companions(meta, dir, counts, digits, o, nlohmann::json::object(), files, current);
  } catch (const std::exception& e) {
    undo_shards(files, current, e);
  }
  remove_replaced(dir, shards, digits, meta.parts.size() != 0);
  return written;
}

// ---------------------------------------------------------------------------------------------
NpyShardSink::NpyShardSink(std::string dir, int channels, int length, const ShardWriteOptions& o)
    : dir_(std::move(dir)), channels_(channels), length_(length), o_(o) {
  o_.validate();
  if (channels < 1 || length < 1) {
    throw_invalid("NpyShardSink", "windows of " + std::to_string(channels) + " x " +
                                      std::to_string(length) + " (each must be >= 1)");
  }
  row_bytes_ = static_cast<std::int64_t>(channels) * length * (o_.float16 ? 2 : 4);
  per_shard_ = std::max<std::int64_t>(1, o_.shard_bytes / row_bytes_);
  // One shard's bytes, reserved once: the buffer never moves (pages count when written).
  buffer_.reserve(static_cast<size_t>(per_shard_ * row_bytes_));
}

NpyShardSink::~NpyShardSink() {
  if (finished_) return;
  for (const auto& f : files_) {
    std::error_code ec;
    fs::remove(f, ec);
  }
}

void NpyShardSink::put(const float* window) {
  if (finished_) throw std::logic_error("NpyShardSink::put() after finish()");
  const size_t at = buffer_.size();
  buffer_.resize(at + static_cast<size_t>(row_bytes_));
  encode_row(window, channels_, length_, o_.layout == NpyLayout::kChannelsFirst, o_.float16,
             buffer_.data() + at);
  if (static_cast<std::int64_t>(buffer_.size()) >= per_shard_ * row_bytes_) flush();
}

void NpyShardSink::flush() {
  if (buffer_.empty()) return;
  const std::int64_t rows = static_cast<std::int64_t>(buffer_.size()) / row_bytes_;
  const std::string path = dir_ + "/" + shard_name("X", static_cast<long>(counts_.size()), 3);
  try {
    write_npy_byte_rows(path, row_shape_of(channels_, length_, o_.layout),
                        o_.float16 ? "<f2" : "<f4", [&](const auto& put) {
                          for (std::int64_t r = 0; r < rows; ++r)
                            put(buffer_.data() + r * row_bytes_);
                        });
  } catch (const std::exception& e) {
    std::vector<std::string> done;
    done.swap(files_);
    undo_shards(done, path, e);
  }
  files_.push_back(path);
  counts_.push_back(rows);
  buffer_.clear();
}

std::vector<NpyShard> NpyShardSink::finish(const Windows& meta, const nlohmann::json& extra) {
  if (finished_) throw std::logic_error("NpyShardSink::finish() twice");
  flush();
  const std::int64_t n = std::accumulate(counts_.begin(), counts_.end(), std::int64_t{0});
  if (n < 1) throw_invalid("write_npy_shards()", "no window was written");
  if (static_cast<std::int64_t>(meta.labels.size()) != n ||
      static_cast<std::int64_t>(meta.subjects.size()) != n ||
      (meta.parts.size() != 0 && static_cast<std::int64_t>(meta.parts.size()) != n) ||
      meta.channels != channels_ || meta.length != length_) {
    throw_invalid("NpyShardSink::finish()",
                  "the metadata describes " + std::to_string(meta.labels.size()) + " windows of " +
                      std::to_string(meta.channels) + " x " + std::to_string(meta.length) + "; " +
                      std::to_string(n) + " of " + std::to_string(channels_) + " x " +
                      std::to_string(length_) + " were written");
  }
  const auto shards = static_cast<long>(counts_.size());
  const size_t digits = std::max<size_t>(3, std::to_string(shards - 1).size());
  std::string current;
  std::vector<NpyShard> written;
  try {
    // Past 1,000 shards the names written with three digits are widened to one width.
    for (long k = 0; k < shards && digits > 3; ++k) {
      const std::string to = dir_ + "/" + shard_name("X", k, digits);
      current = to;
      fs::rename(files_[static_cast<size_t>(k)], to);
      files_[static_cast<size_t>(k)] = to;
    }
    for (long k = 0; k < shards; ++k) {
      const std::string& f = files_[static_cast<size_t>(k)];
      written.push_back({f, counts_[static_cast<size_t>(k)], stamp_of(f).size});
    }
    write_companions(meta, dir_, counts_, digits, o_, extra, files_, current);
  } catch (const std::exception& e) {
    std::vector<std::string> done;
    done.swap(files_);
    undo_shards(done, current, e);
  }
  finished_ = true;
  remove_replaced(dir_, shards, digits, meta.parts.size() != 0);
  return written;
}

}  // namespace moca::data
