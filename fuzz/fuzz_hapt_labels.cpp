// libFuzzer target: moca::data::read_hapt_labels (labels.txt, plain and as labels.txt.gz), and
// apply_hapt_labels onto a small recording.
#include "fuzz_input.hpp"
#include "moca/data/hapt.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const bool gz = size > 0 && (data[0] & 1);  // also exercise the .gz path (magic check, zlib)
  const std::string path = moca::fuzz::write_input(gz ? "labels.txt.gz" : "labels.txt", data, size);
  moca::fuzz::expect_clean([&] {
    const auto segments = moca::data::read_hapt_labels(path);
    moca::data::Recording rec;
    rec.experiment = 1;
    rec.subject = 1;
    rec.signal = moca::data::RowMatrixXf::Zero(6, 500);
    rec.sample_labels = Eigen::VectorXi::Zero(500);
    moca::data::apply_hapt_labels(rec, segments, path);
  });
  return 0;
}
