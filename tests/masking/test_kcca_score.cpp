// Tests for tools/kcca_score: the scheme-list splitter, run_kcca_score on generated data (JSON
// shape, reproducibility), the built binary's bad-input paths (exit codes and messages, run via
// MOCA_BIN_DIR), and a short run on UCI HAPT when MOCA_HAPT_DIR is set.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "kcca_score.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/masking/feature_map.hpp"

using moca::masking::MaskMode;
using moca::tools::KccaScoreOptions;
using moca::tools::run_kcca_score;

namespace {
struct Run {
  int code = -1;
  std::string err, out;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs the kcca_score binary without MOCA_HAPT_DIR (generator) unless `hapt` is set.
Run run_tool(const std::string& args, bool hapt = false) {
  const char* bin = std::getenv("MOCA_BIN_DIR");
  const std::string dir = bin ? bin : std::string(MOCA_BINARY_DIR) + "/bin";
  const std::string out = std::string(MOCA_BINARY_DIR) + "/kcca_score_test.out";
  const std::string err = std::string(MOCA_BINARY_DIR) + "/kcca_score_test.err";
  const std::string cmd = std::string(hapt ? "" : "env -u MOCA_HAPT_DIR ") + dir + "/kcca_score " +
                          args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

KccaScoreOptions small_options() {
  KccaScoreOptions o;
  o.samples = 120;
  o.scoring.score.draws = 3;
  o.scoring.score.pca = 5;
  o.progress = false;
  return o;
}
}  // namespace

TEST_CASE("run_kcca_score: mask mode auto is shared with a feature map (as the binary's encoder)") {
  auto o = small_options();
  o.data.data = "generator";
  o.samples = 60;
  o.scoring.score.draws = 2;
  o.scoring.score.pca = 3;
  o.scoring.schemes = {"cross"};
  std::ostringstream out, log;
  CHECK(o.scoring.mask_mode == moca::masking::MaskModeChoice::kAuto);
  CHECK(moca::masking::effective_mask_mode(o.scoring) == MaskMode::kPerWindow);
  CHECK(run_kcca_score(o, out, log)["settings"]["mask_mode"] == "per-window");
  o.scoring.feature_map = moca::masking::make_feature_map("patch-mean");
  CHECK(moca::masking::effective_mask_mode(o.scoring) == MaskMode::kShared);
  const auto shared = run_kcca_score(o, out, log);
  CHECK(shared["settings"]["mask_mode"] == "shared");
  moca::masking::set_mask_mode(o.scoring, "shared");  // the same run as an explicit shared
  CHECK(o.scoring.mask_mode == moca::masking::MaskModeChoice::kShared);
  const auto explicit_shared = run_kcca_score(o, out, log);
  CHECK(explicit_shared["schemes"][0]["values"] == shared["schemes"][0]["values"]);
  moca::masking::set_mask_mode(o.scoring,
                               "per-window");  // an explicit choice wins, with other numbers
  const auto per_window = run_kcca_score(o, out, log);
  CHECK(per_window["settings"]["mask_mode"] == "per-window");
  CHECK(per_window["schemes"][0]["values"] != shared["schemes"][0]["values"]);
  CHECK_THROWS_WITH_AS(moca::masking::set_mask_mode(o.scoring, "sometimes"),
                       "mask mode (sometimes) must be one of: auto, per-window, shared",
                       std::invalid_argument);
  moca::masking::set_mask_mode(o.scoring, "auto");
  CHECK(o.scoring.mask_mode == moca::masking::MaskModeChoice::kAuto);
  CHECK(run_kcca_score(o, out, log)["settings"]["mask_mode"] == "shared");
}

TEST_CASE("run_kcca_score on generated data: JSON shape and reproducibility") {
  auto o = small_options();
  const char* env = std::getenv("MOCA_HAPT_DIR");
  const std::string saved = env ? env : "";
  unsetenv("MOCA_HAPT_DIR");  // no --data, no environment: the generator
  o.scoring.schemes = {"cross", "sync:ratio=0.5", "sensor"};
  std::ostringstream out, log;
  const auto doc = run_kcca_score(o, out, log);
  CHECK(log.str().find("built-in synthetic IMU generator") != std::string::npos);
  CHECK(doc["data"]["source"] == "generator");
  CHECK(doc["seed"] == 0);
  REQUIRE(doc["schemes"].size() == 3u);
  CHECK(doc["schemes"][0]["scheme"] == "cross");
  CHECK(doc["schemes"][0]["spec"] == "cross:ratio=0.75,count=keep-floor");
  CHECK(doc["schemes"][1]["spec"] == "sync:ratio=0.5,count=keep-floor");
  CHECK(doc["schemes"][2]["spec"] == "sensor:keep=1");
  for (const auto& s : doc["schemes"]) {
    CHECK(s["draws"] == 3);
    CHECK(s["ci"].size() == 2u);
    CHECK(s["ci"][0].get<double>() <= s["score"].get<double>());
    CHECK(s["score"].get<double>() <= s["ci"][1].get<double>());
    CHECK(s.contains("std_error"));
    CHECK(s.contains("null_level"));
  }
  REQUIRE(doc["comparisons"].size() == 3u);
  CHECK(doc["comparisons"][0]["a"] == "cross:ratio=0.75,count=keep-floor");  // the specs
  CHECK(doc["comparisons"][0]["b"] == "sync:ratio=0.5,count=keep-floor");
  CHECK(doc["schemes"][0].contains("null_values"));
  const double d =
      doc["schemes"][0]["score"].get<double>() - doc["schemes"][1]["score"].get<double>();
  CHECK(std::abs(doc["comparisons"][0]["difference"].get<double>() - d) < 1e-12);
  CHECK(out.str().find("paired differences") != std::string::npos);
  std::ostringstream out2, log2;
  const auto again = run_kcca_score(o, out2, log2);
  auto strip = [](nlohmann::json j) {
    for (auto& s : j) s.erase("seconds");
    return j;
  };
  CHECK(strip(again["schemes"]) == strip(doc["schemes"]));  // same seed, same numbers
  if (!saved.empty()) setenv("MOCA_HAPT_DIR", saved.c_str(), 1);
}

TEST_CASE("kcca_score binary: a good run writes the JSON") {
  const std::string json = std::string(MOCA_BINARY_DIR) + "/kcca_score_test.json";
  std::remove(json.c_str());
  const auto r = run_tool("--samples 60 --draws 2 --pca 4 --json " + json);
  CHECK(r.code == 0);
  CHECK(r.err.find("kcca_score: data: built-in synthetic IMU generator") != std::string::npos);
  CHECK(r.out.find("cross:ratio=0.75") != std::string::npos);
  const auto doc = nlohmann::json::parse(slurp(json));
  CHECK(doc["schemes"].size() == 2u);
  CHECK(doc["settings"]["draws"] == 2);
}

TEST_CASE("kcca_score binary: --json to a full device, a symlink, a FIFO, - and /dev/stdout") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(MOCA_BINARY_DIR) / "kcca_score_outputs";
  fs::remove_all(dir);
  fs::create_directories(dir / "real");
  const std::string quick = "--samples 60 --draws 2 --pca 4 --json ";
  // A full disk: a private twin of /dev/full (never the real one); skipped without CAP_MKNOD.
  const std::string full = (dir / "full").string();
  if (::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) {
    const auto r = run_tool(quick + full);
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find("kcca_score: cannot write '" + full + "'") != std::string::npos);
    CHECK(r.err.find("No space left on device") != std::string::npos);
    CHECK(fs::is_character_file(full));  // the device node is not replaced
  } else {
    MESSAGE("mknod not permitted: full-device case skipped");
  }
  // A symbolic link: written through to its target, the link stays.
  fs::create_symlink("real/target.json", dir / "out.json");
  auto r = run_tool(quick + (dir / "out.json").string());
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(dir / "out.json"));
  CHECK(nlohmann::json::parse(slurp((dir / "real/target.json").string()))["schemes"].size() == 2u);
  // A FIFO a reader waits on: streamed into, not replaced.
  const std::string fifo = (dir / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  r = run_tool(quick + fifo);
  reader.join();
  CHECK(r.code == 0);
  CHECK(nlohmann::json::parse(got)["schemes"].size() == 2u);
  CHECK(fs::is_fifo(fifo));
  // '-' and /dev/stdout: the JSON goes to standard output after the report.
  for (const std::string target : {"-", "/dev/stdout"}) {
    r = run_tool(quick + target);
    CHECK(r.code == 0);
    CHECK(r.out.find("\"schemes\"") != std::string::npos);
    CHECK(r.out.find("cross:ratio=0.75") < r.out.find("\"schemes\""));
  }
  CHECK_FALSE(fs::exists("-"));
}

TEST_CASE("kcca_score binary: bad input exits 2 (usage) or 1 (runtime) with a message") {
  struct Case {
    std::string args, needle;
    int code;
  };
  const std::vector<Case> cases = {
      {"--scheme crosss", "--scheme (crosss) must be one of: cross, random, sync", 2},
      {"--scheme crosss", "(did you mean cross?)", 2},
      {"--scheme cross:ratio=2", "(0, 1)", 2},
      {"--ratio 1.5", "--ratio", 2},
      {"--draws 1", "kcca_score: --draws (1) must be >= 2", 2},
      {"--samples 2", "--samples", 2},
      {"--features encoder", "raw, patch-mean", 2},
      {"--estimator pls", "cca, kcca", 2},
      {"--kernel cosine", "rbf", 2},
      {"--mask-mode each", "per-window, shared", 2},
      {"--patch-length 30", "divide the window length", 2},
      {"--coupling 2", "--coupling", 2},
      {"--gamma 0 --estimator kcca", "kcca_score: --gamma (0) must be > 0", 2},
      {"--no-such-flag", "kcca_score: ", 2},
      {"--draws abc", "kcca_score: ", 2},
      {"--samples 30 --draws 2 --json /nonexistent-dir/x.json", "kcca_score: --json", 2},
  };
  for (const auto& c : cases) {
    const auto r = run_tool(c.args);
    INFO(c.args << " -> " << r.code << ": " << r.err);
    CHECK(r.code == c.code);
    CHECK(r.err.rfind("kcca_score: ", 0) == 0);
    CHECK(r.err.find(c.needle) != std::string::npos);
  }
  const auto r = run_tool("--data /nonexistent-hapt-dir --samples 10 --draws 2");
  INFO(r.err);
  CHECK((r.code == 1 || r.code == 2));
  CHECK(r.err.find("kcca_score: ") != std::string::npos);
  CHECK(r.err.find("nonexistent-hapt-dir") != std::string::npos);
}

TEST_CASE("kcca_score on a .npy folder: bad input exits 2 and writes nothing, then it scores") {
  const std::string dir = std::string(MOCA_BINARY_DIR) + "/kcca_score_npy_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<double> x(12 * 6 * 40);
  for (size_t k = 0; k < x.size(); ++k) x[k] = std::sin(0.37 * static_cast<double>(k));
  x[3 * 240 + 7] = std::nan("");
  moca::write_npy(dir + "/X.npy", {12, 6, 40}, x.data());
  const std::string json = dir + "/score.json";
  auto r = run_tool("--data " + dir + " --draws 2 --pca 3 --json " + json);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("1 non-finite values (NaN/Inf) in 1 of 12 windows; the first is window 3") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(json));
  r = run_tool("--data " + dir + " --drop-nonfinite --sample-rate 10 --draws 2 --pca 3 --json " +
               json);
  CHECK(r.code == 0);
  CHECK(r.err.find("dropped 1 windows") != std::string::npos);
  CHECK(r.err.find("resampled 10 -> 50 Hz") != std::string::npos);
  CHECK(r.err.find("scoring 11 of the data's 11 windows") != std::string::npos);
  const auto doc = nlohmann::json::parse(slurp(json));
  CHECK(doc.at("data").at("scored") == "windows");
  CHECK(doc.at("data").at("modalities") == "all=0-5");
  // One group: the cross-modal score says it needs two; --modalities gives them.
  r = run_tool("--data " + dir +
               " --drop-nonfinite --sample-rate 10 --cross-modal --draws 2 --pca 3");
  CHECK(r.code == 2);
  CHECK(r.err.find("--cross-modal needs >= 2 modality groups; the data has 1 (all=0-5)") !=
        std::string::npos);
  r = run_tool(
      "--data " + dir +
      " --drop-nonfinite --sample-rate 10 --modalities a=0-2,b=3-5 --cross-modal --draws 2 "
      "--pca 3");
  CHECK(r.code == 0);
  CHECK(r.out.find("unmasked channels 0,1,2 vs masked channels 3,4,5") != std::string::npos);
}

TEST_CASE("kcca_score on UCI HAPT transitions (MOCA_HAPT_DIR)") {
  const char* dir = std::getenv("MOCA_HAPT_DIR");
  if (dir == nullptr || *dir == '\0') {
    MESSAGE("MOCA_HAPT_DIR not set: skipping the HAPT run");
    return;
  }
  const auto r = run_tool("--samples 100 --draws 2 --pca 5", true);
  CHECK(r.code == 0);
  CHECK(r.err.find("kcca_score: data: hapt:") != std::string::npos);
  CHECK(r.err.find("(from $MOCA_HAPT_DIR)") != std::string::npos);
  CHECK(r.err.find("synthetic transitions (Algorithm 1)") != std::string::npos);
}

TEST_CASE("kcca_score --features encoder: usage errors need no model") {
  auto r = run_tool("--features encoder --samples 30 --draws 2");
  CHECK(r.code == 2);
  CHECK(r.err.find("--checkpoint") != std::string::npos);
  r = run_tool("--checkpoint model.pt --samples 30 --draws 2");
  CHECK(r.code == 2);
  CHECK(r.err.find("only used with --features encoder") != std::string::npos);
}

#ifdef MOCA_TEST_WITH_TORCH
TEST_CASE("kcca_score --features encoder scores with a pre-trained encoder (shared masks)") {
  const char* bin = std::getenv("MOCA_BIN_DIR");
  const std::string dir = bin ? bin : std::string(MOCA_BINARY_DIR) + "/bin";
  const std::string ckpt = std::string(MOCA_BINARY_DIR) + "/kcca_score_encoder_test.pt";
  std::remove(ckpt.c_str());
  const std::string pretrain =
      "env -u MOCA_HAPT_DIR " + dir +
      "/moca pretrain --preset cpu-small --epochs 1 --warmup-epochs 0 --batch 20 "
      "--synthetic-windows 60 --threads 1 --no-progress --checkpoint " +
      ckpt + " >/dev/null 2>&1";
  REQUIRE(std::system(pretrain.c_str()) == 0);
  const std::string json = std::string(MOCA_BINARY_DIR) + "/kcca_score_encoder_test.json";
  auto r = run_tool("--features encoder --checkpoint " + ckpt +
                    " --samples 40 --draws 2 --pca 5 --json " + json);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(slurp(json));
  CHECK(doc["settings"]["features"] == "encoder");
  CHECK(doc["settings"]["mask_mode"] == "shared");  // the leak-free default for encoder features
  for (const auto& s : doc["schemes"]) {
    CHECK(s["score"].get<double>() > 0.0);
    CHECK(s["score"].get<double>() <= 1.0 + 1e-9);
  }
  // Asking for per-window masks explicitly is allowed, with a warning about the mask leak.
  r = run_tool("--features encoder --checkpoint " + ckpt +
               " --samples 40 --draws 2 --pca 5 --mask-mode per-window");
  CHECK(r.code == 0);
  CHECK(r.err.find("warning: encoder features with per-window masks") != std::string::npos);
  // A file that is not a checkpoint is a runtime error.
  r = run_tool("--features encoder --checkpoint " + json + " --samples 40 --draws 2");
  CHECK(r.code == 1);
  CHECK(r.err.rfind("kcca_score: ", 0) == 0);
}
#endif
