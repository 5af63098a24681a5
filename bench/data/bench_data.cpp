// bench_data: wall times of the moca::data pipeline.
//   bench_data [--hapt DIR] [--hmp DIR] [--repeats R]
// HAPT/HMP folders default to $MOCA_HAPT_DIR / $MOCA_HMP_DIR (sections are skipped without them).
// Reports wall time (best, median) and process CPU time (all threads, best) over R repeats of:
// reading + windowing all HAPT recordings (with the class-count table), reading + windowing HMP,
// generating 1000 synthetic windows, and drawing 1000 synthetic transitions (Algorithm 1) from the
// HAPT training split.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "moca/data/augment.hpp"
#include "moca/data/hmp.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/data/windowing.hpp"
#include "run_cli.hpp"

namespace {

// Runs f `repeats` times; prints best and median wall time.
void time_it(const std::string& what, int repeats, const std::function<void()>& f) {
  std::vector<double> s, cpu;
  for (int r = 0; r < repeats; ++r) {
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
  }
  std::sort(s.begin(), s.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf("%-52s wall best %.3f s, median %.3f s; cpu best %.3f s (%d repeats)\n", what.c_str(),
              s.front(), s[s.size() / 2], cpu.front(), repeats);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string hapt = env("MOCA_HAPT_DIR"), hmp = env("MOCA_HMP_DIR");
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--hapt" || a == "--hmp" || a == "--repeats") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--hapt") hapt = v;
      if (a == "--hmp") hmp = v;
      if (a == "--repeats") repeats = std::max(1, std::atoi(v.c_str()));
    } else {
      std::cerr << "bench_data: usage: bench_data [--hapt DIR] [--hmp DIR] [--repeats R]\n";
      return 2;
    }
  }
  return moca::tools::run_program("bench_data", [&] {
    moca::data::Windows hapt_windows;
    if (!hapt.empty()) {
      time_it("HAPT read 61 recordings + window (L=200)", repeats,
              [&] { hapt_windows = moca::data::load_hapt_windows(hapt); });
      std::cout << moca::data::class_count_table(hapt_windows);
    } else {
      std::cout << "HAPT: skipped (no --hapt and no MOCA_HAPT_DIR)\n";
    }
    if (!hmp.empty()) {
      moca::data::Windows w;
      time_it("HMP read 839 files + resample + window (L=250)", repeats,
              [&] { w = moca::data::load_hmp_windows(hmp); });
      std::printf("HMP windows: %d\n", w.size());
    } else {
      std::cout << "HMP: skipped (no --hmp and no MOCA_HMP_DIR)\n";
    }
    time_it("synthetic generator, 1000 x 6 x 200", repeats,
            [&] { moca::data::generate_synthetic(moca::data::SyntheticOptions{}); });
    if (hapt_windows.size() > 0) {
      const auto split = moca::data::random_split(hapt_windows.size());
      const auto train = hapt_windows.subset(split.train);
      time_it("1000 synthetic transitions from the HAPT train split", repeats,
              [&] { moca::data::synthetic_transitions(train, 1000, 1); });
    }
    return 0;
  });
}
