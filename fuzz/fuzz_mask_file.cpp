// libFuzzer target: mask files (`fixed:file=PATH`): Mask::parse and the fixed policy built on it.
#include "fuzz_input.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/mask.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  moca::fuzz::expect_clean([&] {
    const auto m = moca::masking::Mask::parse(text);
    if (moca::masking::Mask::parse(m.to_string()) != m) std::abort();  // round trip
  });
  const std::string path = moca::fuzz::write_input("mask.txt", data, size);
  moca::fuzz::expect_clean([&] {
    moca::masking::make_policy("fixed:file=" + path, moca::masking::make_grid(6, 200, 20));
  });
  return 0;
}
