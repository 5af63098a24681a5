// libFuzzer target: moca::read_npy and read_npy_matrix (.npy input of kcca and the data readers).
#include "fuzz_input.hpp"
#include "moca/common/matrix_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string path = moca::fuzz::write_input("a.npy", data, size);
  moca::fuzz::expect_clean([&] { moca::read_npy(path); });
  moca::fuzz::expect_clean([&] { moca::read_npy_matrix(path); });
  return 0;
}
