// libFuzzer target: moca::data::read_ts_cases (a UEA/UCR .ts file's header and cases) and
// read_ts under each unequal-length rule.
#include "fuzz_input.hpp"
#include "moca/data/ts.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string path = moca::fuzz::write_input("fuzz.ts", data, size);
  moca::fuzz::expect_clean([&] { moca::data::read_ts_cases(path); });
  for (auto rule : {moca::data::TsUnequal::kError, moca::data::TsUnequal::kPad,
                    moca::data::TsUnequal::kTruncate}) {
    moca::fuzz::expect_clean([&] { moca::data::read_ts(path, rule, true); });
  }
  return 0;
}
