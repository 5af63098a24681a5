// libFuzzer target: policy specs (--scheme, --policy, --task): parse_policy_spec, its round trip,
// with_default_ratio and make_policy on a 6 x 10 grid.
#include "fuzz_input.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size > 256) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  moca::fuzz::expect_clean([&] {
    const auto spec = moca::masking::parse_policy_spec(text);
    const std::string canon = moca::masking::format_policy_spec(spec);
    if (moca::masking::format_policy_spec(moca::masking::parse_policy_spec(canon)) != canon) {
      std::abort();  // round trip
    }
  });
  moca::fuzz::expect_clean([&] { moca::masking::with_default_ratio(text, 0.5); });
  if (text.find("file=") != std::string::npos) return 0;  // mask files: fuzz_mask_file
  moca::fuzz::expect_clean(
      [&] { moca::masking::make_policy(text, moca::masking::make_grid(6, 200, 20)); });
  return 0;
}
