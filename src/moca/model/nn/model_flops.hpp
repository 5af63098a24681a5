#pragma once
/// \file model_flops.hpp
/// Analytic FLOP counts of the MoCA model (torch-free), for benchmarks and logs.
#include "moca/model/model_options.hpp"

namespace moca::model {

/// Matrix-multiply FLOPs (2 per multiply-add) of one MAE forward pass on `batch` windows with
/// `visible` tokens kept per window: patch embedding of the visible tokens; per encoder block
/// (N = visible + 1 tokens, width D, MLP ratio r) 2BN(3D^2 + D^2 + 2rD^2) for the projections and
/// 4BN^2 D for scores and weighted values; decoder embedding 2B(visible+1)D Dd; per decoder block
/// the same formula with N = T + 1 and Dd; the prediction head 2B(T+1)Dd token_dim. Element-wise
/// work (softmax, LayerNorm, GELU, loss) is not counted.
double mae_forward_flops(const MocaOptions& options, int batch, int visible);

/// FLOPs of one pre-training step, taken as 3 x forward (the backward pass of a matrix product
/// costs two products of the same size).
double mae_step_flops(const MocaOptions& options, int batch, int visible);

/// Forward matrix-multiply FLOPs of the classifier (all T tokens + cls through the encoder, head).
double classifier_forward_flops(const MocaOptions& options, int batch, int classes);

}  // namespace moca::model
