// bench_data: wall time of reading + windowing all UCI HAPT recordings, and of the synthetic
// generator. Usage: bench_data [HAPT_DIR] [repeats]   (HAPT_DIR defaults to $MOCA_HAPT_DIR).
// Prints the class-count table of the windows and the best / median time over the repeats.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "moca/data/windowing.hpp"

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  try {
    std::string dir = argc > 1 ? argv[1] : "";
    if (dir.empty() && std::getenv("MOCA_HAPT_DIR")) dir = std::getenv("MOCA_HAPT_DIR");
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    if (dir.empty()) {
      std::cerr << "bench_data: give the HAPT folder as the first argument or in MOCA_HAPT_DIR\n";
      return 2;
    }
    std::vector<double> read_s, window_s;
    moca::data::Windows w;
    for (int r = 0; r < repeats; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      const auto recs = moca::data::read_hapt_recordings(dir);
      read_s.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      w = moca::data::make_windows(recs, moca::data::WindowingOptions{});
      window_s.push_back(seconds_since(t0));
    }
    std::sort(read_s.begin(), read_s.end());
    std::sort(window_s.begin(), window_s.end());
    std::cout << moca::data::class_count_table(w);
    std::printf("read 61 recordings:   best %.3f s, median %.3f s (%d repeats)\n", read_s.front(),
                read_s[read_s.size() / 2], repeats);
    std::printf("window (L=200):       best %.3f s, median %.3f s\n", window_s.front(),
                window_s[window_s.size() / 2]);
    std::printf("read + window:        best %.3f s\n", read_s.front() + window_s.front());
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_data: " << e.what() << "\n";
    return 1;
  }
}
