#include "moca/model/kernels/detail/gemm.hpp"

#include <omp.h>

#include <algorithm>
#include <csignal>
#include <memory>
#include <stdexcept>
#include <string>

#if defined(MOCA_MODEL_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.h>
#include <unistd.h>
#endif
#if defined(MOCA_MODEL_HAVE_BLAS) || defined(MOCA_MODEL_DNNL_AT_RUN_TIME)
#include <dlfcn.h>
#endif
#if defined(MOCA_MODEL_HAVE_BLAS)
// CBLAS, not a hand declaration of the Fortran sgemm_ (which takes hidden string lengths).
#include <cblas.h>
#endif

namespace moca::model::detail {

namespace {

#if defined(MOCA_MODEL_HAVE_DNNL)
// The two oneDNN functions moca calls.
struct DnnlApi {
  decltype(&dnnl_sgemm) sgemm = nullptr;
  decltype(&dnnl_version) version = nullptr;
};

// Linked (the LibTorch 1.13 build), or loaded at the first product (MOCA_MODEL_DNNL_AT_RUN_TIME:
// a LibTorch that carries its own oneDNN 3.x, PyTorch's 2.x builds). There libtorch_cpu.so
// exports C++ symbols of its oneDNN's internals, which a libdnnl linked normally binds its own
// references to (dnnl_sgemm then returns dnnl_unimplemented, docs/model.md); RTLD_DEEPBIND makes
// the loaded libdnnl resolve its symbols in itself and its dependencies first, and RTLD_LOCAL
// keeps its symbols out of LibTorch's way. The library of the headers' major version is loaded
// and never closed; when it is missing sgemm_rm() takes the BLAS route.
const DnnlApi& dnnl_api() {
  static const DnnlApi api = [] {
    DnnlApi found;
#if defined(MOCA_MODEL_DNNL_AT_RUN_TIME)
    const std::string soname = "libdnnl.so." + std::to_string(DNNL_VERSION_MAJOR);
    void* const library = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (library != nullptr) {
      found.sgemm = reinterpret_cast<decltype(&dnnl_sgemm)>(dlsym(library, "dnnl_sgemm"));
      found.version = reinterpret_cast<decltype(&dnnl_version)>(dlsym(library, "dnnl_version"));
      if (found.sgemm == nullptr || found.version == nullptr) found = DnnlApi{};
    }
#else
    found.sgemm = &dnnl_sgemm;
    found.version = &dnnl_version;
#endif
    return found;
  }();
  return api;
}

// A product smaller than this (m n k) runs on one thread even outside a parallel region.
constexpr int64_t kThreadedWork = int64_t{1} << 18;
// Block boundaries fall on multiples of this many rows (columns).
constexpr int64_t kBlockAlign = 16;

// oneDNN 2.x's JIT f32 GEMM kernels (AVX2 and AVX-512) point rsp into a heap buffer while they
// run (oneDNN issue #4845, fixed upstream in 2026): a signal handled on that thread's stack writes
// its frame into the heap. Every thread that calls dnnl_sgemm therefore gets an alternate signal
// stack, unless it has one, so handlers installed with SA_ONSTACK (moca's SIGINT/SIGTERM stop,
// CPython's own) run there. Released, and disabled first, when the thread exits.
class AltSignalStack {
 public:
  AltSignalStack() {
    stack_t current{};
    if (sigaltstack(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
    const long min_size = sysconf(_SC_SIGSTKSZ);
    const size_t size =
        std::max<size_t>(size_t{1} << 16, min_size > 0 ? static_cast<size_t>(min_size) : 0);
    memory_ = std::make_unique<char[]>(size);
    stack_t ss{};
    ss.ss_sp = memory_.get();
    ss.ss_size = size;
    if (sigaltstack(&ss, nullptr) != 0) memory_.reset();
  }
  ~AltSignalStack() {
    if (!memory_) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
  }
  AltSignalStack(const AltSignalStack&) = delete;
  AltSignalStack& operator=(const AltSignalStack&) = delete;

 private:
  std::unique_ptr<char[]> memory_;
};

// One single-threaded call: oneDNN (OpenMP runtime) runs on the calling thread inside a parallel
// region; outside one it would use omp_get_max_threads(), which this sets to 1 for the call.
void sgemm_serial(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  thread_local AltSignalStack alt_stack;
  const bool nested = omp_in_parallel() != 0;
  const int saved = nested ? 1 : omp_get_max_threads();
  if (saved != 1) omp_set_num_threads(1);
  const dnnl_status_t status = dnnl_api().sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a,
                                                lda, b, ldb, beta, c, ldc);
  if (saved != 1) omp_set_num_threads(saved);
  if (status != dnnl_success) {
    throw std::runtime_error("sgemm_rm(): oneDNN's dnnl_sgemm failed (status " +
                             std::to_string(static_cast<int>(status)) + ", m " + std::to_string(m) +
                             ", n " + std::to_string(n) + ", k " + std::to_string(k) + ")");
  }
}

// oneDNN, one single-threaded call per thread (see detail/gemm.hpp).
void sgemm_dnnl(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (threads <= 1 || m * n * k < kThreadedWork) {
    sgemm_serial(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  // Cut the longer side of C into one block per thread; each block is its own product.
  const bool by_rows = m >= n;
  const int64_t extent = by_rows ? m : n;
  const int64_t aligned = (extent + kBlockAlign - 1) / kBlockAlign;
  const int parts = static_cast<int>(std::min<int64_t>(threads, aligned));
  std::string error;
#pragma omp parallel num_threads(parts)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t lo = std::min(extent, aligned * t / nt * kBlockAlign);
    const int64_t hi = std::min(extent, aligned * (t + 1) / nt * kBlockAlign);
    if (hi > lo) {
      try {
        if (by_rows) {
          // rows lo..hi of op(A) and of C
          const float* a_block = ta ? a + lo : a + lo * lda;
          sgemm_serial(ta, tb, hi - lo, n, k, alpha, a_block, lda, b, ldb, beta, c + lo * ldc, ldc);
        } else {
          // columns lo..hi of op(B) and of C
          const float* b_block = tb ? b + lo * ldb : b + lo;
          sgemm_serial(ta, tb, m, hi - lo, k, alpha, a, lda, b_block, ldb, beta, c + lo, ldc);
        }
      } catch (const std::exception& e) {
#pragma omp critical(moca_sgemm_error)
        error = e.what();
      }
    }
  }
  if (!error.empty()) throw std::runtime_error(error);
}
#endif

#if defined(MOCA_MODEL_HAVE_BLAS)
// Column-major sgemm on the transposes: Cᵀ = op(B)ᵀ op(A)ᵀ (OpenBLAS threads it itself,
// splitting only m and n).
void sgemm_blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const auto op = [](bool t) { return t ? CblasTrans : CblasNoTrans; };
  cblas_sgemm(CblasColMajor, op(tb), op(ta), static_cast<int>(n), static_cast<int>(m),
              static_cast<int>(k), alpha, b, static_cast<int>(ldb), a, static_cast<int>(lda), beta,
              c, static_cast<int>(ldc));
}
#endif

}  // namespace

void sgemm_rm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
              int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#if defined(MOCA_MODEL_HAVE_DNNL)
  if (dnnl_api().sgemm != nullptr) {
    sgemm_dnnl(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
#endif
#if defined(MOCA_MODEL_HAVE_BLAS)
  sgemm_blas(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
  (void)ta, (void)tb, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta;
  (void)c, (void)ldc;
  throw std::runtime_error("sgemm_rm(): moca was built without oneDNN or BLAS");
#endif
}

bool have_sgemm() {
#ifdef MOCA_MODEL_HAVE_SGEMM
  return true;
#else
  return false;
#endif
}

const char* sgemm_library() {
#if defined(MOCA_MODEL_HAVE_DNNL)
  if (dnnl_api().version != nullptr) {
    static const std::string name = [] {
      const dnnl_version_t* v = dnnl_api().version();
      return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
             std::to_string(v->patch);
    }();
    return name.c_str();
  }
#endif
#if defined(MOCA_MODEL_HAVE_BLAS)
  // The library whose cblas_sgemm the dynamic linker bound: with PyTorch's LibTorch that can be
  // the MKL inside libtorch_cpu.so, which exports the BLAS too (docs/model.md).
  static const std::string name = [] {
    Dl_info info{};
    void* const symbol = reinterpret_cast<void*>(&cblas_sgemm);
    const bool found = dladdr(symbol, &info) != 0 && info.dli_fname != nullptr;
    return std::string("BLAS (") + (found ? info.dli_fname : "unknown library") + ")";
  }();
  return name.c_str();
#else
  return "none";
#endif
}

const char* sgemm_compiled_library() {
#if defined(MOCA_MODEL_HAVE_DNNL)
  static const std::string name = "oneDNN " + std::to_string(DNNL_VERSION_MAJOR) + "." +
                                  std::to_string(DNNL_VERSION_MINOR) + "." +
                                  std::to_string(DNNL_VERSION_PATCH);
  return name.c_str();
#else
  return sgemm_library();
#endif
}

}  // namespace moca::model::detail
