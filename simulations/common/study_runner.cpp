#include "study_runner.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "moca/common/output_file.hpp"
#include "run_cli.hpp"
#include "study_data.hpp"

namespace moca::sim {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> read_ledger(const std::string& path) {
  std::vector<json> records;
  std::ifstream in(path);
  if (!in) return records;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    try {
      records.push_back(json::parse(line));
    } catch (const json::exception& e) {
      throw std::runtime_error("ledger " + path + " line " + std::to_string(n) +
                               " is not valid JSON: " + e.what());
    }
    if (!records.back().is_object() || !records.back().contains("kind")) {
      throw std::runtime_error("ledger " + path + " line " + std::to_string(n) +
                               " is not a record (an object with \"kind\")");
    }
  }
  return records;
}

Ledger::Ledger(std::string path) : path_(std::move(path)), records_(read_ledger(path_)) {}

void Ledger::append(const json& record) {
  records_.push_back(record);
  std::string text;
  for (const json& r : records_) text += r.dump() + "\n";
  write_output_text(path_, text);
}

bool Ledger::has(const std::string& kind, const std::string& key) const {
  return find(kind, key) != nullptr;
}

const json* Ledger::find(const std::string& kind, const std::string& key) const {
  for (const json& r : records_) {
    if (r.at("kind") == kind && r.value("key", "") == key) return &r;
  }
  return nullptr;
}

bool open_study_record(Ledger& ledger, const json& study) {
  if (ledger.records().empty()) {
    ledger.append(study);
    return false;
  }
  const json& first = ledger.records().front();
  if (first.at("kind") != "study" || first.value("settings", json()) != study.at("settings")) {
    throw std::runtime_error(fs::path(ledger.path()).parent_path().string() +
                             " holds a study with different settings (" +
                             fs::path(ledger.path()).filename().string() +
                             " line 1); use another --out or the same options");
  }
  return true;
}

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

std::string self_executable() {
  return fs::read_symlink("/proc/self/exe").string();
}

namespace {

/// Forks and execs `exe args...` with stdout and stderr in `log_path`; the child dies with this
/// process.
pid_t start_child(const std::string& exe, const WorkerJob& job) {
  std::vector<std::string> args = job.args;
  args.insert(args.begin(), exe);
  fs::create_directories(fs::path(job.log_path).parent_path());
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    const int fd = open(job.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

std::string status_text(int status) {
  return WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                           : "signal " + std::to_string(WTERMSIG(status));
}

}  // namespace

int run_worker_jobs(const std::string& exe, const std::vector<WorkerJob>& jobs, int parallel,
                    int max_new, const std::function<void(const WorkerJob&)>& on_success,
                    const std::string& who, std::ostream& log) {
  std::map<pid_t, size_t> running;
  size_t next = 0;
  int started = 0, succeeded = 0;
  std::string failure;
  while (true) {
    while (failure.empty() && next < jobs.size() &&
           static_cast<int>(running.size()) < std::max(1, parallel) &&
           (max_new < 0 || started < max_new)) {
      const WorkerJob& job = jobs[next];
      const pid_t pid = start_child(exe, job);
      running[pid] = next++;
      ++started;
      log << who << ": started " << job.key << " (" << job.threads << " thread"
          << (job.threads == 1 ? "" : "s") << ", pid " << pid << ")\n";
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const WorkerJob& job = jobs[it->second];
    running.erase(it);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      on_success(job);
      ++succeeded;
    } else if (failure.empty()) {
      failure = job.key + " failed (" + status_text(status) + "); its log: " + job.log_path;
    }
  }
  if (!failure.empty()) throw std::runtime_error(failure);
  return succeeded;
}

std::string Shard::ledger_name() const {
  return sharded()
             ? "ledger.shard-" + std::to_string(index) + "-of-" + std::to_string(count) + ".jsonl"
             : "ledger.jsonl";
}

std::string Shard::to_string() const {
  return std::to_string(index) + "/" + std::to_string(count);
}

namespace {

/// A whole non-negative decimal number, or -1.
long parse_count(const std::string& s) {
  if (s.empty() || s.size() > 9 ||
      !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stol(s);
}

}  // namespace

Shard parse_shard(const std::string& text_in, const std::string& flag) {
  std::string text = text_in;
  std::string origin = flag;
  if (text.empty()) {
    const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
    const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
    if (!id || !count) return Shard{};
    const char* min = std::getenv("SLURM_ARRAY_TASK_MIN");
    const long base = min ? parse_count(min) : 0;
    const long k = parse_count(id);
    if (k < 0 || base < 0) {
      throw std::invalid_argument(flag + ": SLURM_ARRAY_TASK_ID (" + std::string(id) +
                                  ") must be a whole number (or pass " + flag + " K/N)");
    }
    text = std::to_string(k - base + 1) + "/" + count;
    origin = "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT (" + std::string(id) + ", " + count +
             ") as " + flag;
  }
  const auto slash = text.find('/');
  const long k = slash == std::string::npos ? -1 : parse_count(text.substr(0, slash));
  const long n = slash == std::string::npos ? -1 : parse_count(text.substr(slash + 1));
  if (k < 1 || n < 1 || k > n) {
    throw std::invalid_argument(origin + " (" + text + ") must be K/N with 1 <= K <= N");
  }
  Shard s;
  s.index = static_cast<int>(k);
  s.count = static_cast<int>(n);
  return s;
}

std::vector<std::string> study_ledger_files(const std::string& dir) {
  std::vector<std::string> files;
  if (fs::exists(dir + "/ledger.jsonl")) files.push_back(dir + "/ledger.jsonl");
  if (!fs::is_directory(dir)) return files;
  static const std::regex shard(R"(ledger\.shard-[0-9]+-of-[0-9]+\.jsonl)");
  std::vector<std::string> shards;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, shard)) shards.push_back(e.path().string());
  }
  std::sort(shards.begin(), shards.end());
  files.insert(files.end(), shards.begin(), shards.end());
  return files;
}

std::vector<json> read_study_ledgers(const std::string& dir, const std::string& who) {
  const std::string what = who.empty() ? std::string() : who + ": ";
  const std::vector<std::string> files = study_ledger_files(dir);
  if (files.empty()) {
    throw std::runtime_error(what + dir +
                             " holds no ledger (ledger.jsonl or ledger.shard-K-of-N.jsonl)");
  }
  std::vector<json> merged;
  std::set<std::pair<std::string, std::string>> seen;
  for (const std::string& f : files) {
    const std::vector<json> records = read_ledger(f);
    if (records.empty()) continue;
    if (records.front().at("kind") != "study") {
      throw std::runtime_error(what + f + " line 1 is not a study record");
    }
    if (merged.empty()) {
      merged.push_back(records.front());
    } else if (records.front().value("settings", json()) !=
               merged.front().value("settings", json())) {
      throw std::runtime_error(what + f + " holds a study with other settings than " +
                               files.front() + "; one folder holds one study");
    }
    for (size_t i = 1; i < records.size(); ++i) {
      const json& r = records[i];
      if (seen.insert({r.at("kind").get<std::string>(), r.value("key", "")}).second)
        merged.push_back(r);
    }
  }
  if (merged.empty()) throw std::runtime_error(what + "the ledgers of " + dir + " are empty");
  return merged;
}

int recorded_units(const std::vector<json>& records) {
  int n = 0;
  for (const json& r : records) n += r.value("kind", "") == "unit" ? 1 : 0;
  return n;
}

int threads_per_job(int threads, int jobs) {
  return std::max(1, (threads > 0 ? threads : hardware_threads()) / std::max(1, jobs));
}

StudyRun::StudyRun(const std::string& out, const Shard& shard, const json& study,
                   const std::string& who, std::ostream& log,
                   const std::function<void(const json&, const std::string&)>& check_resume)
    : out_(out), shard_(shard), who_(who), log_(log) {
  fs::create_directories(out);
  const std::string path = out + "/" + shard.ledger_name();
  lock_ = std::make_unique<FileLock>(lock_path_for_file(path), "ledger " + path);
  ledger_ = std::make_unique<Ledger>(path);
  json record = study;
  tools::record_program_options(record);
  if (open_study_record(*ledger_, record)) {
    if (check_resume) check_resume(ledger_->records().front(), path);
    log << who << ": resuming " << path << " (" << recorded_units(ledger_->records())
        << " units done)\n";
  }
}

StudyRun::~StudyRun() = default;

WorkerJob StudyRun::worker_job(const std::string& key, const std::string& unit_dir,
                               int threads) const {
  WorkerJob j;
  j.key = key;
  j.threads = threads;
  j.args = {"--out",         out_, "--shard",          shard_.to_string(),
            "--worker-unit", key,  "--worker-threads", std::to_string(threads)};
  j.log_path = unit_dir + "/worker.log";
  return j;
}

void StudyRun::record_unit(const std::string& key, const std::string& unit_dir) {
  json r = read_json_file(unit_dir + "/result.json");
  r["kind"] = "unit";
  r["result"] = fs::relative(unit_dir + "/result.json", out_).string();
  ledger_->append(r);
  log_ << who_ << ": " << key << " recorded\n";
}

bool StudyRun::finish(int mine) {
  const int done = recorded_units(ledger_->records());
  if (done < mine) {
    log_ << who_ << ": " << done << " of " << mine
         << " units done; stopped; run the same command again to resume\n";
  }
  if (shard_.sharded()) {
    log_ << who_ << ": shard " << shard_.to_string() << " (" << ledger_->path() << "): " << done
         << " of " << mine << " units; " << who_ << " --out " << out_
         << " --report merges the shards' ledgers\n";
    return false;
  }
  return true;
}

}  // namespace moca::sim
