// libFuzzer target: moca::data::read_hmp_file (one UCI ADL trial) and parse_hmp_file_name.
#include "fuzz_input.hpp"
#include "moca/data/hmp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string path =
      moca::fuzz::write_input("Accelerometer-2011-03-24-10-24-39-climb_stairs-m1.txt", data, size);
  moca::fuzz::expect_clean([&] { moca::data::read_hmp_file(path); });
  std::string activity, volunteer;
  moca::data::parse_hmp_file_name(std::string(reinterpret_cast<const char*>(data), size), activity,
                                  volunteer);
  return 0;
}
