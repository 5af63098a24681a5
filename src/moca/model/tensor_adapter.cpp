#include "moca/model/detail/tensor_adapter.hpp"
#include "moca/common/error_text.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace moca::model::detail {

torch::Tensor windows_tensor(const data::Windows& windows, const std::vector<int>& rows,
                             const torch::Device& device) {
  const int64_t B = static_cast<int64_t>(rows.size()), CL = windows.x.cols();
  auto t = torch::empty({B, CL}, torch::kFloat32);
  float* dst = t.data_ptr<float>();
  for (int64_t b = 0; b < B; ++b) {
    const int r = rows[static_cast<size_t>(b)];
    if (r < 0 || r >= windows.size()) {
      throw_invalid("windows_tensor()", "row " + std::to_string(r) + " out of range [0, " +
                                            std::to_string(windows.size()) + ")");
    }
    std::copy(windows.x.row(r).data(), windows.x.row(r).data() + CL, dst + b * CL);
  }
  return t.view({B, windows.channels, windows.length}).to(device);
}

torch::Tensor batch_tensor(const data::RowMatrixXf& batch, int channels, int length,
                           const torch::Device& device) {
  auto t = torch::from_blob(const_cast<float*>(batch.data()),
                            {static_cast<int64_t>(batch.rows()), channels, length}, torch::kFloat32)
               .clone();
  return t.to(device);
}

Eigen::MatrixXd to_eigen(const torch::Tensor& t) {
  auto c = t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  if (c.dim() != 2) throw_invalid("to_eigen()", "tensor must be 2-D");
  Eigen::MatrixXd m(c.size(0), c.size(1));
  const double* src = c.data_ptr<double>();
  for (int64_t i = 0; i < c.size(0); ++i)
    for (int64_t j = 0; j < c.size(1); ++j) m(i, j) = src[i * c.size(1) + j];
  return m;
}

}  // namespace moca::model::detail
