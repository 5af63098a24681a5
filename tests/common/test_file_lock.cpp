#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include "moca/common/file_lock.hpp"

namespace fs = std::filesystem;

TEST_CASE("a second lock on the same file is refused with the owner's process id") {
  const std::string ckpt =
      (fs::temp_directory_path() / ("moca_test_lock_" + std::to_string(::getpid()) + ".pt"))
          .string();
  const std::string lock_file = moca::lock_path_for_file(ckpt);
  CHECK(lock_file == ckpt + ".lock");
  {
    moca::FileLock first(lock_file, "checkpoint " + ckpt);
    CHECK(fs::exists(lock_file));
    try {
      moca::FileLock second(lock_file, "checkpoint " + ckpt);
      FAIL("second lock granted");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "checkpoint " + ckpt + " is in use by process " +
                                         std::to_string(::getpid()) + " (lock file " + lock_file +
                                         ")");
    }
  }
  CHECK_FALSE(fs::exists(lock_file));  // released and removed
  // A lock file left behind by a dead process holds no lock: no obstacle.
  std::ofstream(lock_file) << "999999\n";
  {
    std::optional<moca::FileLock> again;
    CHECK_NOTHROW(again.emplace(lock_file, "checkpoint " + ckpt));
  }
  CHECK_FALSE(fs::exists(lock_file));
  CHECK(moca::lock_path_for_folder("out") == "out/.moca.lock");
  CHECK_THROWS_AS(moca::FileLock("/nonexistent-dir/x.lock", "x"), std::runtime_error);
}
