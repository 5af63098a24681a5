// Data-parallel training (src/moca/model/distributed): rendezvous parsing, the sampler, and real
// multi-process runs of the built `moca` binary on loopback (Gloo): N ranks follow the 1-rank
// run, resume across world sizes, a killed rank ends the others, clear start-up errors.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "moca/common/random.hpp"
#include "moca/data/mapped_npy.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/data/window_source.hpp"
#include "moca/model/dist/distributed.hpp"
#include "moca/model/dist/run_context.hpp"
#include "torch_test.hpp"

using namespace moca;
using namespace moca::model;
namespace fs = std::filesystem;

namespace {

std::string bin() {
  const char* dir = std::getenv("MOCA_BIN_DIR");
  return std::string(dir != nullptr ? dir : MOCA_BINARY_DIR "/bin") + "/moca";
}

std::string tmp_dir(const std::string& name) {
  const std::string d = std::string(MOCA_BINARY_DIR) + "/test_distributed_" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const std::string& path) {
  std::ifstream is(path);
  std::stringstream ss;
  ss << is.rdbuf();
  return ss.str();
}

/// Starts `moca args...` with extra environment `env`; stdout+stderr go to `out`.
pid_t spawn(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
            const std::string& out) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                          "SLURM_PROCID", "SLURM_NTASKS", "MOCA_HAPT_DIR"}) {
      ::unsetenv(v);
    }
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    if (!std::freopen(out.c_str(), "w", stdout) || ::dup2(::fileno(stdout), 2) < 0) ::_exit(126);
    std::vector<char*> argv;
    const std::string b = bin();
    argv.push_back(const_cast<char*>(b.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(b.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

/// Waits for `pid`; returns its exit code (128 + signal when killed).
int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Runs `moca args...` to the end; returns the exit code and puts the output in `output`.
int run_moca(const std::vector<std::string>& args, std::string& output,
             const std::map<std::string, std::string>& env = {}) {
  static int k = 0;
  const std::string out = std::string(MOCA_BINARY_DIR) + "/test_distributed_out_" +
                          std::to_string(::getpid()) + "_" + std::to_string(k++) + ".txt";
  const int code = wait_for(spawn(args, env, out));
  output = slurp(out);
  fs::remove(out);
  return code;
}

/// A socket bound to a free loopback port (listening when `listen`); returns the fd and sets
/// `port`.
int bound_socket(int& port, bool listen) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  REQUIRE((!listen || ::listen(fd, 1) == 0));
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0);
  port = ntohs(sa.sin_port);
  return fd;
}

/// Waits up to a minute for `path` to exist; returns whether it does.
bool appears(const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  while (!fs::exists(path) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fs::exists(path);
}

int free_port() {
  int port = 0;
  ::close(bound_socket(port, false));
  return port;
}

/// The common pre-training options: cpu-small on 60 generated windows, global batch 16 (3
/// iterations per epoch, 12 tail windows dropped), 2 epochs, one thread per rank, augmentation
/// on (its draws must not depend on the world size either). `set` replaces or adds options;
/// `flags` are appended.
std::vector<std::string> pretrain_args(const std::string& checkpoint,
                                       const std::map<std::string, std::string>& set = {},
                                       const std::vector<std::string>& flags = {}) {
  std::map<std::string, std::string> o{{"--synthetic-windows", "60"},
                                       {"--split", "all"},
                                       {"--preset", "cpu-small"},
                                       {"--epochs", "2"},
                                       {"--warmup-epochs", "1"},
                                       {"--batch", "16"},
                                       {"--threads", "1"},
                                       {"--seed", "5"},
                                       {"--dist-timeout", "20"},
                                       {"--checkpoint", checkpoint}};
  for (const auto& [k, v] : set) o[k] = v;
  std::vector<std::string> a{"pretrain", "--augment", "--no-progress"};
  for (const auto& [k, v] : o) {
    a.push_back(k);
    a.push_back(v);
  }
  a.insert(a.end(), flags.begin(), flags.end());
  return a;
}

std::vector<std::string> launch(int nproc, std::vector<std::string> cmd) {
  std::vector<std::string> a{"launch", "--nproc", std::to_string(nproc), "--"};
  a.insert(a.end(), cmd.begin(), cmd.end());
  return a;
}

/// Largest relative difference ||a - b|| / ||b|| over the parameters of two MAE checkpoints,
/// leaving out the key third of each attention's qkv bias, whose gradient is zero in exact
/// arithmetic (softmax is invariant to a shift of every key by the same vector): it carries only
/// rounding noise, which Adam normalises to steps of about the learning rate, so it differs
/// between any two reduction orders (two thread counts on one rank as well). Its largest
/// absolute difference goes to `key_bias_diff`.
double max_relative_difference(const std::string& a, const std::string& b,
                               double* key_bias_diff = nullptr) {
  auto ca = model::detail::open_checkpoint(a), cb = model::detail::open_checkpoint(b);
  REQUIRE(to_json(ca.info.model) == to_json(cb.info.model));
  MocaMae ma(ca.info.model), mb(cb.info.model);
  model::detail::load_module(ca, *ma);
  model::detail::load_module(cb, *mb);
  auto pb = mb->named_parameters();
  double worst = 0.0, key = 0.0;
  for (const auto& p : ma->named_parameters()) {
    torch::Tensor x = p.value(), y = pb[p.key()];
    const std::string suffix = "qkv.bias";
    if (p.key().size() >= suffix.size() &&
        p.key().compare(p.key().size() - suffix.size(), suffix.size(), suffix) == 0) {
      const int64_t d = x.numel() / 3;
      key = std::max(key, (x.slice(0, d, 2 * d) - y.slice(0, d, 2 * d)).abs().max().item<double>());
      x = torch::cat({x.slice(0, 0, d), x.slice(0, 2 * d)});
      y = torch::cat({y.slice(0, 0, d), y.slice(0, 2 * d)});
    }
    const double den = y.norm().item<double>();
    const double num = (x - y).norm().item<double>();
    worst = std::max(worst, den > 0 ? num / den : num);
  }
  if (key_bias_diff != nullptr) *key_bias_diff = key;
  return worst;
}

nlohmann::json meta_of(const std::string& checkpoint) {
  return read_checkpoint_info(checkpoint).meta;
}

void copy_run(const std::string& from, const std::string& to) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  fs::copy_file(from + ".metrics.jsonl", to + ".metrics.jsonl",
                fs::copy_options::overwrite_existing);
}

}  // namespace

TEST_CASE("read_dist_env: torchrun variables, SLURM fallback, clear errors") {
  auto env_of = [](std::map<std::string, std::string> m) {
    return [m](const char* n) -> const char* {
      auto it = m.find(n);
      return it == m.end() ? nullptr : it->second.c_str();
    };
  };
  const DistEnv none = read_dist_env(env_of({}));
  CHECK(none.world_size == 1);
  CHECK(none.source == "none");
  const DistEnv t = read_dist_env(env_of({{"RANK", "3"},
                                          {"WORLD_SIZE", "4"},
                                          {"LOCAL_RANK", "1"},
                                          {"MASTER_ADDR", "node7"},
                                          {"MASTER_PORT", "1234"},
                                          {"SLURM_PROCID", "0"},
                                          {"SLURM_NTASKS", "8"}}));
  CHECK(t.rank == 3);
  CHECK(t.world_size == 4);  // RANK/WORLD_SIZE win over SLURM's
  CHECK(t.local_rank == 1);
  CHECK(t.master_addr == "node7");
  CHECK(t.master_port == 1234);
  CHECK(t.source == "env");
  const DistEnv s =
      read_dist_env(env_of({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}}));
  CHECK(s.rank == 5);
  CHECK(s.world_size == 8);
  CHECK(s.local_rank == 1);
  CHECK(s.source == "slurm");
  CHECK_THROWS_WITH_AS(read_dist_env(env_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}})),
                       doctest::Contains("RANK (2) must be < WORLD_SIZE (2)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(read_dist_env(env_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}})),
                       doctest::Contains("WORLD_SIZE ('0')"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(read_dist_env(env_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}})),
                       doctest::Contains("RANK ('x')"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(read_dist_env(env_of({{"RANK", "0"}})),
                       doctest::Contains("WORLD_SIZE is not set"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      read_dist_env(env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}})),
      doctest::Contains("MASTER_PORT"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_enum(kDistBackendChoices, "mpi", "--backend"),
                       doctest::Contains("--backend (mpi) must be one of: auto, gloo, nccl"),
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_enum(kDistBackendChoices, "none", "--backend"), std::invalid_argument);
  CHECK(enum_name(kDistBackendNames, DistBackend::kNone) == "none");
  DistOptions bad;
  bad.backend = DistBackend::kNone;
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("backend (none)"), std::invalid_argument);
  bad.backend = DistBackend::kAuto;
  bad.timeout_s = 0;
  CHECK_THROWS_AS(bad.validate(), std::invalid_argument);
  CHECK(resolve_backend(DistBackend::kAuto, false) == DistBackend::kGloo);
  CHECK(resolve_backend(DistBackend::kAuto, true) ==
        (nccl_compiled() ? DistBackend::kNccl : DistBackend::kGloo));
  CHECK(resolve_backend(DistBackend::kGloo, true) == DistBackend::kGloo);
}

namespace {

/// A collective that only says where it sits (rank `rank` of 2, gloo, timeout 20 s).
class FakeCollective final : public Collective {
 public:
  explicit FakeCollective(int rank) : rank_(rank) {}
  int rank() const override { return rank_; }
  int world_size() const override { return 2; }
  int local_rank() const override { return rank_; }
  DistBackend backend() const override { return DistBackend::kGloo; }
  double timeout_s() const override { return 20.0; }
  void check_same(const std::string&, const std::string&) override {}
  void barrier(const std::string&) override {}
  std::vector<double> allreduce_sum(const std::vector<double>& v, const std::string&) override {
    return v;
  }
  void allreduce_sum(std::vector<torch::Tensor>&, const std::string&) override {}
  void broadcast_from_root(std::vector<torch::Tensor>&, const std::string&) override {}

 private:
  int rank_;
};

}  // namespace

TEST_CASE("RunContext: local by default, the log on rank 0 only, options checked against it") {
  std::ostringstream log;
  RunContext local(log);
  CHECK(local.rank() == 0);
  CHECK(local.world_size() == 1);
  CHECK(local.collective().backend() == DistBackend::kNone);
  CHECK(local.collective().allreduce_sum({1.5, 2.0}, "sum") == std::vector<double>{1.5, 2.0});
  local.log() << "root";
  DistOptions any;
  any.backend = DistBackend::kNccl;
  CHECK_NOTHROW(local.check_fits(any, false, "f()"));  // a world of one fits any options

  RunContext rank1(std::make_unique<FakeCollective>(1), log);
  rank1.log() << " rank 1";
  CHECK(log.str() == "root");
  RunContext rank0(std::make_unique<FakeCollective>(0), log);
  rank0.log() << " rank 0";
  CHECK(log.str() == "root rank 0");
  CHECK(rank0.is_root());
  CHECK_THROWS_AS(RunContext(nullptr, log), std::invalid_argument);

  DistOptions same;
  same.timeout_s = 20.0;
  CHECK_NOTHROW(rank0.check_fits(same, false, "f()"));
  same.backend = DistBackend::kGloo;
  CHECK_NOTHROW(rank0.check_fits(same, true, "f()"));
  DistOptions slower = same;
  slower.timeout_s = 30.0;
  CHECK_THROWS_WITH_AS(rank0.check_fits(slower, false, "f()"),
                       doctest::Contains("f(): the run context's process group (gloo, timeout 20 "
                                         "s) differs from the options' (gloo, timeout 30 s)"),
                       std::invalid_argument);
  DistOptions nccl = same;
  nccl.backend = DistBackend::kNccl;
  CHECK_THROWS_WITH_AS(rank0.check_fits(nccl, true, "f()"),
                       doctest::Contains("(nccl, timeout 20 s)"), std::invalid_argument);

  // make_run_context: a world of one from the environment is local (no rendezvous).
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "1", 1);
  const RunContext made = make_run_context(DistOptions{}, false, log);
  CHECK(made.world_size() == 1);
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
}

TEST_CASE("sampler: each window once per epoch across ranks, the same global batches") {
  for (const int n : {48, 53}) {
    const int B = 12;
    const auto order = epoch_order(n, derive_seed(7, 3));
    CHECK(std::set<int>(order.begin(), order.end()).size() == static_cast<size_t>(n));
    CHECK(order != epoch_order(n, derive_seed(7, 4)));  // another epoch, another order
    const long ipe = n / B;
    for (const int world : {1, 2, 3, 4}) {
      std::vector<int> seen(static_cast<size_t>(n), 0);
      for (long j = 0; j < ipe; ++j) {
        std::vector<int> global;
        for (int r = 0; r < world; ++r) {
          const auto rows = rank_batch_rows(order, j, B, r, world);
          CHECK(rows.size() == static_cast<size_t>(B / world));
          global.insert(global.end(), rows.begin(), rows.end());
        }
        // The ranks' slices in rank order are the 1-rank global batch, so the per-position
        // mask and augmentation draws of a global batch are the same for every world size.
        CHECK(global == rank_batch_rows(order, j, B, 0, 1));
        for (int w : global) ++seen[static_cast<size_t>(w)];
      }
      int once = 0, never = 0;
      for (int c : seen) {
        CHECK(c <= 1);
        once += c == 1;
        never += c == 0;
      }
      CHECK(once == ipe * B);
      CHECK(never == n % B);  // the tail (n mod B windows) is dropped on every rank
      for (int i = 0; i < n % B; ++i) CHECK(seen[static_cast<size_t>(order[ipe * B + i])] == 0);
    }
  }
  CHECK_THROWS_WITH_AS(
      check_global_batch("pretrain()", "PretrainOptions::batch_size", 10, 4),
      doctest::Contains(
          "(PretrainOptions::batch_size = 10) must be a multiple of the world size (4"),
      std::invalid_argument);
  CHECK_THROWS_AS(rank_batch_rows(epoch_order(20, 1), 0, 10, 0, 3), std::invalid_argument);
  CHECK(options_digest("a") != options_digest("b"));
}

TEST_CASE("2 ranks follow 1 rank; resume 2 -> 1 and 1 -> 2 follows the uninterrupted run") {
  const std::string d = tmp_dir("follow");
  std::string out;
  // The uninterrupted 1-rank reference (6 iterations), and 3-iteration runs on 1 and 2 ranks.
  REQUIRE_MESSAGE(run_moca(pretrain_args(d + "/ref.pt"), out) == 0, out);
  REQUIRE_MESSAGE(run_moca(pretrain_args(d + "/one.pt", {{"--stop-after", "3"}}), out) == 0, out);
  REQUIRE_MESSAGE(
      run_moca(launch(2, pretrain_args(d + "/two.pt", {{"--stop-after", "3"}})), out) == 0, out);
  CHECK(out.find("x 2 ranks (gloo)") != std::string::npos);
  // Both ranks load the data; rank 0 alone reports it.
  size_t splits = 0;
  for (size_t at = out.find("split: "); at != std::string::npos; at = out.find("split: ", at + 1))
    ++splits;
  CHECK(splits == 1);
  CHECK(meta_of(d + "/two.pt").at("iteration") == 3);
  CHECK(meta_of(d + "/two.pt").at("windows_seen") == 48);
  CHECK(meta_of(d + "/two.pt").at("world_size") == 2);
  double key_bias = 0.0;
  const double rel = max_relative_difference(d + "/two.pt", d + "/one.pt", &key_bias);
  MESSAGE("2 ranks vs 1 rank after 3 iterations: max relative parameter difference "
          << rel << ", key bias " << key_bias);
  CHECK(rel < 1e-5);
  CHECK(key_bias < 3 * 5e-4);  // at most ~lr per Adam step
  // The loss rank 0 logs is the global batch's loss.
  const auto l1 =
      nlohmann::json::parse(slurp(d + "/one.pt.metrics.jsonl")).at("loss").get<double>();
  const auto l2 =
      nlohmann::json::parse(slurp(d + "/two.pt.metrics.jsonl")).at("loss").get<double>();
  CHECK(l2 == doctest::Approx(l1).epsilon(1e-6));
  // Control: another seed on 2 ranks does not match (the comparison can fail).
  REQUIRE(
      run_moca(launch(2, pretrain_args(d + "/other.pt", {{"--stop-after", "3"}, {"--seed", "6"}})),
               out) == 0);
  CHECK(max_relative_difference(d + "/other.pt", d + "/one.pt") > 1e-2);

  // Resume: 2 ranks' checkpoint on 1 rank, 1 rank's on 2 ranks.
  copy_run(d + "/two.pt", d + "/two_to_one.pt");
  copy_run(d + "/one.pt", d + "/one_to_two.pt");
  REQUIRE_MESSAGE(run_moca(pretrain_args(d + "/two_to_one.pt", {}, {"--resume"}), out) == 0, out);
  REQUIRE_MESSAGE(
      run_moca(launch(2, pretrain_args(d + "/one_to_two.pt", {}, {"--resume"})), out) == 0, out);
  for (const std::string run : {"two_to_one", "one_to_two"}) {
    CAPTURE(run);
    CHECK(meta_of(d + "/" + run + ".pt").at("finished") == true);
    CHECK(meta_of(d + "/" + run + ".pt").at("iteration") == 6);
    CHECK(max_relative_difference(d + "/" + run + ".pt", d + "/ref.pt") < 1e-5);
  }
  CHECK(max_relative_difference(d + "/one.pt", d + "/ref.pt") > 1e-3);  // 3 more steps moved it
  fs::remove_all(d);
}

TEST_CASE("streamed: 2 ranks read disjoint halves of every batch and follow 1 rank") {
  const std::string d = tmp_dir("stream");
  const std::string data = d + "/data";
  std::filesystem::create_directories(data);
  moca::data::SyntheticOptions gen;
  gen.windows = 64;
  gen.length = 40;
  gen.seed = 2;
  const auto w = moca::data::generate_synthetic(gen);
  const moca::data::InMemorySource mem(w);
  moca::data::ShardWriteOptions so;
  so.shard_bytes = 32 * static_cast<std::int64_t>(w.channels) * w.length * 4;
  REQUIRE(moca::data::write_npy_shards(mem, data, so).size() == 2);
  auto args = [&](const std::string& name) {
    return std::vector<std::string>{"pretrain",        "--no-progress",
                                    "--data",          "npy:" + data,
                                    "--split",         "all",
                                    "--preset",        "cpu-small",
                                    "--epochs",        "2",
                                    "--warmup-epochs", "1",
                                    "--batch",         "16",
                                    "--threads",       "1",
                                    "--seed",          "5",
                                    "--dist-timeout",  "20",
                                    "--shuffle-block", "8",
                                    "--shuffle-pool",  "2",
                                    "--checkpoint",    d + "/" + name + ".pt",
                                    "--json",          d + "/" + name + ".json"};
  };
  std::string out;
  // A sharded folder is streamed without --stream.
  REQUIRE_MESSAGE(run_moca(args("one"), out) == 0, out);
  CHECK(out.find("streamed from disk: 2 shards") != std::string::npos);
  REQUIRE_MESSAGE(run_moca(launch(2, args("two")), out) == 0, out);
  const double rel = max_relative_difference(d + "/two.pt", d + "/one.pt");
  MESSAGE("streamed, 2 ranks vs 1 rank: max relative parameter difference " << rel);
  CHECK(rel < 1e-5);
  const auto one = nlohmann::json::parse(slurp(d + "/one.json"));
  const auto two = nlohmann::json::parse(slurp(d + "/two.json"));
  // 2 epochs of 4 batches of 16: one rank reads all 128, rank 0 of two its 8 a batch.
  CHECK(one.at("windows_read") == 128);
  CHECK(two.at("windows_read") == 64);
  CHECK(two.at("bytes_read") == 64 * w.channels * w.length * 4);
  CHECK(one.at("storage").get<std::string>().find("2 shards") != std::string::npos);
  std::filesystem::remove_all(d);
}

TEST_CASE("a rank killed or hung mid-epoch ends the other with an error naming it") {
  // SIGKILL: the connection closes and rank 0 fails at once; SIGSTOP (a hung rank): rank 0's
  // all-reduce times out after --dist-timeout. Either way exit 1, no checkpoint, no temporary.
  for (const int sig : {SIGKILL, SIGSTOP}) {
    CAPTURE(sig);
    const std::string d = tmp_dir("kill");
    const int port = free_port();
    const double timeout = 4.0;
    auto args = pretrain_args(
        d + "/k.pt",
        {{"--epochs", "400"}, {"--checkpoint-every", "1000"}, {"--dist-timeout", "4"}});
    auto env = [&](int r) {
      return std::map<std::string, std::string>{{"RANK", std::to_string(r)},
                                                {"WORLD_SIZE", "2"},
                                                {"MASTER_ADDR", "127.0.0.1"},
                                                {"MASTER_PORT", std::to_string(port)}};
    };
    const pid_t r0 = spawn(args, env(0), d + "/rank0.txt");
    const pid_t r1 = spawn(args, env(1), d + "/rank1.txt");
    // The first epoch's metrics mean training is under way: then stop rank 1.
    REQUIRE(appears(d + "/k.pt.metrics.jsonl"));
    ::kill(r1, sig);
    const auto t_kill = std::chrono::steady_clock::now();
    const int code = wait_for(r0);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_kill).count();
    if (sig == SIGSTOP) ::kill(r1, SIGKILL);
    CHECK(wait_for(r1) == 128 + SIGKILL);
    const std::string text = slurp(d + "/rank0.txt");
    CAPTURE(text);
    MESSAGE("rank 0 exited " << waited << " s after rank 1 got signal " << sig);
    CHECK(code == 1);
    CHECK(waited < timeout + 10.0);
    if (sig == SIGSTOP) CHECK(waited > timeout - 1.0);  // it did wait for the hung rank
    CHECK(text.find("rank 0/2: all-reduce of the gradients at iteration") != std::string::npos);
    CHECK(text.find("rank 1 died or stopped responding") != std::string::npos);
    for (const auto& e : fs::directory_iterator(d)) {
      CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
    }
    CHECK_FALSE(fs::exists(d + "/k.pt"));
    fs::remove_all(d);
  }
}

TEST_CASE("finetune on 2 ranks follows 1 rank; linprobe runs its folds on 2 ranks") {
  const std::string d = tmp_dir("classify");
  std::string out;
  REQUIRE_MESSAGE(run_moca(pretrain_args(d + "/pt.pt", {{"--stop-after", "3"}}), out) == 0, out);
  auto classify = [&](const std::string& mode, const std::string& json,
                      const std::vector<std::string>& extra) {
    std::vector<std::string> a{mode,         "--synthetic-windows",
                               "60",         "--checkpoint",
                               d + "/pt.pt", "--epochs",
                               "2",          "--warmup-epochs",
                               "1",          "--batch",
                               "16",         "--threads",
                               "1",          "--seed",
                               "3",          "--no-progress",
                               "--json",     json};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  // Without drop path (whose draws are per rank) fine-tuning is deterministic given the batches.
  const std::vector<std::string> ft{"--drop-path", "0", "--protocol", "random"};
  REQUIRE_MESSAGE(run_moca(classify("finetune", d + "/f1.json", ft), out) == 0, out);
  REQUIRE_MESSAGE(run_moca(launch(2, classify("finetune", d + "/f2.json", ft)), out) == 0, out);
  const auto f1 = nlohmann::json::parse(slurp(d + "/f1.json"));
  const auto f2 = nlohmann::json::parse(slurp(d + "/f2.json"));
  const auto& h1 = f1.at("folds")[0].at("history");
  const auto& h2 = f2.at("folds")[0].at("history");
  REQUIRE(h1.size() == 2);
  REQUIRE(h2.size() == 2);
  for (size_t e = 0; e < 2; ++e) {
    CHECK(h2[e].at("loss").get<double>() ==
          doctest::Approx(h1[e].at("loss").get<double>()).epsilon(1e-6));
  }
  CHECK(f2.at("folds")[0].at("metrics") == f1.at("folds")[0].at("metrics"));
  // The linear probe (BatchNorm per rank) on 2 ranks: 5 folds over one rendezvous, rank 0 alone
  // prints the summary.
  REQUIRE_MESSAGE(
      run_moca(launch(2, classify("linprobe", d + "/l2.json", {"--protocol", "subject-kfold"})),
               out) == 0,
      out);
  CHECK(nlohmann::json::parse(slurp(d + "/l2.json")).at("folds").size() == 5);
  size_t summaries = 0;
  for (size_t at = out.find("linprobe (subject-kfold, 5 splits"); at != std::string::npos;
       at = out.find("linprobe (subject-kfold, 5 splits", at + 1)) {
    ++summaries;
  }
  CHECK(summaries == 1);
  fs::remove_all(d);
}

TEST_CASE("SIGTERM to moca launch stops every rank at the same iteration with a checkpoint") {
  const std::string d = tmp_dir("term");
  const auto args =
      launch(2, pretrain_args(d + "/t.pt", {{"--epochs", "400"}, {"--checkpoint-every", "1000"}}));
  const pid_t launcher = spawn(args, {}, d + "/out.txt");
  REQUIRE(appears(d + "/t.pt.metrics.jsonl"));
  ::kill(launcher, SIGTERM);
  const int code = wait_for(launcher);
  const std::string text = slurp(d + "/out.txt");
  CAPTURE(text);
  CHECK(code == 0);
  CHECK(text.find("interrupted") != std::string::npos);
  CHECK(text.find("every rank exited cleanly") != std::string::npos);
  const auto meta = meta_of(d + "/t.pt");
  CHECK(meta.at("finished") == false);
  CHECK(meta.at("iteration").get<long>() >= 3);
  CHECK(meta.at("iteration").get<long>() < 1200);
  fs::remove_all(d);
}

TEST_CASE("start-up errors: batch not divisible, options differ between ranks, port in use") {
  const std::string d = tmp_dir("errors");
  std::string out;
  // --batch 15 on 2 ranks: both ranks refuse before the first step; the launcher exits 2.
  CHECK(run_moca(launch(2, pretrain_args(d + "/a.pt", {{"--batch", "15"}})), out) == 2);
  CHECK(out.find("(--batch = 15) must be a multiple of the world size (2 ranks)") !=
        std::string::npos);
  CHECK(out.find("moca launch: rank 0 (pid") != std::string::npos);

  // Different --lr on the two ranks: the options hash check stops both.
  const int port = free_port();
  auto env = [&](int r) {
    return std::map<std::string, std::string>{
        {"RANK", std::to_string(r)}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", std::to_string(port)}};
  };
  const pid_t a = spawn(pretrain_args(d + "/b.pt"), env(0), d + "/b0.txt");
  const pid_t b = spawn(pretrain_args(d + "/b.pt", {{"--lr", "1e-3"}}), env(1), d + "/b1.txt");
  CHECK(wait_for(a) == 2);
  CHECK(wait_for(b) == 2);
  CHECK(slurp(d + "/b0.txt").find("rank 1's options hash") != std::string::npos);
  CHECK(slurp(d + "/b1.txt").find("differ from rank 0's") != std::string::npos);
  CHECK_FALSE(fs::exists(d + "/b.pt"));

  // The rendezvous port is taken: rank 0 says so (rank 1 gives up after --dist-timeout).
  int taken = 0;
  const int fd = bound_socket(taken, true);
  const std::string busy = std::to_string(taken);
  const auto args = pretrain_args(d + "/c.pt", {{"--dist-timeout", "3"}});
  // (Rank 1 reaches the foreign listener and waits for a store's answer: the launcher ends it
  // --kill-after seconds after rank 0's failure.)
  std::vector<std::string> cmd{"launch", "--nproc",      "2", "--master-port",
                               busy,     "--kill-after", "2", "--"};
  cmd.insert(cmd.end(), args.begin(), args.end());
  CHECK(run_moca(cmd, out) == 1);
  CHECK(out.find("MASTER_PORT " + busy + " is in use") != std::string::npos);
  CHECK(out.find("moca launch: rank 0 (pid") != std::string::npos);
  ::close(fd);
  fs::remove_all(d);
}
