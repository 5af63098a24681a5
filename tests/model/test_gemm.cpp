#include <dlfcn.h>
#include <doctest/doctest.h>

#include <omp.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "moca/model/kernels/detail/gemm.hpp"
#include "test_support.hpp"

namespace {

using moca::model::detail::sgemm_rm;

struct Problem {
  bool ta, tb;
  int64_t m, n, k;
  int64_t lda, ldb, ldc;
  std::vector<float> a, b;
};

// Random A and B stored with leading dimensions 3 larger than needed (padding left as NaN, so a
// read outside the matrices shows).
Problem make_problem(bool ta, bool tb, int64_t m, int64_t n, int64_t k, unsigned seed) {
  Problem p{ta, tb, m, n, k, (ta ? m : k) + 3, (tb ? k : n) + 3, n + 3, {}, {}};
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  const int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  p.a.assign(static_cast<size_t>(a_rows * p.lda), nan);
  p.b.assign(static_cast<size_t>(b_rows * p.ldb), nan);
  for (int64_t i = 0; i < a_rows; ++i)
    for (int64_t j = 0; j < a_cols; ++j) p.a[static_cast<size_t>(i * p.lda + j)] = normal(gen);
  for (int64_t i = 0; i < b_rows; ++i)
    for (int64_t j = 0; j < b_cols; ++j) p.b[static_cast<size_t>(i * p.ldb + j)] = normal(gen);
  return p;
}

float a_at(const Problem& p, int64_t i, int64_t l) {  // op(A)[i][l]
  return p.a[static_cast<size_t>(p.ta ? l * p.lda + i : i * p.lda + l)];
}
float b_at(const Problem& p, int64_t l, int64_t j) {  // op(B)[l][j]
  return p.b[static_cast<size_t>(p.tb ? j * p.ldb + l : l * p.ldb + j)];
}

std::vector<float> run(const Problem& p, float alpha, float beta, const std::vector<float>& c0) {
  std::vector<float> c = c0;
  sgemm_rm(p.ta, p.tb, p.m, p.n, p.k, alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, c.data(),
           p.ldc);
  return c;
}

}  // namespace

TEST_CASE("sgemm_rm: all transpositions, padded leading dimensions, beta 0 and 1.5") {
  REQUIRE(moca::model::detail::have_sgemm());
  MESSAGE("sgemm library: " << std::string(moca::model::detail::sgemm_library()));
  // Small (one call) and large (cut into blocks when several threads run), m > n and n > m.
  const int64_t shapes[][3] = {{37, 53, 29}, {301, 203, 150}, {90, 410, 64}};
  unsigned seed = 1;
  for (const auto& s : shapes) {
    for (int t = 0; t < 4; ++t) {
      const Problem p = make_problem(t & 1, t & 2, s[0], s[1], s[2], seed++);
      for (const float beta : {0.f, 1.5f}) {
        // C's padding stays NaN (never written); with beta = 0 its matrix is NaN too (never read).
        std::vector<float> c0(static_cast<size_t>(p.m * p.ldc),
                              std::numeric_limits<float>::quiet_NaN());
        if (beta != 0.f) {
          for (int64_t i = 0; i < p.m; ++i)
            for (int64_t j = 0; j < p.n; ++j)
              c0[static_cast<size_t>(i * p.ldc + j)] = static_cast<float>((i - j) % 7);
        }
        const auto c = run(p, 0.5f, beta, c0);
        double worst = 0.0, scale = 0.0;
        for (int64_t i = 0; i < p.m; ++i) {
          for (int64_t j = 0; j < p.n; ++j) {
            double ref = 0.0;
            for (int64_t l = 0; l < p.k; ++l) ref += double{a_at(p, i, l)} * b_at(p, l, j);
            ref = 0.5 * ref + (beta != 0.f ? beta * c0[static_cast<size_t>(i * p.ldc + j)] : 0.0);
            worst = std::max(worst, std::abs(c[static_cast<size_t>(i * p.ldc + j)] - ref));
            scale = std::max(scale, std::abs(ref));
          }
          for (int64_t j = p.n; j < p.ldc; ++j)
            CHECK(std::isnan(c[static_cast<size_t>(i * p.ldc + j)]));
        }
        CAPTURE(p.m);
        CAPTURE(p.n);
        CAPTURE(p.k);
        CAPTURE(t);
        CAPTURE(beta);
        CHECK(scale > 1.0);
        CHECK(worst / scale < 1e-5);
      }
    }
  }
}

TEST_CASE(
    "sgemm_rm: same bits on a repeat; across 1, 2, 3 threads and inside a parallel region bit for "
    "bit with oneDNN's AVX-512 kernels, to rounding with its AVX2 ones") {
  // The oneDNN route's promise (detail/gemm.hpp). The BLAS route (the LibTorch 2.x build) hands
  // threading to OpenBLAS, whose bits for a row change with the blocking it picks for the thread
  // count and the matrix size (measured: cutting C into row blocks of single-threaded calls did
  // not make them equal either), so there only the values are checked, in the first test case.
  if (std::string(moca::model::detail::sgemm_library()).rfind("oneDNN", 0) != 0) return;
  const bool stable = moca_test::onednn_blocks_bit_stable();
  MESSAGE("oneDNN AVX-512 kernels: " << (stable ? "bit for bit" : "no: to rounding")
                                     << " across thread counts");
  const int saved = omp_get_max_threads();
  unsigned seed = 40;
  // Above the threading threshold: cut by rows (m >= n) and by columns (n > m), odd sizes.
  const int64_t shapes[][3] = {{375, 192, 768}, {150, 513, 97}, {1500, 128, 512}};
  for (const auto& s : shapes) {
    for (int t = 0; t < 4; ++t) {
      const Problem p = make_problem(t & 1, t & 2, s[0], s[1], s[2], seed++);
      const std::vector<float> c0(static_cast<size_t>(p.m * p.ldc), 0.f);
      std::vector<std::vector<float>> results;
      for (const int threads : {1, 2, 3}) {
        omp_set_num_threads(threads);
        results.push_back(run(p, 1.f, 0.f, c0));
      }
      omp_set_num_threads(2);
      std::vector<std::vector<float>> inside(2);
#pragma omp parallel num_threads(2)
      inside[static_cast<size_t>(omp_get_thread_num())] = run(p, 1.f, 0.f, c0);
      results.push_back(inside[0]);
      results.push_back(inside[1]);
      CAPTURE(p.m);
      CAPTURE(p.n);
      CAPTURE(t);
      // One thread again: the same call on the same path gives the same bits on any CPU.
      omp_set_num_threads(1);
      CHECK(run(p, 1.f, 0.f, c0) == results[0]);
      for (size_t r = 1; r < results.size(); ++r) {
        CAPTURE(r);
        if (stable) {
          CHECK(std::memcmp(results[0].data(), results[r].data(),
                            results[0].size() * sizeof(float)) == 0);
          continue;
        }
        // Other blocks, other kernels' rounding: within the float error bound of a k-term dot
        // product, |c - c'| <= 2 k u sum_l |a_il b_lj| (u = 2^-24), each side within k u of it.
        double worst = 0.0;
        for (int64_t i = 0; i < p.m; ++i) {
          for (int64_t j = 0; j < p.n; ++j) {
            double abs_sum = 0.0;
            for (int64_t l = 0; l < p.k; ++l)
              abs_sum += std::abs(double{a_at(p, i, l)} * b_at(p, l, j));
            const size_t at = static_cast<size_t>(i * p.ldc + j);
            const double bound = 2.0 * static_cast<double>(p.k) * 0x1p-24 * abs_sum;
            worst = std::max(worst, std::abs(double{results[r][at]} - results[0][at]) / bound);
          }
        }
        CHECK(worst <= 1.0);
      }
    }
  }
  omp_set_num_threads(saved);
}

TEST_CASE("sgemm_rm: the oneDNN called is the one compiled against") {
  // With LibTorch 2.x two oneDNNs share the process (Debian's libdnnl for moca, LibTorch's
  // bundled 3.x with hidden symbols); a call bound to the other one would report its version.
  const std::string loaded = moca::model::detail::sgemm_library();
  const std::string compiled = moca::model::detail::sgemm_compiled_library();
  MESSAGE("sgemm library loaded: " << loaded << ", compiled against: " << compiled);
  // Loaded at run time (a PyTorch 2.x build) and absent from this machine (programs carried to
  // a GPU machine without Debian's libdnnl): the BLAS route, as designed.
  if (compiled.rfind("oneDNN ", 0) == 0 && loaded.rfind("BLAS", 0) == 0) {
    const std::string soname = "libdnnl.so." + compiled.substr(7, compiled.find('.') - 7);
    void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      MESSAGE(soname << " is not on this machine: the BLAS route is the right one");
      return;
    }
    dlclose(handle);
  }
  CHECK(loaded == compiled);
}

TEST_CASE("sgemm_rm: a library error is an exception, not a wrong result") {
  if (std::string(moca::model::detail::sgemm_library()).rfind("oneDNN", 0) != 0) return;
  std::vector<float> a(16, 1.f), b(16, 1.f), c(16, 0.f);
  // lda 2 < k 4 for a row-major A: invalid.
  CHECK_THROWS_AS(sgemm_rm(false, false, 4, 4, 4, 1.f, a.data(), 2, b.data(), 4, 0.f, c.data(), 4),
                  std::runtime_error);
}

namespace {
std::atomic<long> g_signals{0};
extern "C" void count_signal(int) {
  g_signals.fetch_add(1);
}
}  // namespace

TEST_CASE("sgemm_rm: signals handled during the products corrupt nothing") {
  // oneDNN 2.x's JIT GEMM points rsp into the heap while it runs (oneDNN issue #4845): a signal
  // handled on the computing thread's stack wrote its frame into the heap (the SIGTERM stop of
  // `moca launch` aborted a rank with "corrupted size vs. prev_size"). sgemm_rm gives its
  // threads an alternate signal stack, which SA_ONSTACK handlers (moca's, CPython's) use.
  struct sigaction sa {
  }, old{};
  sa.sa_handler = count_signal;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  REQUIRE(sigaction(SIGUSR1, &sa, &old) == 0);
  // Shapes whose products took the kernels' workspace path and corrupted the heap without the
  // alternate stack (a transposed A as in the weight gradients, and two plain ones).
  const Problem problems[] = {make_problem(true, false, 64, 128, 1500, 77),
                              make_problem(false, true, 300, 96, 128, 78),
                              make_problem(false, false, 300, 128, 96, 79)};
  long mismatches = 0;
  for (const Problem& p : problems) {
    const std::vector<float> c0(static_cast<size_t>(p.m * p.ldc), 0.f);
    // The products run on a fresh thread: it has no alternate stack of its own (doctest gives
    // the main thread one), as a trainer's OpenMP threads.
    std::vector<float> reference;
    std::atomic<bool> started{false}, done{false};
    std::thread worker([&] {
      omp_set_num_threads(1);
      reference = run(p, 1.f, 0.f, c0);
      started.store(true);
      for (int i = 0; i < 1000; ++i) {
        if (run(p, 1.f, 0.f, c0) != reference) ++mismatches;
      }
      done.store(true);
    });
    const pthread_t target = worker.native_handle();
    while (!started.load()) std::this_thread::yield();
    while (!done.load()) {
      pthread_kill(target, SIGUSR1);
      std::this_thread::sleep_for(std::chrono::microseconds(30));
    }
    worker.join();
  }
  sigaction(SIGUSR1, &old, nullptr);
  MESSAGE("signals handled during 3 x 1000 products: " << g_signals.load());
  CHECK(g_signals.load() > 100);
  CHECK(mismatches == 0);
  // The heap is intact: a fresh allocation pattern is freed without glibc's corruption abort.
  for (int i = 0; i < 200; ++i) {
    std::vector<float> v(static_cast<size_t>(1000 + 37 * i), 1.f);
    CHECK(v.back() == 1.f);
  }
}
