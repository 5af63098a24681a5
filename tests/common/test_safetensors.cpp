// The safetensors reader and writer (src/moca/common/safetensors.hpp). Known answers come from
// the format's definition: files are assembled byte by byte here, not by the writer under test.
// (The Python suite checks both directions against the `safetensors` package itself.)
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "moca/common/safetensors.hpp"

namespace {

std::string u64le(std::uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// A file from a header text and a buffer, as the format lays them out.
std::string file_of(const std::string& header, const std::string& buffer) {
  return u64le(header.size()) + header + buffer;
}

moca::SafetensorsFile parse(const std::string& bytes) {
  return moca::parse_safetensors(bytes.data(), bytes.size(), "t.safetensors");
}

std::string refusal(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

const std::string kTwo =
    R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
    R"("n":{"dtype":"I64","shape":[],"data_offsets":[16,24]}})";
const std::string kTwoBuffer =
    raw(std::vector<float>{1, 2, 3, 4}) + raw(std::vector<std::int64_t>{7});

}  // namespace

TEST_CASE("safetensors: a file assembled by hand reads as the format defines it") {
  const auto f = parse(file_of(kTwo, kTwoBuffer));
  REQUIRE(f.tensors.size() == 2);
  CHECK(f.metadata.at("format") == "pt");
  const auto& w = f.at("w");
  CHECK(w.dtype == "F32");
  CHECK(w.shape == std::vector<std::int64_t>{2, 2});
  CHECK(f.floats(w) == std::vector<float>{1, 2, 3, 4});
  const auto& n = f.at("n");
  CHECK(n.shape.empty());
  CHECK(n.numel() == 1);
  CHECK(f.floats(n) == std::vector<float>{7});
  CHECK_THROWS_AS(f.at("x"), std::invalid_argument);
}

TEST_CASE("safetensors: F16, BF16 and F64 convert to float exactly where float holds them") {
  // binary16: 0x3e00 = 1.5, 0xc000 = -2, 0x7bff = 65504 (largest), 0x0001 = 2^-24 (smallest
  // subnormal), 0x7c00 = +inf; bfloat16 0x3f80 = 1, 0xc040 = -3.
  const std::string buf = raw(std::vector<std::uint16_t>{0x3e00, 0xc000, 0x7bff, 0x0001, 0x7c00}) +
                          raw(std::vector<std::uint16_t>{0x3f80, 0xc040}) +
                          raw(std::vector<double>{0.1, -1e300});
  const std::string h = R"({"h":{"dtype":"F16","shape":[5],"data_offsets":[0,10]},)"
                        R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[10,14]},)"
                        R"("d":{"dtype":"F64","shape":[2],"data_offsets":[14,30]}})";
  const auto f = parse(file_of(h, buf));
  const auto half = f.floats(f.at("h"));
  CHECK(half[0] == 1.5f);
  CHECK(half[1] == -2.0f);
  CHECK(half[2] == 65504.0f);
  CHECK(half[3] == std::ldexp(1.0f, -24));
  CHECK(std::isinf(half[4]));
  CHECK(f.floats(f.at("b")) == std::vector<float>{1.0f, -3.0f});
  const auto d = f.floats(f.at("d"));
  CHECK(d[0] == 0.1f);
  CHECK(std::isinf(d[1]));
}

TEST_CASE("safetensors: the writer lays out what the format defines") {
  const std::string path = "/tmp/moca_test_safetensors_w.safetensors";
  std::vector<moca::SafetensorsTensor> ts(2);
  ts[0] = {"w", "F32", {2, 2}, {}};
  const std::string wb = raw(std::vector<float>{1, 2, 3, 4});
  ts[0].bytes.assign(wb.begin(), wb.end());
  ts[1] = {"n", "I64", {}, {}};
  const std::string nb = raw(std::vector<std::int64_t>{7});
  ts[1].bytes.assign(nb.begin(), nb.end());
  moca::write_safetensors(path, ts, {{"format", "pt"}});
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The I64 tensor (8-byte values) comes first; the header is padded with spaces to 8k bytes.
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"n":{"data_offsets":[0,8],"dtype":"I64","shape":[]},)"
      R"("w":{"data_offsets":[8,24],"dtype":"F32","shape":[2,2]}})";
  const std::string padded = header + std::string((8 - header.size() % 8) % 8, ' ');
  CHECK(bytes == u64le(padded.size()) + padded + nb + wb);
  CHECK(moca::looks_like_safetensors(path));
  const auto f = moca::read_safetensors(path);
  CHECK(f.floats(f.at("w")) == std::vector<float>{1, 2, 3, 4});

  ts[1].bytes.pop_back();
  CHECK_THROWS_WITH_AS(moca::write_safetensors(path, ts, {}),
                       doctest::Contains("tensor 'n': 7 bytes, its shape and dtype need 8"),
                       std::invalid_argument);
  ts[1] = ts[0];
  CHECK_THROWS_WITH_AS(moca::write_safetensors(path, ts, {}), doctest::Contains("named twice"),
                       std::invalid_argument);
  // the refused writes left the first file as it was
  CHECK(moca::read_safetensors(path).tensors.size() == 2);
  std::remove(path.c_str());
}

TEST_CASE("safetensors: a bad header is refused with a message naming the tensor") {
  auto entry = [](const std::string& name, const std::string& dtype, const std::string& shape,
                  int b, int e) {
    return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
           ",\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) + "]}";
  };
  const std::string buf16 = raw(std::vector<float>{1, 2, 3, 4});
  // offsets outside the buffer
  CHECK(refusal(file_of("{" + entry("w", "F32", "[4]", 0, 20) + "}", buf16))
            .find("tensor 'w': data_offsets [0, 20] point outside the file (its buffer holds 16 "
                  "bytes)") != std::string::npos);
  // two tensors sharing bytes
  CHECK(refusal(file_of("{" + entry("a", "F32", "[3]", 0, 12) + "," +
                            entry("b", "F32", "[2]", 8, 16) + "}",
                        buf16))
            .find("tensor 'b': data_offsets [8, 16] overlap tensor 'a' [0, 12]") !=
        std::string::npos);
  // a hole between tensors
  CHECK(refusal(file_of("{" + entry("a", "F32", "[1]", 0, 4) + "," +
                            entry("b", "F32", "[2]", 8, 16) + "}",
                        buf16))
            .find("tensor 'b': data_offsets begin at 8, leaving bytes [4, 8)") !=
        std::string::npos);
  // trailing bytes
  CHECK(refusal(file_of("{" + entry("a", "F32", "[3]", 0, 12) + "}", buf16))
            .find("cover 12 of the buffer's 16 bytes") != std::string::npos);
  // shape and dtype against the offsets
  CHECK(refusal(file_of("{" + entry("a", "F64", "[4]", 0, 16) + "}", buf16))
            .find("tensor 'a': F64 of this shape needs 32 bytes, data_offsets give 16") !=
        std::string::npos);
  CHECK(refusal(file_of("{" + entry("a", "F31", "[4]", 0, 16) + "}", buf16))
            .find("tensor 'a': unknown dtype 'F31'") != std::string::npos);
  CHECK(refusal(file_of("{" + entry("a", "F32", "[-4]", 0, 16) + "}", buf16))
            .find("tensor 'a': shape holds a value that is not a size") != std::string::npos);
  CHECK(refusal(file_of("{" + entry("a", "F32", "[4]", 16, 0) + "}", buf16))
            .find("end before they begin") != std::string::npos);
  CHECK(refusal(file_of(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16],"x":1}})", buf16))
            .find("tensor 'a': unknown field 'x'") != std::string::npos);
  CHECK(refusal(file_of(R"({"a":{"dtype":"F32","shape":[4]}})", buf16))
            .find("tensor 'a': the entry needs dtype, shape and data_offsets") !=
        std::string::npos);
  // a name twice (JSON parsers keep the last one silently)
  CHECK(refusal(file_of("{" + entry("a", "F32", "[4]", 0, 16) + "," +
                            entry("a", "F32", "[4]", 0, 16) + "}",
                        buf16))
            .find("key 'a' twice") != std::string::npos);
  CHECK(refusal(file_of(R"({"__metadata__":{"rate":50}})", ""))
            .find("__metadata__ entry 'rate' is not text") != std::string::npos);
  // the 8-byte size
  CHECK(refusal("abc").find("3 bytes, too short") != std::string::npos);
  CHECK(refusal(u64le(200'000'000) + "{}").find("exceeds the bound of 100000000") !=
        std::string::npos);
  CHECK(refusal(u64le(64) + "{}").find("runs past the file's end") != std::string::npos);
  CHECK(refusal(u64le(2) + "[]").find("does not open with '{'") != std::string::npos);
  CHECK(refusal(u64le(3) + "{\"a").find("not valid JSON") != std::string::npos);
  // a file holding only metadata (and none) is valid
  CHECK(parse(file_of("{}", "")).tensors.empty());
}

TEST_CASE("safetensors: looks_like_safetensors tells the format from a zip archive") {
  const std::string path = "/tmp/moca_test_safetensors_zip.pth";
  std::ofstream(path, std::ios::binary) << "PK\x03\x04 not a safetensors file at all";
  CHECK_FALSE(moca::looks_like_safetensors(path));
  CHECK_FALSE(moca::looks_like_safetensors("/tmp/no/such/file"));
  std::remove(path.c_str());
}
