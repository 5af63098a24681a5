// libFuzzer target: moca::read_csv_matrix (kcca --u/--m CSV input).
#include "fuzz_input.hpp"
#include "moca/common/matrix_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string path = moca::fuzz::write_input("m.csv", data, size);
  moca::fuzz::expect_clean([&] {
    std::vector<std::string> header;
    moca::read_csv_matrix(path, &header);
  });
  return 0;
}
