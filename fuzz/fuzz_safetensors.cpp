// libFuzzer target: moca::parse_safetensors (the header of `moca import`'s safetensors files)
// and the conversion of every tensor it accepts to float.
#include "fuzz_input.hpp"
#include "moca/common/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  moca::fuzz::expect_clean([&] {
    const auto f = moca::parse_safetensors(reinterpret_cast<const char*>(data), size, "fuzz");
    for (const auto& e : f.tensors) {
      try {
        f.floats(e);
      } catch (const std::invalid_argument&) {  // 8-bit float dtypes: documented refusal
      }
    }
  });
  return 0;
}
