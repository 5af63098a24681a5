#include "moca/common/matrix_io.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/npy_header.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/text_file.hpp"

namespace moca {

std::int64_t NdArray::size() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

namespace {

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '"')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '"')) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells;
  std::string cur;
  for (char ch : line) {
    if (ch == ',' || ch == ';') {
      cells.push_back(trim(cur));
      cur.clear();
    } else {
      cur.push_back(ch);
    }
  }
  cells.push_back(trim(cur));
  return cells;
}

// Parses a whole cell as a number; false if anything but a number is there.
bool parse_number(const std::string& cell, double& v) {
  if (cell.empty()) return false;
  const char* s = cell.c_str();
  char* end = nullptr;
  errno = 0;
  v = std::strtod(s, &end);
  return end == s + cell.size();
}

}  // namespace

namespace {

// The rows x cols matrix of row-major `values`; an error naming `path` when there are no rows.
Eigen::MatrixXd row_major_to_matrix(const std::string& path, const std::vector<double>& values,
                                    long rows, long cols) {
  if (rows == 0) throw_invalid(path, "no data rows (empty file or header only)");
  Eigen::MatrixXd m(rows, cols);
  for (long i = 0; i < rows; ++i)
    for (long j = 0; j < cols; ++j) m(i, j) = values[static_cast<size_t>(i * cols + j)];
  return m;
}

// The reference reader: splits every line into strings (exact error messages).
Eigen::MatrixXd read_csv_matrix_checked(const std::string& path, std::vector<std::string>* header,
                                        std::vector<long>* lines) {
  if (lines) lines->clear();
  TextFileReader in(path);
  std::string line;
  std::vector<double> values;
  long cols = -1, rows = 0;
  bool first = true;
  while (in.next_line(line)) {
    if (trim(line).empty()) continue;
    const auto cells = split_csv(line);
    std::vector<double> row(cells.size());
    bool numeric = true;
    for (size_t j = 0; j < cells.size(); ++j) numeric = numeric && parse_number(cells[j], row[j]);
    if (first) {
      first = false;
      if (!numeric) {
        if (header) *header = cells;
        cols = static_cast<long>(cells.size());
        continue;
      }
    }
    if (cols >= 0 && static_cast<long>(cells.size()) != cols) {
      throw_invalid("", path + ":" + std::to_string(in.line_number()) + ": row has " +
                            std::to_string(cells.size()) + " cells, expected " +
                            std::to_string(cols) + " (rows must not be ragged)");
    }
    cols = static_cast<long>(cells.size());
    for (size_t j = 0; j < cells.size(); ++j) {
      if (!parse_number(cells[j], row[j])) {
        throw_invalid("", path + ":" + std::to_string(in.line_number()) + ": column " +
                              std::to_string(j + 1) + " is not a number ('" + printable(cells[j]) +
                              "')");
      }
      if (!std::isfinite(row[j])) {
        throw_invalid("", path + ":" + std::to_string(in.line_number()) + ": column " +
                              std::to_string(j + 1) + " is " + cells[j] +
                              " (values must be finite)");
      }
    }
    values.insert(values.end(), row.begin(), row.end());
    ++rows;
    if (lines) lines->push_back(in.line_number());
  }
  return row_major_to_matrix(path, values, rows, cols);
}

bool is_pad(char c) {
  return c == ' ' || c == '\t' || c == '"';
}

// Parses one line's cells (separators , ;, cells trimmed of spaces, tabs and quotes) into
// `row` without allocating strings: std::from_chars (correctly rounded, as strtod) with strtod
// as the fallback for what from_chars does not take (a leading '+', hex). False when a cell is
// not a whole finite number.
bool parse_numeric_line(const std::string& line, std::vector<double>& row) {
  row.clear();
  const char* p = line.data();
  const char* const end = p + line.size();
  while (true) {
    const char* q = p;
    while (q < end && *q != ',' && *q != ';') ++q;
    const char* a = p;
    const char* b = q;
    while (a < b && is_pad(*a)) ++a;
    while (b > a && is_pad(b[-1])) --b;
    if (a == b) return false;
    double v = 0.0;
    const auto r = std::from_chars(a, b, v);
    if (r.ec != std::errc() || r.ptr != b) {
      // strtod stops at the pad or separator after b (none of them continues a number).
      char* e = nullptr;
      v = std::strtod(a, &e);
      if (e != b) return false;
    }
    if (!std::isfinite(v)) return false;
    row.push_back(v);
    if (q == end) return true;
    p = q + 1;
  }
}

}  // namespace

Eigen::MatrixXd read_csv_matrix(const std::string& path, std::vector<std::string>* header,
                                std::vector<long>* lines) {
  if (lines) lines->clear();
  // Fast path for well-formed files; anything irregular (a ragged row, a cell that is not a
  // finite number after the first line) is read again by the reference reader, which names it.
  TextFileReader in(path);
  std::string line;
  std::vector<double> values, row;
  long cols = -1, rows = 0;
  bool first = true;
  while (in.next_line(line)) {
    if (trim(line).empty()) continue;
    const bool numeric = parse_numeric_line(line, row);
    if (first) {
      first = false;
      if (!numeric) {
        const auto cells = split_csv(line);
        bool text = false;  // a header has at least one cell that is not a number
        for (const auto& c : cells) {
          double v = 0.0;
          text = text || !parse_number(c, v);
        }
        if (!text) return read_csv_matrix_checked(path, header, lines);  // e.g. an "inf" first row
        if (header) *header = cells;
        cols = static_cast<long>(cells.size());
        continue;
      }
    }
    if (!numeric || (cols >= 0 && static_cast<long>(row.size()) != cols)) {
      return read_csv_matrix_checked(path, header, lines);
    }
    cols = static_cast<long>(row.size());
    values.insert(values.end(), row.begin(), row.end());
    ++rows;
    if (lines) lines->push_back(in.line_number());
  }
  return row_major_to_matrix(path, values, rows, cols);
}

namespace {

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes UTF-8 into code points; false on malformed input.
bool decode_utf8(const std::string& s, std::vector<std::uint32_t>& cps) {
  cps.clear();
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (n < 0 || i + static_cast<size_t>(n) >= s.size() + (n == 0 ? 1 : 0)) return false;
    std::uint32_t cp = n == 0 ? c : (c & (0x3F >> n));
    for (int k = 1; k <= n; ++k) {
      const unsigned char b = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    cps.push_back(cp);
    i += static_cast<size_t>(n) + 1;
  }
  return true;
}

// The elements of a column-major (Fortran-order) array of `shape`, in C order.
template <typename T>
std::vector<T> to_c_order(std::vector<T> vals, const std::vector<std::int64_t>& shape) {
  const size_t r = shape.size();
  std::vector<std::int64_t> idx(r, 0);  // the multi-index of C-order position lin
  std::vector<T> out(vals.size());
  for (size_t lin = 0; lin < vals.size(); ++lin) {
    std::int64_t f = 0, stride = 1;
    for (size_t k = 0; k < r; ++k) {
      f += idx[k] * stride;
      stride *= shape[k];
    }
    out[lin] = std::move(vals[static_cast<size_t>(f)]);
    for (size_t k = r; k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

// Reads the n * width bytes of an array body, after checking that the file holds them (a shape
// from a malformed header must not become a huge allocation or an overflowing product).
std::vector<char> read_payload(std::istream& in, const std::string& path,
                               const std::vector<std::int64_t>& shape, size_t width) {
  const std::streamoff here = in.tellg();
  in.seekg(0, std::ios::end);
  const std::streamoff left = in.tellg() - here;
  in.seekg(here);
  std::int64_t n = 1;
  for (const auto s : shape) {
    if (s != 0 && n > std::numeric_limits<std::int64_t>::max() / s) {
      throw_invalid(path, ".npy shape too large");
    }
    n *= s;
  }
  // Zero-width elements still cost memory once parsed: bound them as if they took a byte.
  if (static_cast<std::uint64_t>(n) >
      static_cast<std::uint64_t>(left) / std::max<size_t>(width, 1)) {
    throw_invalid(path, "truncated data (the shape needs " + std::to_string(n) + " elements of " +
                            std::to_string(width) + " bytes, the file holds " +
                            std::to_string(left) + " bytes)");
  }
  std::vector<char> raw(static_cast<size_t>(n) * width);
  in.read(raw.data(), static_cast<std::streamsize>(raw.size()));
  if (static_cast<size_t>(in.gcount()) != raw.size()) {
    throw_invalid(path, "truncated data (" + std::to_string(in.gcount()) + " of " +
                            std::to_string(raw.size()) + " bytes)");
  }
  return raw;
}

// Reads the body of a '<U<n>' / '|S<n>' array into a.strings (C order).
void read_npy_strings(std::istream& in, const std::string& path, bool fortran, NdArray& a) {
  const std::string& d = a.dtype;
  const bool unicode = d[1] == 'U';
  if (unicode && d[0] == '>') {
    throw_invalid(path, "unsupported dtype '" + printable(d) + "' (big-endian)");
  }
  char* end = nullptr;
  const long chars = std::strtol(d.c_str() + 2, &end, 10);
  if (end != d.c_str() + d.size() || chars < 1 || chars > (1L << 20)) {
    throw_invalid(path, "bad string dtype '" + printable(d) + "'");
  }
  const size_t width = static_cast<size_t>(chars) * (unicode ? 4 : 1);
  const std::vector<char> raw = read_payload(in, path, a.shape, width);
  const std::int64_t n = a.size();
  std::vector<std::string> vals(static_cast<size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const char* p = raw.data() + static_cast<size_t>(i) * width;
    std::string& s = vals[static_cast<size_t>(i)];
    if (unicode) {
      for (long k = 0; k < chars; ++k) {
        const unsigned char* b = reinterpret_cast<const unsigned char*>(p + 4 * k);
        const std::uint32_t cp =
            b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
        if (cp == 0) break;
        if (cp > 0x10FFFF) {
          throw_invalid("",
                        path + ": element " + std::to_string(i) + " holds an invalid code point");
        }
        append_utf8(s, cp);
      }
    } else {
      size_t len = 0;
      while (len < width && p[len] != '\0') ++len;
      s.assign(p, len);
    }
  }
  a.strings =
      fortran && a.shape.size() > 1 ? to_c_order(std::move(vals), a.shape) : std::move(vals);
}

}  // namespace

namespace {

// Reads the magic string, version and header dictionary: a's dtype, fortran_order and shape.
NdArray read_npy_header(std::istream& in, const std::string& path) {
  char magic[8];
  in.read(magic, 8);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    throw_invalid(path, "not a .npy file (bad magic string)");
  }
  const int major = static_cast<unsigned char>(magic[6]);
  std::uint32_t hlen = 0;
  if (major == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    hlen = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
  } else {
    throw_invalid(path, "unsupported .npy version " + std::to_string(major));
  }
  if (!in || hlen > (1u << 24)) throw_invalid(path, "truncated .npy header");
  std::string header(hlen, '\0');
  in.read(&header[0], hlen);
  if (!in) throw_invalid(path, "truncated .npy header");
  auto field = [&](const std::string& key) {
    const auto k = header.find("'" + key + "'");
    if (k == std::string::npos) {
      throw_invalid(path, ".npy header lacks '" + key + "'");
    }
    return header.find(':', k) + 1;
  };
  NdArray a;
  {
    auto p = field("descr");
    const auto q1 = header.find('\'', p), q2 = header.find('\'', q1 + 1);
    a.dtype = header.substr(q1 + 1, q2 - q1 - 1);
  }
  {
    auto p = field("fortran_order");
    const size_t v = header.find_first_not_of(' ', p);
    a.fortran_order = v != std::string::npos && header.compare(v, 4, "True") == 0;
  }
  auto p = field("shape");
  const auto o = header.find('(', p), c = header.find(')', o);
  std::stringstream ss(header.substr(o + 1, c - o - 1));
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    tok = trim(tok);
    if (tok.empty()) continue;
    char* end = nullptr;
    const long long v = std::strtoll(tok.c_str(), &end, 10);
    if (*end != '\0' || v < 0) throw_invalid(path, "bad .npy shape");
    a.shape.push_back(v);
  }
  return a;
}

// The element width of a numeric dtype ('<f4', '|u1', ...); throws for the others.
size_t numeric_width(const std::string& d, const std::string& path) {
  if (d.find('O') != std::string::npos) {
    throw_invalid(path, "unsupported dtype '" + printable(d) +
                            "' (an object array, stored with pickle, which moca does not "
                            "read; save numbers or fixed-width strings)");
  }
  if (d.size() < 3 || d[0] == '>') {
    throw_invalid(path, "unsupported dtype '" + printable(d) +
                            "' (need little-endian f4, f8, i4, i8, u1 or b1)");
  }
  const std::string kind = d.substr(1);
  if (kind == "f4" || kind == "i4") return 4;
  if (kind == "f8" || kind == "i8") return 8;
  if (kind == "u1" || kind == "b1" || kind == "i1") return 1;
  throw_invalid(
      "", path + ": unsupported dtype '" + printable(d) + "' (need f4, f8, i4, i8, u1 or b1)");
}

// The n elements of kind ("f4", "i8", ...) and `width` bytes in raw, as doubles.
std::vector<double> decode_numbers(const std::vector<char>& raw, const std::string& kind,
                                   size_t width, std::int64_t n) {
  std::vector<double> vals(static_cast<size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const char* p = raw.data() + i * static_cast<std::int64_t>(width);
    if (kind == "f4") {
      float v;
      std::memcpy(&v, p, 4);
      vals[i] = v;
    } else if (kind == "f8") {
      double v;
      std::memcpy(&v, p, 8);
      vals[i] = v;
    } else if (kind == "i4") {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      vals[i] = v;
    } else if (kind == "i8") {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      vals[i] = static_cast<double>(v);
    } else if (kind == "i1") {
      vals[i] = static_cast<signed char>(*p);
    } else {
      vals[i] = static_cast<unsigned char>(*p);
    }
  }
  return vals;
}

}  // namespace

NpyHeader read_npy_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  const NdArray a = read_npy_header(in, path);
  NpyHeader h;
  h.shape = a.shape;
  h.dtype = a.dtype;
  h.fortran_order = a.fortran_order;
  h.data_offset = static_cast<std::int64_t>(in.tellg());
  in.seekg(0, std::ios::end);
  h.file_size = static_cast<std::int64_t>(in.tellg());
  return h;
}

std::int64_t NpyHeader::count(const std::string& path) const {
  std::int64_t n = 1;
  for (const auto s : shape) {
    if (s != 0 && n > std::numeric_limits<std::int64_t>::max() / s) {
      throw_invalid(path, ".npy shape too large");
    }
    n *= s;
  }
  return n;
}

int npy_numeric_width(const std::string& d) {
  if (d.size() != 3 || (d[0] != '<' && d[0] != '|')) return 0;
  const std::string kind = d.substr(1);
  if (kind == "f2") return 2;
  if (kind == "f4" || kind == "i4") return 4;
  if (kind == "f8" || kind == "i8") return 8;
  if (kind == "u1" || kind == "b1" || kind == "i1") return 1;
  return 0;
}

void require_npy_complete(const NpyHeader& h, int width, const std::string& path) {
  const std::int64_t n = h.count(path);
  const std::int64_t left = h.file_size - h.data_offset;
  if (width < 1 || n > std::numeric_limits<std::int64_t>::max() / width || left < n * width) {
    throw_invalid(path, "truncated data (the header states " + std::to_string(n) + " elements of " +
                            std::to_string(width) + " bytes, " + std::to_string(n * width) +
                            " bytes; the file holds " +
                            std::to_string(std::max<std::int64_t>(left, 0)) + " after its header)");
  }
}

NdArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  NdArray a = read_npy_header(in, path);
  const std::string& d = a.dtype;
  const bool fortran = a.fortran_order;
  if (d.size() >= 3 && (d[1] == 'U' || d[1] == 'S')) {
    read_npy_strings(in, path, fortran, a);
    return a;
  }
  const size_t width = numeric_width(d, path);
  const std::vector<char> raw = read_payload(in, path, a.shape, width);
  std::vector<double> vals = decode_numbers(raw, d.substr(1), width, a.size());
  a.data = fortran && a.shape.size() > 1 ? to_c_order(std::move(vals), a.shape) : std::move(vals);
  return a;
}

Eigen::MatrixXd read_npy_matrix(const std::string& path) {
  const NdArray a = read_npy(path);
  if (a.is_string()) {
    throw_invalid("",
                  path + ": expected numbers, got strings (dtype '" + printable(a.dtype) + "')");
  }
  if (a.shape.empty() || a.shape.size() > 2) {
    throw_invalid(
        path, "expected a 1-D or 2-D array, got " + std::to_string(a.shape.size()) + " dimensions");
  }
  const std::int64_t rows = a.shape[0], cols = a.shape.size() == 2 ? a.shape[1] : 1;
  if (rows == 0 || cols == 0) throw_invalid(path, "empty array");
  Eigen::MatrixXd m(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = a.data[static_cast<size_t>(i * cols + j)];
      if (!std::isfinite(v)) {
        throw_invalid(path, "value at row " + std::to_string(i) + ", column " + std::to_string(j) +
                                " is not finite");
      }
      m(i, j) = v;
    }
  return m;
}

Eigen::MatrixXd read_matrix(const std::string& path) {
  const auto dot = path.rfind('.');
  if (dot != std::string::npos && path.substr(dot) == ".npy") return read_npy_matrix(path);
  return read_csv_matrix(path);
}

namespace {
/// The .npy (version 1.0) preamble and header of an array, padded with spaces so that the data
/// starts at a multiple of 64 bytes, and at least at `min_total` bytes.
std::string npy_preamble(const std::vector<std::int64_t>& shape, const std::string& descr,
                         size_t min_total = 0) {
  std::string shp = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    shp += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) shp += ",";
    if (i + 1 < shape.size()) shp += " ";
  }
  shp += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shp + ", }";
  size_t total = 10 + header.size() + 1;
  total = std::max(total + (64 - total % 64) % 64, min_total);
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  const std::uint16_t hl = static_cast<std::uint16_t>(header.size());
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(hl & 0xff) +
         static_cast<char>(hl >> 8) + header;
}

void write_npy_raw(const std::string& path, const std::vector<std::int64_t>& shape,
                   const std::string& descr, const char* bytes, size_t nbytes) {
  const std::string preamble = npy_preamble(shape, descr);
  write_output_file(path, [&](std::ostream& o) {
    o.write(preamble.data(), static_cast<std::streamsize>(preamble.size()));
    o.write(bytes, static_cast<std::streamsize>(nbytes));
  });
}
std::int64_t product(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}
}  // namespace

void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, const double* data,
               bool as_float32) {
  const std::int64_t n = product(shape);
  if (as_float32) {
    std::vector<float> f(data, data + n);
    write_npy_raw(path, shape, "<f4", reinterpret_cast<const char*>(f.data()), f.size() * 4);
  } else {
    write_npy_raw(path, shape, "<f8", reinterpret_cast<const char*>(data),
                  static_cast<size_t>(n) * 8);
  }
}

std::int64_t write_npy_byte_rows(
    const std::string& path, const std::vector<std::int64_t>& row_shape, const std::string& dtype,
    const std::function<void(const std::function<void(const char*)>& put)>& producer) {
  const int width = npy_numeric_width(dtype);
  if (width == 0) throw_invalid("write_npy_byte_rows()", "dtype", dtype, "must be numeric");
  std::vector<std::int64_t> shape = row_shape;
  shape.insert(shape.begin(), std::numeric_limits<std::int64_t>::max());  // the widest N
  const size_t reserved = npy_preamble(shape, dtype).size();
  const auto row = static_cast<std::streamsize>(product(row_shape)) * width;
  std::int64_t n = 0;
  // The producer's exceptions pass unchanged (not as a write error).
  write_output_file_passing(path, [&](std::ostream& o) {
    o.write(std::string(reserved, ' ').data(), static_cast<std::streamsize>(reserved));
    producer([&](const char* bytes) {
      o.write(bytes, row);
      ++n;
    });
    shape[0] = n;
    const std::string preamble = npy_preamble(shape, dtype, reserved);
    if (!o.seekp(0))
      throw std::runtime_error("cannot write '" + path + "': the output cannot seek (a pipe?)");
    o.write(preamble.data(), static_cast<std::streamsize>(preamble.size()));
  });
  return n;
}

std::int64_t write_npy_rows(
    const std::string& path, const std::vector<std::int64_t>& row_shape,
    const std::function<void(const std::function<void(const float*)>& put)>& producer) {
  return write_npy_byte_rows(path, row_shape, "<f4", [&](const auto& put_bytes) {
    producer([&](const float* values) { put_bytes(reinterpret_cast<const char*>(values)); });
  });
}

void write_npy_int(const std::string& path, const std::vector<std::int64_t>& shape,
                   const std::int64_t* data) {
  write_npy_raw(path, shape, "<i8", reinterpret_cast<const char*>(data),
                static_cast<size_t>(product(shape)) * 8);
}

void write_npy_strings(const std::string& path, const std::vector<std::string>& values) {
  std::vector<std::vector<std::uint32_t>> cps(values.size());
  size_t width = 1;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!decode_utf8(values[i], cps[i])) {
      throw_invalid("write_npy_strings()", "value " + std::to_string(i) + " is not valid UTF-8");
    }
    width = std::max(width, cps[i].size());
  }
  std::vector<char> bytes(values.size() * width * 4, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t k = 0; k < cps[i].size(); ++k) {
      char* b = bytes.data() + (i * width + k) * 4;
      const std::uint32_t cp = cps[i][k];
      b[0] = static_cast<char>(cp & 0xFF);
      b[1] = static_cast<char>((cp >> 8) & 0xFF);
      b[2] = static_cast<char>((cp >> 16) & 0xFF);
      b[3] = static_cast<char>((cp >> 24) & 0xFF);
    }
  }
  write_npy_raw(path, {static_cast<std::int64_t>(values.size())}, "<U" + std::to_string(width),
                bytes.data(), bytes.size());
}

void write_csv_matrix(const std::string& path, const Eigen::MatrixXd& m,
                      const std::vector<std::string>& header) {
  write_output_file(path, [&](std::ostream& o) {
    o << std::setprecision(std::numeric_limits<double>::max_digits10);
    for (size_t j = 0; j < header.size(); ++j) o << (j ? "," : "") << header[j];
    if (!header.empty()) o << '\n';
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      for (Eigen::Index j = 0; j < m.cols(); ++j) o << (j ? "," : "") << m(i, j);
      o << '\n';
    }
  });
}

}  // namespace moca
