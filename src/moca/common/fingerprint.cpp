#include "moca/common/fingerprint.hpp"

#include <fstream>
#include <stdexcept>
#include <vector>

namespace moca {

std::uint64_t fnv1a64(const void* data, std::size_t n, std::uint64_t h) {
  const auto* b = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 1099511628211ULL;  // the FNV 64-bit prime
  }
  return h;
}

std::string hex64(std::uint64_t h) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int k = 15; k >= 0; --k, h >>= 4) out[static_cast<std::size_t>(k)] = digits[h & 15];
  return out;
}

std::string file_fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "' to fingerprint it");
  std::vector<char> block(std::size_t{1} << 20);
  std::uint64_t h = kFnv1a64Basis;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    h = fnv1a64(block.data(), static_cast<std::size_t>(in.gcount()), h);
  }
  if (in.bad()) throw std::runtime_error("cannot read '" + path + "' to fingerprint it");
  return hex64(h);
}

}  // namespace moca
