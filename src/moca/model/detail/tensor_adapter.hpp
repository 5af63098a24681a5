#pragma once
/// \file tensor_adapter.hpp
/// Internal: the project's only Eigen <-> tensor adapter (windows and batches to tensors,
/// 2-D tensors to Eigen). Include only from torch translation units of src/moca/model (and the
/// model tests).
#include <torch/torch.h>

#include <Eigen/Core>
#include <vector>

#include "moca/data/windows.hpp"

namespace moca::model::detail {

/// Rows `rows` of `windows` as a B x C x L float tensor on `device` (copy).
torch::Tensor windows_tensor(const data::Windows& windows, const std::vector<int>& rows,
                             const torch::Device& device);
/// A B x (C*L) row-major Eigen batch as a B x C x L tensor on `device` (copy).
torch::Tensor batch_tensor(const data::RowMatrixXf& batch, int channels, int length,
                           const torch::Device& device);
/// A 2-D float tensor (any device) as an Eigen double matrix.
Eigen::MatrixXd to_eigen(const torch::Tensor& t);

}  // namespace moca::model::detail
