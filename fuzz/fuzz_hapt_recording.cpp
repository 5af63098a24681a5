// libFuzzer target: moca::data::read_hapt_recording. The input is split at its first '|' into
// the accelerometer and the gyroscope file (no '|': both files get the whole input).
#include "fuzz_input.hpp"
#include "moca/data/hapt.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  size_t cut = 0;
  while (cut < size && data[cut] != '|') ++cut;
  const bool split = cut < size;
  const std::string acc = moca::fuzz::write_input("acc_exp01_user01.txt", data, cut);
  const std::string gyro =
      split ? moca::fuzz::write_input("gyro_exp01_user01.txt", data + cut + 1, size - cut - 1)
            : moca::fuzz::write_input("gyro_exp01_user01.txt", data, size);
  moca::fuzz::expect_clean([&] { moca::data::read_hapt_recording(acc, gyro, 1, 1); });
  return 0;
}
