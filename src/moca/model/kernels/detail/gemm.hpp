#pragma once
/// \file gemm.hpp
/// Internal (src/moca/model and the model tests): the single-precision matrix product behind the
/// CPU kernels (attention, Linear, Linear + GELU), on raw row-major float blocks. No torch here.
///
/// The product is oneDNN's `dnnl_sgemm` when moca was built with oneDNN (Debian: libdnnl-dev; the
/// library LibTorch already loads for its bf16 products), else the BLAS `cblas_sgemm` LibTorch
/// links. oneDNN picks its kernels from the CPU (AVX-512 where present; `ONEDNN_MAX_CPU_ISA` caps
/// it); OpenBLAS's are fixed by its build and `OPENBLAS_CORETYPE`, which some machines pin to AVX2.
///
/// Threads: inside an OpenMP parallel region (the trainer's batch shards) the product runs on
/// the calling thread. Outside one, with more than one OpenMP thread, a large product is cut
/// into row (or column) blocks, one per thread, each a single-threaded call: every element of C
/// is then computed by one single-threaded call whatever the thread count (the blocks never
/// split the reduction over k; oneDNN's own threading may split k). With oneDNN's AVX-512
/// kernels results are then bit-identical across thread counts; its AVX2 kernels pick their
/// blocking and tail panels by the call's extent, so there an element's last bits can change
/// with the block it falls in, i.e. with the thread count (tests/model/test_gemm.cpp,
/// docs/model.md). On one path (one thread count) results repeat bit for bit on any CPU. The BLAS
/// route (the PyTorch 2.x build, docs/model.md) leaves threading to the BLAS: its bits may change
/// with the thread count.
#include <cstdint>

namespace moca::model::detail {

/// Row-major C (m x n, leading dimension ldc) = alpha op(A) op(B) + beta C, where op(X) is X, or
/// Xᵀ when the flag is set; A is m x k (k x m transposed) with leading dimension lda, B is k x n
/// (n x k transposed) with ldb. beta = 0 never reads C. Throws std::runtime_error when the
/// library reports an error.
void sgemm_rm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
              int64_t ldc);

/// Whether sgemm_rm() has a library behind it (oneDNN or BLAS). Without one the CPU kernels are
/// off and the model uses LibTorch's products.
bool have_sgemm();

/// The library behind sgemm_rm(), for benchmark output: "oneDNN x.y.z" (the version of the
/// library loaded at run time, dnnl_version()), "BLAS (file of the cblas_sgemm bound)" or "none".
const char* sgemm_library();

/// The library sgemm_rm() was compiled against: "oneDNN x.y.z" from the headers' version macros,
/// else as sgemm_library() (BLAS has one interface, whichever library provides it). A LibTorch 2.x
/// process holds a second oneDNN (LibTorch's own, 3.x, its symbols hidden); equal strings show that
/// moca's calls reach the library whose headers it was built with (tests/model/test_gemm.cpp,
/// docs/model.md "oneDNN in a PyTorch 2.x build").
const char* sgemm_compiled_library();

}  // namespace moca::model::detail
