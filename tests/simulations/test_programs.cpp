// The study programs as processes (exit codes, JSON files) and paper/reproduce --smoke with a
// well-formedness check of everything it writes. The programs are found in MOCA_BIN_DIR.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "paper_figures.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string bin_dir() {
  const char* bin = std::getenv("MOCA_BIN_DIR");
  return bin ? bin : std::string(MOCA_BINARY_DIR) + "/bin";
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Run {
  int code = -1;
  std::string err;
};

Run run(const std::string& command) {
  const std::string err = std::string(MOCA_BINARY_DIR) + "/sim_programs_test.err";
  const int status = std::system((command + " >/dev/null 2>" + err).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(err)};
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  REQUIRE_MESSAGE(in.good(), "missing " << p);
  return json::parse(in);
}

bool is_png(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char sig[8] = {};
  in.read(sig, 8);
  return in.gcount() == 8 && std::string(sig, 8) == std::string("\x89PNG\r\n\x1a\n", 8);
}

/// No null anywhere (nlohmann writes NaN and infinities as null): "never a silent NaN".
void check_no_null(const json& j, const std::string& where) {
  if (j.is_null()) {
    FAIL_CHECK("null (NaN?) at " << where);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      check_no_null(it.value(), where + "/" + it.key());
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) check_no_null(j[i], where + "/" + std::to_string(i));
  }
}

void require_keys(const json& j, std::initializer_list<const char*> keys, const std::string& f) {
  for (const char* k : keys) CHECK_MESSAGE(j.contains(k), f << " lacks '" << k << "'");
}

}  // namespace

TEST_CASE("study programs: usage errors exit 2 with 'prog: message'") {
  const std::string b = bin_dir();
  if (!fs::exists(b + "/simulation_study")) {
    MESSAGE("simulation_study not built; skipping");
    return;
  }
  auto r = run(b + "/simulation_study --draws 1");
  CHECK(r.code == 2);
  CHECK(r.err.rfind("simulation_study: ", 0) == 0);
  r = run(b + "/simulation_study --no-such-flag");
  CHECK(r.code == 2);
  r = run(b + "/simulation_study --features encoder");
  CHECK(r.code == 2);
  CHECK(r.err.find("checkpoint") != std::string::npos);
  r = run(b + "/coupling_sweep --couplings 0.5");
  CHECK(r.code == 2);
  CHECK(r.err.rfind("coupling_sweep: ", 0) == 0);
  r = run(b + "/paper_figures --results ''");
  CHECK(r.code == 2);
  // An output path that cannot be written is a usage error, found before any work (exit 2).
  r = run("env -u MOCA_HAPT_DIR " + b +
          "/coupling_sweep --couplings 0 1 --samples 20 --pca 2 --draws 2 --features raw "
          "--json /nonexistent-dir/x.json");
  CHECK(r.code == 2);
  CHECK(r.err.rfind("coupling_sweep: --json", 0) == 0);
  if (fs::exists(b + "/bound_check")) {
    r = run(b + "/bound_check --checkpoint /nonexistent.pt");
    CHECK(r.code == 1);
    CHECK(r.err.rfind("bound_check: ", 0) == 0);
    // the held-out part of the study's split must not be its training part
    r = run(b + "/policy_study --data generator --out " + MOCA_BINARY_DIR +
            "/policy_study_split_all --split all");
    CHECK(r.code == 2);
    CHECK(r.err.find("policy_study: --split (all) must be random or subject-kfold") !=
          std::string::npos);
    r = run(b + "/paper_experiments --only table2");
    CHECK(r.code == 2);
  }
}

// The options on schemas (each program's struct: schema + check_ranges): a bad value of one of
// its own numbers is a usage error naming the program's flag; a good one passes the check.
TEST_CASE("study programs: a schema row's range names the flag; a value inside it is accepted") {
  const std::string b = bin_dir(), gen = "env -u MOCA_HAPT_DIR ";
  if (!fs::exists(b + "/simulation_study")) {
    MESSAGE("simulation_study not built; skipping");
    return;
  }
  // simulation_study --patch-length (SimulationStudyOptions::patch_length, >= 1)
  const std::string sim =
      gen + b + "/simulation_study --samples 20 --pca 2 --draws 2 --features raw --patch-length ";
  auto r = run(sim + "0");
  CHECK(r.code == 2);
  CHECK(r.err.find("simulation_study: --patch-length (0) must be >= 1") != std::string::npos);
  r = run(sim + "10");
  CHECK(r.code == 0);
  CHECK(r.err.find("--patch-length") == std::string::npos);

  // coupling_sweep --samples (CouplingSweepOptions::samples, >= 3)
  const std::string sweep =
      gen + b + "/coupling_sweep --couplings 0 1 --pca 2 --draws 2 --features raw --samples ";
  r = run(sweep + "2");
  CHECK(r.code == 2);
  CHECK(r.err.find("coupling_sweep: --samples (2) must be >= 3") != std::string::npos);
  r = run(sweep + "3");
  CHECK(r.code == 0);
  CHECK(r.err.find("--samples") == std::string::npos);

  // transfer_study --jobs (TransferStudyOptions::jobs, >= 1): checked before the checkpoints,
  // so with a good value the missing checkpoint is what is refused
  const std::string out = std::string(MOCA_BINARY_DIR) + "/transfer_study_jobs";
  const std::string ts = b + "/transfer_study --out " + out +
                         " --model a=/nonexistent.pt --data w=npy:/nonexistent --jobs ";
  r = run(ts + "0");
  CHECK(r.code == 2);
  CHECK(r.err.find("transfer_study: --jobs (0) must be >= 1") != std::string::npos);
  r = run(ts + "2");
  CHECK(r.code == 2);
  CHECK(r.err.find("--jobs") == std::string::npos);
  CHECK(r.err.find("no such checkpoint") != std::string::npos);
  CHECK(!fs::exists(out));

  // bound_check --c (BoundCheckOptions::c, > 0): checked before the checkpoint is read
  if (fs::exists(b + "/bound_check")) {
    const std::string bc = gen + b + "/bound_check --checkpoint /nonexistent.pt --c ";
    r = run(bc + "0");
    CHECK(r.code == 2);
    CHECK(r.err.find("bound_check: --c (0) must be > 0") != std::string::npos);
    r = run(bc + "0.5");
    CHECK(r.code == 1);  // the missing checkpoint, not the value
    CHECK(r.err.find("--c (") == std::string::npos);
  }
}

// The options on schemas (PolicyStudyOptions, PaperExperimentsOptions, PaperFiguresOptions): a bad
// value is a usage error naming the program's flag, and a good value of the same option passes
// (the run then stops at a later, different error, or completes).
TEST_CASE("study programs: schema rows' checks name the program's flag") {
  const std::string b = bin_dir();
  const std::string dir = std::string(MOCA_BINARY_DIR);
  // policy_study --pca: >= 1; --report on a folder without a ledger stops after validation
  const std::string study = b + "/policy_study --out " + dir + "/policy_study_schema --report";
  if (fs::exists(b + "/policy_study")) {
    auto r = run(study + " --pca 0");
    CHECK(r.code == 2);
    CHECK(r.err == "policy_study: --pca (0) must be >= 1\n");
    r = run(study + " --pca 1");
    CHECK(r.code == 1);
    CHECK(r.err.find("holds no ledger") != std::string::npos);
  }
  // paper_experiments --mice-draws: >= 1 (it named no value before); the control stops at a
  // pre-training row checked after the study's rows
  if (fs::exists(b + "/paper_experiments")) {
    auto r = run(b + "/paper_experiments --mice-draws 0");
    CHECK(r.code == 2);
    CHECK(r.err == "paper_experiments: --mice-draws (0) must be >= 1\n");
    r = run(b + "/paper_experiments --mice-draws 3 --epochs 0");
    CHECK(r.code == 2);
    CHECK(r.err == "paper_experiments: --epochs (0) must be >= 1\n");
  }
  // paper_figures has no number: --results must not be empty (named by its flag now)
  const fs::path results = fs::path(dir) / "paper_figures_schema";
  fs::remove_all(results);
  fs::create_directories(results);
  auto r = run(b + "/paper_figures --no-png --results ''");
  CHECK(r.code == 2);
  CHECK(r.err == "paper_figures: --results is empty\n");
  r = run(b + "/paper_figures --no-png --results " + results.string());
  CHECK(r.code == 0);
  fs::remove_all(results);
}

TEST_CASE("paper_figures on hand-made results: PNGs, data files, malformed input") {
  const fs::path dir = fs::path(MOCA_BINARY_DIR) / "paper_figures_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "coupling_sweep.json") << R"({"points": [
    {"coupling": 0, "features": "raw", "part": "all",
     "comparison": {"difference": -0.01, "ci": [-0.02, 0.0]}},
    {"coupling": 1, "features": "raw", "part": "all",
     "comparison": {"difference": 0.05, "ci": [0.04, 0.06]}}]})";
  moca::sim::PaperFiguresOptions o;
  o.results = dir.string();
  std::ostringstream log;
  const bool have_gnuplot = std::system("command -v gnuplot >/dev/null 2>&1") == 0;
  o.png = have_gnuplot;
  const json r = moca::sim::run_paper_figures(o, log);
  CHECK(fs::exists(dir / "figures" / "coupling_sweep.dat"));
  CHECK(fs::exists(dir / "figures" / "coupling_sweep.gp"));
  CHECK(slurp((dir / "figures" / "coupling_sweep.dat").string()).find("0.05") != std::string::npos);
  CHECK(r["skipped"].size() == 8);  // every input but coupling_sweep.json is absent
  // example_window needs no input: 200 samples of the 6 generator channels.
  const std::string ex = slurp((dir / "figures" / "example_window.dat").string());
  CHECK(std::count(ex.begin(), ex.end(), '\n') == 201);
  if (have_gnuplot) {
    REQUIRE(r["figures"].size() == 2);  // coupling_sweep, example_window
    CHECK(is_png(dir / r["figures"][0].get<std::string>()));
    CHECK(is_png(dir / r["figures"][1].get<std::string>()));
  }
  std::ofstream(dir / "table1.json") << "{\"rows\": [{\"model\": \"x\", \"finetune\": {}}]}";
  CHECK_THROWS_AS(moca::sim::run_paper_figures(o, log), std::runtime_error);
  std::ofstream(dir / "table1.json") << "{not json";
  CHECK_THROWS_AS(moca::sim::run_paper_figures(o, log), std::runtime_error);
  fs::remove_all(dir);
}

// Runs paper/reproduce into a fresh folder and checks that what it writes is well-formed (keys,
// no NaN, PNG signatures) — not the values. The mode is --smoke unless MOCA_REPRODUCE_MODE says
// `quick` (.ci/run does that). Skipped in the regular suite run (it takes a minute or more);
// CTest runs it as the separate test `paper_reproduce_smoke` (--no-skip).
TEST_CASE("paper/reproduce writes well-formed results" * doctest::skip()) {
  const std::string b = bin_dir();
  const char* mode_env = std::getenv("MOCA_REPRODUCE_MODE");
  const std::string mode = mode_env && *mode_env ? mode_env : "smoke";
  REQUIRE_MESSAGE((mode == "smoke" || mode == "quick"),
                  "MOCA_REPRODUCE_MODE (" << mode << ") must be smoke or quick");
  const fs::path out = fs::path(MOCA_BINARY_DIR) / ("reproduce_" + mode);
  fs::remove_all(out);
  const std::string cmd = std::string(MOCA_SOURCE_DIR) + "/paper/reproduce --" + mode + " --bin " +
                          b + " --out " + out.string() + " --threads 1";
  const Run r = run(cmd);
  REQUIRE_MESSAGE(r.code == 0, "reproduce failed: " << r.err);

  const json m = read_json(out / "manifest.json");
  require_keys(m, {"mode", "data", "seconds", "steps", "skipped"}, "manifest.json");
  CHECK(m["mode"] == mode);
  const bool torch = fs::exists(b + "/paper_experiments");

  const json sim = read_json(out / "simulation_study.json");
  require_keys(sim,
               {"study", "data", "options", "settings", "seed", "paper", "results", "ratio_sweep"},
               "simulation_study.json");
  for (const auto& res : sim["results"]) {
    require_keys(res, {"features", "part", "schemes", "comparisons"}, "simulation_study result");
    for (const auto& s : res["schemes"]) {
      require_keys(s, {"scheme", "spec", "score", "std_error", "ci", "null_level", "draws"},
                   "score");
    }
  }
  check_no_null(sim, "simulation_study");
  const json sweep = read_json(out / "coupling_sweep.json");
  require_keys(sweep, {"study", "options", "settings", "points", "verdicts"},
               "coupling_sweep.json");
  check_no_null(sweep, "coupling_sweep");

  std::vector<std::string> pngs = {"sigma1_by_scheme", "sigma1_vs_ratio", "coupling_sweep",
                                   "example_window"};
  if (torch) {
    bool encoder = false;
    for (const auto& res : sim["results"]) encoder = encoder || res["features"] == "encoder";
    CHECK(encoder);
    const json t1 = read_json(out / "table1.json");
    require_keys(t1, {"data", "setting", "options", "seed", "rows"}, "table1.json");
    CHECK(t1["rows"].size() >= 3);
    for (const auto& row : t1["rows"]) {
      require_keys(row, {"model", "finetune", "paper"}, "table1 row");
      require_keys(row["finetune"], {"accuracy", "macro_f1", "confusion"}, "table1 finetune");
    }
    check_no_null(t1, "table1");
    const json imp = read_json(out / "imputation.json");
    require_keys(imp, {"table", "paper", "paper_columns", "options"}, "imputation.json");
    check_no_null(imp["table"], "imputation");
    const json lf = read_json(out / "ablation_label_fraction.json");
    require_keys(lf, {"experiment", "rows", "rule", "options"}, "ablation_label_fraction.json");
    REQUIRE(lf["rows"].size() >= 2);
    for (const auto& row : lf["rows"]) {
      require_keys(row, {"value", "train_windows", "cross", "sync"}, "label fraction row");
    }
    CHECK(lf["rows"][0]["train_windows"].get<int>() <
          lf["rows"].back()["train_windows"].get<int>());
    check_no_null(lf, "ablation_label_fraction");
    const json il = read_json(out / "ablation_input_length.json");
    require_keys(il, {"experiment", "rows", "rule", "model_length", "options"},
                 "ablation_input_length.json");
    REQUIRE(il["rows"].size() >= 2);
    for (const auto& row : il["rows"]) {
      require_keys(row, {"value", "length", "train_windows", "cross"}, "input length row");
      // whole patches at the model's rate (50 Hz, Lp 20): round(50 s) rounded down to 20s
      const double samples = std::round(50.0 * row["value"].get<double>());
      CHECK(row["length"].get<int>() == static_cast<int>(samples) / 20 * 20);
    }
    check_no_null(il, "ablation_input_length");
    const json shape = read_json(out / "input_shape.json");
    require_keys(shape, {"experiment", "rows", "not_run", "options"}, "input_shape.json");
    REQUIRE(shape["rows"].size() == 3);
    CHECK(shape["rows"][0]["layout"] == "stacked");
    CHECK(shape["rows"][0]["input_shape"] == "[1, 200, 6]");
    for (const auto& row : shape["rows"]) {
      require_keys(row, {"model", "input_shape", "linear_probe", "finetune", "paper"},
                   "input shape row");
    }
    check_no_null(shape, "input_shape");
    for (const char* f : {"ablation_mask_ratio.json", "ablation_patch_length.json"}) {
      const json a = read_json(out / f);
      require_keys(a, {"experiment", "rows", "paper", "options"}, f);
      CHECK(a["rows"].size() >= 2);
      check_no_null(a, f);
    }
    const json rec = read_json(out / "reconstructions.json");
    REQUIRE(rec["rows"].size() == 4);
    for (const auto& row : rec["rows"]) {
      CHECK(is_png(out / row["png"].get<std::string>()));
      CHECK(fs::exists(out / row["csv"].get<std::string>()));
    }
    for (const auto& row : rec["rows"]) {
      require_keys(row["baselines"], {"linear", "nearest", "mice"}, "reconstruction baselines");
    }
    const json ins = read_json(out / "inspect.json");
    require_keys(ins, {"rows", "windows", "map"}, "inspect.json");
    REQUIRE(ins["rows"].size() == 3);  // cross, sync, scratch
    for (const auto& row : ins["rows"]) {
      for (const auto& a : row["attention"]) {
        bool png = false;
        for (const auto& f : a["files"]) {
          const std::string name = f.get<std::string>();
          if (name.size() > 4 && name.substr(name.size() - 4) == ".png") png = is_png(out / name);
        }
        CHECK(png);
      }
    }
    CHECK(is_png(out / ins["map"]["png"].get<std::string>()));
    check_no_null(ins, "inspect");
    // theory vs training: policy_study's report on the random split, one seed per policy
    const json tvt = read_json(out / "theory_vs_training" / "report.json");
    require_keys(tvt, {"policies", "correlations", "settings", "data"},
                 "theory_vs_training/report.json");
    CHECK(tvt["settings"]["split"] == "random");
    CHECK(tvt["policies"].size() == 3);
    const json bc = read_json(out / "bound_check.json");
    require_keys(bc, {"policies", "options", "settings", "data"}, "bound_check.json");
    for (const auto& p : bc["policies"]) {
      require_keys(p, {"loss", "alignment", "eps", "xi", "bound", "holds"}, "bound_check row");
    }
    check_no_null(bc, "bound_check");
    pngs.insert(pngs.end(),
                {"score_vs_loss", "confusion_0", "ablation_mask_ratio", "ablation_patch_length",
                 "imputation", "ablation_label_fraction", "ablation_input_length"});
  } else {
    // Without the model layer the training steps are skipped (bound_check needs their model).
    CHECK(m["skipped"] == json::array({"paper_experiments", "theory_vs_training"}));
  }
  for (const auto& name : pngs) {
    CHECK_MESSAGE(is_png(out / "figures" / (name + ".png")), name << ".png missing or not PNG");
  }
  fs::remove_all(out);
}

TEST_CASE("paper/reproduce --gpu: usage errors exit 2 and name the flag") {
  const std::string script = std::string(MOCA_SOURCE_DIR) + "/paper/reproduce";
  const std::string b = " --bin " + bin_dir();
  struct Case {
    std::string args, says;
  };
  for (const Case& c : std::vector<Case>{
           {"--quick --budget-minutes 5", "--budget-minutes: for --gpu only (the mode is --quick)"},
           {"--gpu --budget-minutes 0", "--budget-minutes (0) must be a positive number"},
           {"--gpu --budget-minutes ten", "--budget-minutes (ten) must be a positive number"},
           {"--gpu --precision fp16", "--precision (fp16) must be fp32 or bf16"},
           {"--gpu --device tpu", "--device (tpu) must be cuda or cpu"},
           {"--gpu --budget-minutes", "--budget-minutes needs a value"}}) {
    CAPTURE(c.args);
    const Run r = run(script + b + " --out " + MOCA_BINARY_DIR + "/reproduce_usage " + c.args);
    CHECK(r.code == 2);
    CHECK(r.err.find("reproduce: " + c.says) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(std::string(MOCA_BINARY_DIR) + "/reproduce_usage/gpu"));
}
