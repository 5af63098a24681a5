#include <doctest/doctest.h>

#include <stdexcept>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/model/checkpoint.hpp"
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
  const auto j = tools::run_pretrain(pre, out, log);
  CHECK(j.at("finished") == true);
  CHECK(j.at("data").at("source") == "synthetic");
  CHECK(log.str().find("built-in synthetic IMU generator") != std::string::npos);
  CHECK(nlohmann::json::parse(std::ifstream(pre.json)).at("iterations") == 8);

  tools::ClassifyCommand lin;
  lin.data = synthetic(120);
  lin.options = model::downstream_defaults(model::DownstreamMode::kLinearProbe);
  lin.options.checkpoint = pre.train.checkpoint;
  lin.options.epochs = 3;
  lin.options.warmup_epochs = 1;
  lin.options.batch_size = 21;
  lin.options.progress = false;
  lin.protocol = "subject-kfold";
  lin.predictions = moca_test::temp_path("cmd_pred.csv");
  const auto c = tools::run_classify(lin, out, log);
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

  lin.protocol = "adl-loso";
  lin.hmp = moca_test::temp_path("no-hmp-here");
  CHECK_THROWS_AS(tools::run_classify(lin, out, log), std::runtime_error);
  lin.protocol = "random";
  lin.data.split = "all";  // classification splits come from --protocol only
  CHECK_THROWS_WITH_AS(tools::run_classify(lin, out, log), doctest::Contains("--protocol"),
                       std::invalid_argument);
  lin.data.split = "random";
  lin.protocol = "leave-two-out";
  CHECK_THROWS_WITH_AS(tools::run_classify(lin, out, log), doctest::Contains("protocol"),
                       std::invalid_argument);
}

TEST_CASE("run_impute and run_embed on generated data") {
  ::unsetenv("MOCA_HAPT_DIR");
  tools::ImputeCommand imp;
  imp.data = synthetic(60);
  imp.options.checkpoints = {moca_test::shared_checkpoint()};
  imp.options.mice.iterations = 2;
  imp.options.mice.draws = 1;
  imp.max_windows = 10;
  std::ostringstream out, log;
  const auto j = tools::run_impute(imp, out, log);
  CHECK(j.at("data").at("evaluated_windows") == 10);
  CHECK(j.at("table").at("cells").size() == 16);
  CHECK(out.str().find("MICE") != std::string::npos);

  tools::EmbedCommand emb;
  emb.data = synthetic(60);
  emb.checkpoint = moca_test::shared_checkpoint();
  emb.out_dir = moca_test::temp_path("embed");
  emb.max_windows = 7;
  const auto e = tools::run_embed(emb, out, log);
  CHECK(e.at("dim") == 128);
  const auto zu = moca::read_npy(emb.out_dir + "/Z_U.npy");
  CHECK(zu.shape == std::vector<std::int64_t>{7, 128});
}

TEST_CASE("the moca binary: usage errors exit 2, runtime errors 1, SIGINT checkpoints") {
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
