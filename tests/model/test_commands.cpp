#include <doctest/doctest.h>

#include <stdexcept>

#include <sys/wait.h>
#include <unistd.h>

#include <sys/mount.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "commands.hpp"
#include "kcca_score.hpp"
#include "moca/common/file_lock.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/model/io/checkpoint.hpp"
#include "test_support.hpp"

using namespace moca;

namespace {

tools::DataOptions synthetic(int windows) {
  tools::DataOptions d;
  d.data = "";
  d.synthetic_windows = windows;
  return d;
}

std::string bin() {
  const char* dir = std::getenv("MOCA_BIN_DIR");
  return std::string(dir != nullptr ? dir : MOCA_BINARY_DIR "/bin") + "/moca";
}

/// Runs a shell command, returns its exit status and (stdout+stderr) text.
int run(const std::string& cmd, std::string& output) {
  output.clear();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  while (size_t k = fread(buf, 1, sizeof buf, p)) output.append(buf, k);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("run_pretrain, run_classify and run_metrics on generated data") {
  ::unsetenv("MOCA_HAPT_DIR");
  tools::PretrainCommand pre;
  pre.data = synthetic(120);
  pre.train.preset = "cpu-small";
  pre.train.epochs = 2;
  pre.train.warmup_epochs = 1;
  pre.train.batch_size = 21;
  pre.train.progress = false;
  pre.train.checkpoint = moca_test::temp_path("cmd.pt");
  pre.json = moca_test::temp_path("cmd_pretrain.json");
  std::ostringstream out, log;
  model::RunContext context(log);  // one process
  const auto j = tools::run_pretrain(pre, out, context);
  CHECK(j.at("finished") == true);
  CHECK(j.at("data").at("source").get<std::string>().rfind("generator:windows=120", 0) == 0);
  CHECK(log.str().find("built-in synthetic IMU generator") != std::string::npos);
  CHECK(nlohmann::json::parse(std::ifstream(pre.json)).at("iterations") == 8);

  tools::ClassifyCommand lin;
  lin.options.data = synthetic(120);
  lin.options.run.downstream = model::downstream_defaults(model::DownstreamMode::kLinearProbe);
  lin.options.run.downstream.checkpoint = pre.train.checkpoint;
  lin.options.run.downstream.epochs = 3;
  lin.options.run.downstream.warmup_epochs = 1;
  lin.options.run.downstream.batch_size = 21;
  lin.options.run.downstream.progress = false;
  lin.options.run.protocol = model::Protocol::kSubjectKfold;
  lin.predictions = moca_test::temp_path("cmd_pred.csv");
  const auto c = tools::run_classify(lin, out, context);
  CHECK(c.at("folds").size() == 5);
  CHECK(c.at("summary").at("accuracy").at("n") == 5);
  CHECK(out.str().find("+-") != std::string::npos);

  tools::MetricsCommand met;
  met.predictions = lin.predictions;
  std::ostringstream mout;
  const auto m = tools::run_metrics(met, mout);
  CHECK(m.at("folds").size() == 5);
  CHECK(m.at("pooled").at("n") == 120);  // every window tested once
  // The per-fold accuracies agree with the classifier's.
  for (int f = 0; f < 5; ++f) {
    CHECK(std::abs(m.at("summary").at("accuracy").at("values")[f].get<double>() -
                   c.at("summary").at("accuracy").at("values")[f].get<double>()) < 1e-12);
  }

  lin.options.adl_loso = true;
  lin.options.run.protocol = model::Protocol::kLoso;
  lin.options.hmp = moca_test::temp_path("no-hmp-here");
  CHECK_THROWS_AS(tools::run_classify(lin, out, context), std::runtime_error);
  CHECK(lin.options.protocol_name() == "adl-loso");
  lin.options.data.data =
      "generator:";  // adl-loso reads HMP: another source is refused, not ignored
  CHECK_THROWS_WITH_AS(tools::run_classify(lin, out, context),
                       doctest::Contains("the protocol adl-loso reads ClassifyOptions::hmp"),
                       std::invalid_argument);
  lin.options.adl_loso = false;
  lin.options.data.data.clear();
  // the protocol's checks come before any data is read
  lin.options.run.label_fraction = 0.0;
  CHECK_THROWS_WITH_AS(tools::run_classify(lin, out, context),
                       doctest::Contains("ProtocolOptions::label_fraction (0) must be in (0, 1]"),
                       std::invalid_argument);
}

TEST_CASE("classify, embed_views and score_data: the library names fields, the programs flags") {
  // The library's checks name Owner::key (Python's keyword); each program rewrites it to its flag
  // (the binaries' messages are checked in tests/python/test_cli_contracts.py).
  model::ClassifyOptions c;
  c.run.downstream.checkpoint = moca_test::shared_checkpoint();
  c.input_seconds = -1;
  CHECK_THROWS_WITH_AS(c.validate(), "ClassifyOptions::input_seconds (-1) must be >= 0",
                       std::invalid_argument);
  c.input_seconds = 2;
  c.run.downstream.mode = model::DownstreamMode::kScratch;
  c.run.downstream.checkpoint.clear();
  CHECK_THROWS_WITH_AS(c.validate(),
                       doctest::Contains("trained from scratch takes DataOptions::window_length"),
                       std::invalid_argument);
  c.run.downstream.mode = model::DownstreamMode::kLinearProbe;
  c.run.downstream.checkpoint = moca_test::shared_checkpoint();
  c.validate();  // the control: the same options with a checkpoint pass
  CHECK(c.protocol_name() == "random");
  c.adl_loso = true;
  CHECK(c.protocol_name() == "adl-loso");

  model::EmbedOptions e;
  CHECK_THROWS_WITH_AS(e.validate(), "EmbedOptions::checkpoints is required",
                       std::invalid_argument);
  e.checkpoints = {moca_test::shared_checkpoint(), moca_test::shared_checkpoint()};
  CHECK_THROWS_WITH_AS(e.validate(),
                       "EmbedOptions::checkpoints (2 files) must be one without "
                       "EmbedOptions::pool or EmbedOptions::map",
                       std::invalid_argument);
  e.pool = model::Pool::kCls;  // the control: the pooled embeddings take several
  e.labels = {"a"};
  CHECK_THROWS_WITH_AS(
      e.validate(), "EmbedOptions::labels (1 names) must be one per EmbedOptions::checkpoints (2)",
      std::invalid_argument);
  e.labels = {"a", "b"};
  e.map = model::EmbedMap::kUmap;
  e.umap.neighbors = 1;
  CHECK_THROWS_WITH_AS(e.validate(), "UmapOptions::neighbors (1) must be >= 2",
                       std::invalid_argument);
  e.umap.neighbors = 15;
  e.validate();
  // What each mode leaves without effect: the masks' options beside --pool/--map, UMAP's with
  // the PCA map, the pooled mode's own options for the views.
  auto fields = [](const std::vector<UnusedOption>& u) {
    std::vector<std::string> f;
    for (const auto& x : u) f.push_back(x.field);
    return f;
  };
  CHECK(fields(model::unused_options(e)) ==
        std::vector<std::string>{"EmbedOptions::policy", "EmbedOptions::seed"});
  e.map = model::EmbedMap::kPca;
  CHECK(fields(model::unused_options(e)).size() == 6);  // + the 4 UMAP rows
  e = model::EmbedOptions{};
  e.checkpoints = {moca_test::shared_checkpoint()};
  const auto views = fields(model::unused_options(e));
  CHECK(views.size() == 7);  // --label, --pool, --map and the 4 UMAP rows
  CHECK(views[0] == "EmbedOptions::labels");
  e.max_windows = -1;
  CHECK_THROWS_WITH_AS(e.validate(), "EmbedOptions::max_windows (-1) must be >= 0",
                       std::invalid_argument);
  e.max_windows = 0;
  e.inference.batch_size = 0;
  CHECK_THROWS_WITH_AS(e.validate(), "InferenceOptions::batch_size (0) must be >= 1",
                       std::invalid_argument);
  e.inference.batch_size = 1;
  e.validate();

  model::ImputeDataOptions imp;
  CHECK(imp.data.split == data::SplitKind::kRandom);  // impute's default split
  imp.max_windows = -1;
  CHECK_THROWS_WITH_AS(imp.validate(), "ImputeDataOptions::max_windows (-1) must be >= 0",
                       std::invalid_argument);
  imp.max_windows = 0;
  imp.validate();  // the control

  model::PredictOptions pr;
  CHECK_THROWS_WITH_AS(pr.validate(), "PredictOptions::model is required (a classifier checkpoint)",
                       std::invalid_argument);
  pr.model = "clf.pt";
  pr.validate();  // the control (the file is read by predict_data)

  masking::DataScoreOptions k;
  k.samples = 2;
  CHECK_THROWS_WITH_AS(k.validate(), "DataScoreOptions::samples (2) must be >= 3",
                       std::invalid_argument);
  k.samples = 3;
  k.transitions = -2;
  CHECK_THROWS_WITH_AS(k.validate(),
                       "DataScoreOptions::transitions (-2) must be >= 0 (0 = the windows)",
                       std::invalid_argument);
  k.transitions = -1;
  k.validate();
}

TEST_CASE("run_impute and run_embed on generated data") {
  ::unsetenv("MOCA_HAPT_DIR");
  tools::ImputeCommand imp;
  imp.options.data = synthetic(60);
  imp.options.impute.checkpoints = {moca_test::shared_checkpoint()};
  imp.options.impute.mice.iterations = 2;
  imp.options.impute.mice.draws = 1;
  imp.options.max_windows = 10;
  std::ostringstream out, log;
  const auto j = tools::run_impute(imp, out, log);
  CHECK(j.at("data").at("evaluated_windows") == 10);
  CHECK(j.at("table").at("cells").size() == 16);
  CHECK(out.str().find("MICE") != std::string::npos);

  tools::EmbedCommand emb;
  emb.options.data = synthetic(60);
  emb.options.checkpoints = {moca_test::shared_checkpoint()};
  emb.options.out_dir = moca_test::temp_path("embed");
  emb.options.max_windows = 7;
  const auto e = tools::run_embed(emb, out, log);
  CHECK(e.at("dim") == 128);
  const auto zu = moca::read_npy(emb.options.out_dir + "/Z_U.npy");
  CHECK(zu.shape == std::vector<std::int64_t>{7, 128});
}

namespace {

// An ssl-wearables folder as a user would bring it: 60 windows of 9 channels (acc, gyro, mag) x
// 100 samples at 25 Hz, string labels (3 classes with their own frequencies) and string pids (6
// subjects), meta.json with modalities, sample_rate and channel names.
std::string own_npy_folder(const std::string& name, bool with_pid) {
  namespace fs = std::filesystem;
  const std::string dir = moca_test::temp_path(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const int n = 60, c = 9, len = 100;
  const char* classes[] = {"walk", "run", "jump"};
  std::vector<double> x;
  std::vector<std::string> y, pid;
  for (int i = 0; i < n; ++i) {
    const double f = 1.0 + 1.5 * (i % 3);
    for (int ch = 0; ch < c; ++ch)
      for (int t = 0; t < len; ++t)
        x.push_back(std::sin(2 * 3.14159265358979 * f * t / 25.0 + 0.3 * ch + 0.1 * i) +
                    0.05 * std::cos(1.7 * t + i + ch));
    y.push_back(classes[i % 3]);
    pid.push_back("subject-" + std::string(1, static_cast<char>('a' + i % 6)));
  }
  moca::write_npy(dir + "/X.npy", {n, c, len}, x.data());
  moca::write_npy_strings(dir + "/Y.npy", y);
  if (with_pid) moca::write_npy_strings(dir + "/pid.npy", pid);
  std::ofstream(dir + "/meta.json")
      << R"({"modalities": {"acc": [0, 1, 2], "gyro": [3, 4, 5], "mag": [6, 7, 8]},
             "sample_rate": 25,
             "channel_names": ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z",
                               "mag_x", "mag_y", "mag_z"]})";
  return dir;
}

}  // namespace

TEST_CASE("your own data end to end: kcca_score, pretrain, linprobe, impute, embed on .npy") {
  ::unsetenv("MOCA_HAPT_DIR");
  const std::string dir = own_npy_folder("own_npy", true);
  std::ostringstream out, log;
  model::RunContext context(log);  // one process

  // kcca_score: the windows themselves (no transitions), resampled 25 -> 50 Hz, L 100 -> 200.
  tools::KccaScoreOptions ko;
  ko.data.data = dir;
  ko.scoring.schemes = {"cross", "per-modality"};
  ko.scoring.score.draws = 3;
  ko.scoring.score.pca = 5;
  ko.progress = false;
  const auto doc = tools::run_kcca_score(ko, out, log);
  CHECK(doc.at("data").at("spec") == "npy:" + dir);
  CHECK(doc.at("data").at("modalities") == "acc=0-2,gyro=3-5,mag=6-8");
  CHECK(doc.at("data").at("scored") == "windows");
  CHECK(doc.at("data").at("scored_windows") == 60);
  CHECK(doc.at("settings").at("grid").at("channels") == 9);
  CHECK(doc.at("settings").at("grid").at("patches") == 10);
  CHECK(doc.at("schemes")[1].at("spec").get<std::string>().find("groups=0-2/3-5/6-8") !=
        std::string::npos);
  CHECK(log.str().find("resampled 25 -> 50 Hz") != std::string::npos);
  // One modality group: the cross-modal policies and scores say they need two.
  ko.data.dataset.modalities = "acc=0-2";
  ko.scoring.schemes = {"per-modality"};
  CHECK_THROWS_WITH_AS(tools::run_kcca_score(ko, out, log),
                       doctest::Contains("per-modality needs >= 2 modality groups"),
                       std::invalid_argument);
  ko.scoring.schemes = {"cross"};
  ko.scoring.cross_modal = true;
  CHECK_THROWS_WITH_AS(tools::run_kcca_score(ko, out, log),
                       doctest::Contains("ScoreRunOptions::cross_modal needs >= 2 modality groups"),
                       std::invalid_argument);

  // pretrain (tiny): the checkpoint records channels, groups, rate and L.
  tools::PretrainCommand pre;
  pre.data.data = dir;
  pre.train.preset = "tiny";
  pre.train.epochs = 1;
  pre.train.warmup_epochs = 0;
  pre.train.batch_size = 14;
  pre.train.progress = false;
  pre.train.checkpoint = moca_test::temp_path("own_npy.pt");
  tools::run_pretrain(pre, out, context);
  const auto info = model::read_checkpoint_info(pre.train.checkpoint);
  CHECK(info.channel_names.size() == 9);
  CHECK(info.channel_names.back() == "mag_z");
  CHECK(info.model.length == 200);
  CHECK(info.meta.at("data").at("sample_rate_hz") == 50.0);
  CHECK(info.meta.at("data").at("modalities").at("mag") == std::vector<int>{6, 7, 8});
  CHECK(tools::checkpoint_geometry(pre.train.checkpoint).length == 200);

  // linprobe, subject-wise folds over the string pids; class names are kept.
  tools::ClassifyCommand lin;
  lin.options.data.data = dir;
  lin.options.run.folds = 3;
  lin.options.run.downstream = model::downstream_defaults(model::DownstreamMode::kLinearProbe);
  lin.options.run.downstream.checkpoint = pre.train.checkpoint;
  lin.options.run.downstream.epochs = 2;
  lin.options.run.downstream.warmup_epochs = 1;
  lin.options.run.downstream.batch_size = 10;
  lin.options.run.downstream.progress = false;
  lin.options.run.protocol = model::Protocol::kSubjectKfold;
  const auto c = tools::run_classify(lin, out, context);
  CHECK(c.at("folds").size() == 3);
  CHECK(c.at("data").at("class_names") == std::vector<std::string>{"jump", "run", "walk"});
  CHECK(c.at("data").at("subjects") == 6);
  lin.options.run.protocol = model::Protocol::kLoso;
  lin.options.run.downstream.epochs = 1;
  lin.options.run.downstream.warmup_epochs = 0;
  CHECK(tools::run_classify(lin, out, context).at("folds").size() == 6);
  // Bad input for a probe: one class, no subject ids, channels the model does not have.
  lin.options.run.protocol = model::Protocol::kSubjectKfold;
  lin.options.data.dataset.keep_classes = "walk";
  CHECK_THROWS_WITH_AS(tools::run_classify(lin, out, context),
                       doctest::Contains("needs labels of >= 2 classes; every labelled window has "
                                         "class 'walk'"),
                       std::invalid_argument);
  lin.options.data.dataset.keep_classes.clear();
  lin.options.data.data = own_npy_folder("own_npy_nopid", false);
  CHECK_THROWS_WITH_AS(tools::run_classify(lin, out, context),
                       doctest::Contains("protocol subject-kfold needs subject ids"),
                       std::invalid_argument);
  lin.options.data.data = dir;
  lin.options.run.downstream.checkpoint = moca_test::shared_checkpoint();  // 6 channels acc + gyro
  CHECK_THROWS_WITH_AS(tools::run_classify(lin, out, context),
                       doctest::Contains("channel 'mag_x' is not one of the model's"),
                       std::invalid_argument);

  // impute (3 groups: the sensor task runs) and embed on the same folder.
  tools::ImputeCommand imp;
  imp.options.data.data = dir;
  imp.options.impute.checkpoints = {pre.train.checkpoint};
  imp.options.impute.mice.iterations = 1;
  imp.options.impute.mice.draws = 1;
  imp.options.max_windows = 6;
  const auto ij = tools::run_impute(imp, out, log);
  CHECK(ij.at("table").at("tasks").size() == 4);
  CHECK(ij.at("data").at("modalities") == "acc=0-2,gyro=3-5,mag=6-8");
  tools::EmbedCommand emb;
  emb.options.data.data = dir;
  emb.options.checkpoints = {pre.train.checkpoint};
  emb.options.out_dir = moca_test::temp_path("own_npy_embed");
  emb.options.max_windows = 5;
  const auto e = tools::run_embed(emb, out, log);
  CHECK(moca::read_npy(emb.options.out_dir + "/Z_M.npy").shape ==
        std::vector<std::int64_t>{5, e.at("dim").get<std::int64_t>()});

  // data inspect and export: the export reads back as the same windows.
  tools::DataInspectCommand ins;
  ins.data.data = dir;
  std::ostringstream iout;
  const auto ij2 = tools::run_data_inspect(ins, iout, log);
  CHECK(iout.str().find("modality groups (3):  acc = {acc_x, acc_y, acc_z}") != std::string::npos);
  CHECK(iout.str().find("L = 200 samples at 50 Hz (input: 9 channels, L = 100 at 25 Hz)") !=
        std::string::npos);
  CHECK(ij2.at("subjects_windows").size() == 6);
  tools::DataExportCommand ex;
  ex.data.data = dir;
  ex.out_dir = moca_test::temp_path("own_npy_export");
  tools::run_data_export(ex, out, log);
  tools::DataInspectCommand back;
  back.data.data = ex.out_dir;
  std::ostringstream bout;
  const auto bj = tools::run_data_inspect(back, bout, log);
  CHECK(bj.at("notes").empty());
  CHECK(bj.at("class_names") == ij2.at("class_names"));
  CHECK(bj.at("classes") == ij2.at("classes"));
}

TEST_CASE("the moca binary: usage errors exit 2, runtime errors 1, SIGINT checkpoints") {
  ::unsetenv("MOCA_HAPT_DIR");  // the generator's data (not only after an earlier case unset it)
  std::string text;
  CHECK(run(bin() + " pretrain --preset enormous --synthetic-windows 40", text) == 2);
  CHECK(text.find("moca: ") != std::string::npos);
  CHECK(text.find("preset") != std::string::npos);
  CHECK(run(bin() + " pretrain --epochs", text) == 2);
  CHECK(run(bin() + " frobnicate", text) == 2);
  const auto junk = moca_test::temp_path("cli_junk.pt");
  std::ofstream(junk) << "junk";
  CHECK(run(bin() + " linprobe --checkpoint " + junk + " --synthetic-windows 200", text) == 1);
  CHECK(text.find("not a moca checkpoint") != std::string::npos);
  CHECK(text.find("frame #") == std::string::npos);  // no LibTorch backtrace

  // SIGINT during pre-training: a checkpoint is written and the process exits 0.
  const auto ck = moca_test::temp_path("cli_sigint.pt");
  std::remove(ck.c_str());
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    const std::string b = bin();
    execl(b.c_str(), b.c_str(), "pretrain", "--preset", "cpu-small", "--synthetic-windows", "200",
          "--epochs", "500", "--batch", "10", "--threads", "1", "--no-progress", "--checkpoint",
          ck.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ::sleep(4);
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const auto info = model::read_checkpoint_info(ck);
  CHECK(info.meta.at("finished") == false);
  CHECK(info.meta.at("iteration").get<long>() >= 1);
}

namespace {

/// Names in `dir` that look like temporary files of the output module (of `target` only, when
/// given).
int temp_files(const std::string& dir, const std::string& target = "") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(target, 0) == 0 && name.find(".tmp.") != std::string::npos) ++n;
  }
  return n;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("the moca binary: one writer per checkpoint, full disk, SIGKILL mid-write, flags") {
  namespace fs = std::filesystem;
  ::unsetenv("MOCA_HAPT_DIR");
  const std::string dir = moca_test::temp_path("reliability");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string ck = dir + "/x.pt";
  const std::string args =
      " pretrain --preset cpu-small --synthetic-windows 60 --batch 20 "
      "--epochs 400 --threads 1 --no-progress --checkpoint-every 1";
  std::string text;

  // Two runs with the same checkpoint: the second refuses to start.
  {
    const FileLock held(lock_path_for_file(ck), "checkpoint " + ck);
    CHECK(run(bin() + args + " --checkpoint " + ck + " --stop-after 2", text) == 1);
    INFO(text);
    CHECK(text.find("moca: checkpoint " + ck + " is in use by process " +
                    std::to_string(::getpid())) != std::string::npos);
    CHECK_FALSE(fs::exists(ck));
  }
  REQUIRE(run(bin() + args + " --checkpoint " + ck + " --stop-after 2", text) == 0);
  const std::string previous = file_bytes(ck);
  // Resumed at iteration 2 with --stop-after 2: stops before any step, checkpoint untouched
  // (issue 38: it ran one more iteration).
  REQUIRE(run(bin() + args + " --checkpoint " + ck + " --resume --stop-after 2", text) == 0);
  INFO(text);
  CHECK(text.find("interrupted at iteration 2 (--stop-after 2)") != std::string::npos);
  CHECK(file_bytes(ck) == previous);
  CHECK_FALSE(fs::exists(lock_path_for_file(ck)));  // released at the end of the run

  // The file system fills while the checkpoint is written (a file size limit, SIGXFSZ ignored,
  // stands for the full disk): one line naming the file and the cause, exit 1, no temporary
  // file, the previous checkpoint intact, and --resume still works.
  CHECK(run("trap '' XFSZ; ulimit -f 64; " + bin() + args + " --checkpoint " + ck +
                " --resume --stop-after 4",
            text) == 1);
  INFO(text);
  CHECK(text.find("moca: cannot write '" + ck + "': write failed (File too large)") !=
        std::string::npos);
  CHECK(text.find("terminate") == std::string::npos);
  CHECK(text.find("frame #") == std::string::npos);
  CHECK(file_bytes(ck) == previous);
  CHECK(temp_files(dir) == 0);

  // The same on a real full file system: a tmpfs with room for one checkpoint and a half.
  const std::string small = dir + "/small";
  fs::create_directories(small);
  const std::string opts = "size=" + std::to_string(previous.size() * 3 / 2 + 65536);
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, opts.c_str()) == 0) {
    fs::copy_file(ck, small + "/x.pt");
    const int code =
        run(bin() + args + " --checkpoint " + small + "/x.pt --resume --stop-after 4", text);
    const bool intact = file_bytes(small + "/x.pt") == previous;
    const int left = temp_files(small);
    ::umount(small.c_str());
    INFO(text);
    CHECK(code == 1);
    CHECK(text.find("No space left on device") != std::string::npos);
    CHECK(intact);
    CHECK(left == 0);
  } else {
    MESSAGE("mounting a tmpfs is not permitted here: full file-system case skipped");
  }

  // SIGKILL while a checkpoint is being written: the previous checkpoint survives (the lock of
  // the dead process is no obstacle) and --resume continues from it.
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    const std::string cmd = bin() + args + " --checkpoint " + ck + " --resume";
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bool caught = false;
  for (int i = 0; i < 600000 && !caught; ++i) {  // up to ~60 s
    if (temp_files(dir, "x.pt.tmp.") > 0) {
      ::kill(pid, SIGKILL);
      caught = true;
    } else {
      ::usleep(100);
    }
  }
  if (!caught) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(caught);
  CHECK(WIFSIGNALED(status));
  const auto info = model::read_checkpoint_info(ck);  // complete and readable
  const long done = info.meta.at("iteration").get<long>();
  CHECK(done >= 2);
  CHECK(run(bin() + args + " --checkpoint " + ck + " --resume --stop-after " +
                std::to_string(done + 2),
            text) == 0);
  INFO(text);
  CHECK(model::read_checkpoint_info(ck).meta.at("iteration").get<long>() == done + 2);
  CHECK(temp_files(dir) == 0);  // the killed run's temporary file is gone

  // The common flags on every command.
  const std::string pred = dir + "/pred.csv";
  std::ofstream(pred) << "0,1\n1,1\n";
  CHECK(run(bin() + " metrics --no-progress --predictions " + pred, text) == 0);
  CHECK(run(bin() +
                " impute --no-progress --no-baselines --synthetic-windows 60 "
                "--max-windows 4 --threads 1 --checkpoint " +
                ck,
            text) == 0);
  INFO(text);
}

TEST_CASE("the moca binary: a default warm-up yields to --epochs; a given one must fit it") {
  ::unsetenv("MOCA_HAPT_DIR");
  const std::string ck = moca_test::temp_path("warmup.pt");
  const std::string common = " --synthetic-windows 40 --batch 20 --threads 1 --no-progress";
  std::string text;
  // pretrain --epochs 2: the default warm-up (10) becomes 1, with a note naming the flag, and the
  // JSON records the warm-up used (options and settings).
  const std::string pre_json = moca_test::temp_path("warmup_pretrain.json");
  REQUIRE(run(bin() + " pretrain --preset cpu-small --epochs 2 --checkpoint " + ck + " --json " +
                  pre_json + common,
              text) == 0);
  INFO(text);
  CHECK(text.find("moca pretrain: note: --warmup-epochs not set: its default 10 is not below "
                  "--epochs (2); the warm-up is 1 epoch") != std::string::npos);
  const auto pre = nlohmann::json::parse(std::ifstream(pre_json));
  CHECK(pre.at("options").at("pretrain").at("warmup-epochs") == 1);
  CHECK(pre.at("settings").at("warmup_epochs") == 1);
  // linprobe and finetune --epochs 2 likewise (defaults 10 and 5).
  for (const std::string command : {"linprobe", "finetune"}) {
    const std::string json = moca_test::temp_path("warmup_" + command + ".json");
    REQUIRE(
        run(bin() + " " + command + " --epochs 2 --checkpoint " + ck + " --json " + json + common,
            text) == 0);
    INFO(text);
    CHECK(text.find("moca " + command + ": note: --warmup-epochs not set: its default " +
                    (command == "linprobe" ? "10" : "5") +
                    " is not below --epochs (2); the warm-up is 1 epoch") != std::string::npos);
    const auto j = nlohmann::json::parse(std::ifstream(json));
    CHECK(j.at("options").at(command).at("warmup-epochs") == 1);
    CHECK(j.at("settings").at("warmup_epochs") == 1);
  }
  // --print-config leaves the unset warm-up out (a file it writes repeats the yielding default).
  REQUIRE(run(bin() + " finetune --epochs 2 --checkpoint " + ck + " --print-config", text) == 0);
  CHECK(text.find("warmup-epochs") == std::string::npos);
  // Given and not below --epochs: a usage error naming both flags, no warm-up changed silently.
  CHECK(run(bin() + " finetune --epochs 2 --warmup-epochs 5 --checkpoint " + ck + common, text) ==
        2);
  CHECK(text.find("moca: --warmup-epochs (5) must be in [0, --epochs = 2)") != std::string::npos);
  CHECK(run(bin() + " pretrain --epochs 3 --warmup-epochs 3 --checkpoint " + ck + common, text) ==
        2);
  CHECK(text.find("moca: --warmup-epochs (3) must be in [0, --epochs = 3)") != std::string::npos);
  // Given and fitting: used as given, no note.
  CHECK(run(bin() + " linprobe --epochs 2 --warmup-epochs 0 --checkpoint " + ck + common, text) ==
        0);
  CHECK(text.find("note: --warmup-epochs") == std::string::npos);
}
