// libFuzzer target: meta.json of an ssl-wearables .npy folder (read_windows_npy), beside a valid
// X.npy (4 windows x 3 channels x 8 samples) and Y.npy.
#include <vector>

#include "fuzz_input.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/data/npy_windows.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  static const bool arrays = [] {
    const std::vector<double> x(4 * 3 * 8, 0.5), y = {0, 1, 0, 1};
    moca::write_npy(moca::fuzz::scratch_dir() + "/X.npy", {4, 3, 8}, x.data());
    moca::write_npy(moca::fuzz::scratch_dir() + "/Y.npy", {4}, y.data());
    return true;
  }();
  (void)arrays;
  moca::fuzz::write_input("meta.json", data, size);
  moca::fuzz::expect_clean([&] { moca::data::read_windows_npy(moca::fuzz::scratch_dir()); });
  return 0;
}
