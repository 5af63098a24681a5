#include "moca/common/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/output_file.hpp"

namespace moca {

namespace {

static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE-754 float and double expected");

// The format's dtypes and their sizes (safetensors' Dtype, 0.8). The 8-bit floats are read as
// bytes only (floats() refuses them).
struct DtypeRow {
  const char* name;
  std::size_t size;
};
constexpr DtypeRow kDtypes[] = {{"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
                                {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
                                {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};

std::string dtype_list() {
  std::string s;
  for (const auto& d : kDtypes) s += (s.empty() ? "" : ", ") + std::string(d.name);
  return s;
}

bool little_endian_host() {
  const std::uint16_t one = 1;
  unsigned char b = 0;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

std::uint64_t read_u64_le(const char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <class T>
void append_converted(const char* p, std::int64_t n, std::vector<float>& out) {
  for (std::int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    out.push_back(static_cast<float>(v));
  }
}

std::string tensor_where(const std::string& where, const std::string& name) {
  return where + ": tensor '" + printable(name, 80) + "'";
}

[[noreturn]] void refuse(const std::string& what) {
  throw std::invalid_argument(what);
}

std::uint64_t offset_value(const nlohmann::json& v, const std::string& at) {
  if (!v.is_number_unsigned()) refuse(at + ": data_offsets must be two non-negative integers");
  return v.get<std::uint64_t>();
}

}  // namespace

std::size_t safetensors_dtype_size(const std::string& dtype) {
  for (const auto& d : kDtypes)
    if (dtype == d.name) return d.size;
  return 0;
}

std::int64_t SafetensorsEntry::numel() const {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

const SafetensorsEntry& SafetensorsFile::at(const std::string& name) const {
  for (const auto& e : tensors)
    if (e.name == name) return e;
  refuse("safetensors: no tensor '" + printable(name, 80) + "'");
}

std::vector<float> SafetensorsFile::floats(const SafetensorsEntry& e) const {
  const char* p = buffer.data() + e.begin;
  const std::int64_t n = e.numel();
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(n));
  const std::string& d = e.dtype;
  if (d == "F32") {
    append_converted<float>(p, n, out);
  } else if (d == "F64") {
    append_converted<double>(p, n, out);
  } else if (d == "F16" || d == "BF16") {
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      if (d == "F16") {
        out.push_back(half_to_float(h));
      } else {
        const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
        float f;
        std::memcpy(&f, &bits, 4);
        out.push_back(f);
      }
    }
  } else if (d == "I64") {
    append_converted<std::int64_t>(p, n, out);
  } else if (d == "U64") {
    append_converted<std::uint64_t>(p, n, out);
  } else if (d == "I32") {
    append_converted<std::int32_t>(p, n, out);
  } else if (d == "U32") {
    append_converted<std::uint32_t>(p, n, out);
  } else if (d == "I16") {
    append_converted<std::int16_t>(p, n, out);
  } else if (d == "U16") {
    append_converted<std::uint16_t>(p, n, out);
  } else if (d == "I8") {
    append_converted<std::int8_t>(p, n, out);
  } else if (d == "U8" || d == "BOOL") {
    append_converted<std::uint8_t>(p, n, out);
  } else {
    refuse("safetensors: tensor '" + printable(e.name, 80) + "' has dtype " + d +
           ", which moca does not convert to float (F32, F16, BF16, F64 and the integer types)");
  }
  return out;
}

SafetensorsFile parse_safetensors(const char* data, std::size_t size, const std::string& where) {
  if (!little_endian_host()) refuse(where + ": safetensors needs a little-endian machine");
  if (size < 8) {
    refuse(where + ": " + std::to_string(size) +
           " bytes, too short for a safetensors file (8 bytes of header size first)");
  }
  const std::uint64_t n = read_u64_le(data);
  if (n > kSafetensorsMaxHeader) {
    refuse(where + ": header size " + std::to_string(n) + " exceeds the bound of " +
           std::to_string(kSafetensorsMaxHeader) + " bytes (not a safetensors file?)");
  }
  if (n > size - 8) {
    refuse(where + ": header size " + std::to_string(n) + " runs past the file's end (" +
           std::to_string(size) + " bytes; truncated?)");
  }
  if (n < 2 || data[8] != '{') {
    refuse(where + ": the header does not open with '{' (not a safetensors file?)");
  }
  // No key twice at any level: nlohmann keeps the last of a repeated key without a word.
  std::vector<std::set<std::string>> open;
  std::string repeated;
  auto callback = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::object_start) {
      open.emplace_back();
    } else if (ev == E::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (ev == E::key && !open.empty() && repeated.empty()) {
      const std::string key = parsed.get<std::string>();
      if (!open.back().insert(key).second) repeated = key;
    }
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(data + 8, data + 8 + n, callback);
  } catch (const nlohmann::json::exception& e) {
    refuse(where + ": the header is not valid JSON (" + printable(e.what(), 160) + ")");
  }
  if (!repeated.empty())
    refuse(where + ": key '" + printable(repeated, 80) + "' twice in the header");
  if (!header.is_object()) refuse(where + ": the header is not a JSON object");

  SafetensorsFile f;
  const std::uint64_t buffer_size = size - 8 - n;
  for (const auto& [name, v] : header.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) refuse(where + ": __metadata__ is not an object");
      for (const auto& [k, text] : v.items()) {
        if (!text.is_string()) {
          refuse(where + ": __metadata__ entry '" + printable(k, 80) +
                 "' is not text (the format maps strings to strings)");
        }
        f.metadata[k] = text.get<std::string>();
      }
      continue;
    }
    const std::string at = tensor_where(where, name);
    if (!v.is_object()) refuse(at + ": the entry is not an object");
    for (const auto& [field, unused] : v.items()) {
      (void)unused;
      if (field != "dtype" && field != "shape" && field != "data_offsets") {
        refuse(at + ": unknown field '" + printable(field, 40) +
               "' (an entry holds dtype, shape and data_offsets)");
      }
    }
    if (!v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets")) {
      refuse(at + ": the entry needs dtype, shape and data_offsets");
    }
    SafetensorsEntry e;
    e.name = name;
    if (!v.at("dtype").is_string()) refuse(at + ": dtype is not text");
    e.dtype = v.at("dtype").get<std::string>();
    const std::size_t item = safetensors_dtype_size(e.dtype);
    if (item == 0) {
      refuse(at + ": unknown dtype '" + printable(e.dtype, 40) + "' (one of " + dtype_list() + ")");
    }
    if (!v.at("shape").is_array()) refuse(at + ": shape is not a list");
    std::uint64_t bytes = item;
    for (const auto& d : v.at("shape")) {
      if (!d.is_number_unsigned()) refuse(at + ": shape holds a value that is not a size (>= 0)");
      const std::uint64_t s = d.get<std::uint64_t>();
      if (s > static_cast<std::uint64_t>(INT64_MAX) || __builtin_mul_overflow(bytes, s, &bytes)) {
        refuse(at + ": shape's byte count overflows");
      }
      e.shape.push_back(static_cast<std::int64_t>(s));
    }
    const auto& off = v.at("data_offsets");
    if (!off.is_array() || off.size() != 2) refuse(at + ": data_offsets is not [begin, end]");
    e.begin = offset_value(off[0], at);
    e.end = offset_value(off[1], at);
    if (e.end < e.begin) {
      refuse(at + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
             "] end before they begin");
    }
    if (e.end > buffer_size) {
      refuse(at + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
             "] point outside the file (its buffer holds " + std::to_string(buffer_size) +
             " bytes)");
    }
    if (e.end - e.begin != bytes) {
      refuse(at + ": " + e.dtype + " of this shape needs " + std::to_string(bytes) +
             " bytes, data_offsets give " + std::to_string(e.end - e.begin));
    }
    f.tensors.push_back(std::move(e));
  }
  std::stable_sort(f.tensors.begin(), f.tensors.end(),
                   [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
                     return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
                   });
  std::uint64_t next = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const auto& e : f.tensors) {
    if (e.begin < next) {
      refuse(tensor_where(where, e.name) + ": data_offsets [" + std::to_string(e.begin) + ", " +
             std::to_string(e.end) + "] overlap tensor '" + printable(prev->name, 80) + "' [" +
             std::to_string(prev->begin) + ", " + std::to_string(prev->end) + "]");
    }
    if (e.begin > next) {
      refuse(tensor_where(where, e.name) + ": data_offsets begin at " + std::to_string(e.begin) +
             ", leaving bytes [" + std::to_string(next) + ", " + std::to_string(e.begin) +
             ") of the buffer to no tensor");
    }
    next = e.end;
    prev = &e;
  }
  if (next != buffer_size) {
    refuse(where + ": the tensors cover " + std::to_string(next) + " of the buffer's " +
           std::to_string(buffer_size) + " bytes (trailing bytes belong to no tensor)");
  }
  f.buffer.assign(data + 8 + n, data + size);
  return f;
}

SafetensorsFile read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read '" + path + "'");
  return parse_safetensors(bytes.data(), bytes.size(), path);
}

bool looks_like_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  const auto size = static_cast<std::uint64_t>(in.tellg());
  if (size < 9) return false;
  in.seekg(0);
  char head[9];
  if (!in.read(head, 9)) return false;
  const std::uint64_t n = read_u64_le(head);
  return n <= kSafetensorsMaxHeader && n <= size - 8 && head[8] == '{';
}

void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  if (!little_endian_host()) refuse("write_safetensors(): needs a little-endian machine");
  std::set<std::string> names;
  std::vector<const SafetensorsTensor*> order;
  for (const auto& t : tensors) {
    const std::string at = "write_safetensors(): tensor '" + printable(t.name, 80) + "'";
    if (t.name.empty() || t.name == "__metadata__") refuse(at + ": a name the format reserves");
    if (!names.insert(t.name).second) refuse(at + ": named twice");
    const std::size_t item = safetensors_dtype_size(t.dtype);
    if (item == 0) refuse(at + ": unknown dtype '" + printable(t.dtype, 40) + "'");
    std::uint64_t want = item;
    for (std::int64_t s : t.shape) {
      if (s < 0) refuse(at + ": a negative size in its shape");
      want *= static_cast<std::uint64_t>(s);
    }
    if (want != t.bytes.size()) {
      refuse(at + ": " + std::to_string(t.bytes.size()) + " bytes, its shape and dtype need " +
             std::to_string(want));
    }
    order.push_back(&t);
  }
  // Larger values first: every tensor then starts at a multiple of its value size.
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return safetensors_dtype_size(a->dtype) > safetensors_dtype_size(b->dtype);
  });
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto* t : order) {
    header[t->name] = {{"dtype", t->dtype},
                       {"shape", t->shape},
                       {"data_offsets", {offset, offset + t->bytes.size()}}};
    offset += t->bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  write_output_file(path, [&](std::ostream& os) {
    char size_bytes[8];
    std::uint64_t n = text.size();
    for (char& b : size_bytes) {
      b = static_cast<char>(n & 0xffu);
      n >>= 8;
    }
    os.write(size_bytes, 8);
    os.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto* t : order)
      os.write(t->bytes.data(), static_cast<std::streamsize>(t->bytes.size()));
  });
}

}  // namespace moca
