#pragma once
/// \file study_runner.hpp
/// What the resumable studies (policy_study, transfer_study) share: a ledger of JSON records,
/// worker processes started from the study's own program, and the share of units one process of
/// a SLURM job array takes.
///
/// **Ledger.** One JSON object per line, each with a "kind" (and usually a "key"); the first
/// record is the study's ("kind": "study", its settings). Every append rewrites the file
/// atomically, so a killed study leaves a whole ledger and resumes by skipping what it holds.
///
/// **Workers.** A unit of work runs as a child process (this program, /proc/self/exe, with the
/// unit's arguments), its output in a log file; it dies with the study (PR_SET_PDEATHSIG), so a
/// killed study leaves no orphan training.
///
/// **Shards.** `--shard K/N` (1 <= K <= N; default from SLURM_ARRAY_TASK_ID and
/// SLURM_ARRAY_TASK_COUNT, else 1/1) takes the units whose position i in the study's fixed unit
/// order has i % N == K - 1, and writes `ledger.shard-K-of-N.jsonl` beside the others in the
/// shared output folder; a report reads every ledger of the folder (read_study_ledgers).
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace moca::sim {

/// Reads a ledger (one JSON object per line, each with "kind"); an absent file is an empty
/// ledger. std::runtime_error naming the file and line if a line is malformed.
std::vector<nlohmann::json> read_ledger(const std::string& path);

/// A ledger in memory; every append rewrites the file atomically.
class Ledger {
 public:
  explicit Ledger(std::string path);
  const std::string& path() const { return path_; }
  const std::vector<nlohmann::json>& records() const { return records_; }
  void append(const nlohmann::json& record);
  /// Whether a record of `kind` with "key" `key` is there.
  bool has(const std::string& kind, const std::string& key) const;
  /// That record, or nullptr.
  const nlohmann::json* find(const std::string& kind, const std::string& key) const;

 private:
  std::string path_;
  std::vector<nlohmann::json> records_;
};

/// Starts the ledger with `study` (a "study" record) or checks that the one there has the same
/// "settings": std::runtime_error "<folder> holds a study with different settings" otherwise.
/// Returns whether it was resumed.
bool open_study_record(Ledger& ledger, const nlohmann::json& study);

/// std::thread::hardware_concurrency(), at least 1.
int hardware_threads();

/// One unit of work run as a worker process.
struct WorkerJob {
  std::string key;                ///< the unit's key (log lines and failures name it)
  std::vector<std::string> args;  ///< the program's arguments (without the program)
  std::string log_path;           ///< the worker's stdout and stderr
  int threads = 1;                ///< for the log line
};

/// Runs `jobs` in order as worker processes of `exe`, at most `parallel` at once, and calls
/// `on_success(job)` in this process after each one that exits with status 0. Stops starting
/// jobs after `max_new` have been started (-1: no limit). When a worker fails, no further job
/// starts, the running ones finish (and are recorded), then std::runtime_error names the unit,
/// its exit status and its log. `who` starts the log lines. Returns the number of jobs that
/// succeeded.
int run_worker_jobs(const std::string& exe, const std::vector<WorkerJob>& jobs, int parallel,
                    int max_new, const std::function<void(const WorkerJob&)>& on_success,
                    const std::string& who, std::ostream& log);

/// The program itself (/proc/self/exe), for run_worker_jobs.
std::string self_executable();

/// A fixed share of a study's units (see the file comment).
struct Shard {
  int index = 1;  ///< K, 1-based
  int count = 1;  ///< N
  bool sharded() const { return count > 1; }
  /// Whether the unit at position `i` of the study's order belongs to this shard.
  bool owns(std::size_t i) const {
    return static_cast<int>(i % static_cast<std::size_t>(count)) == index - 1;
  }
  /// "ledger.jsonl" (1/1) or "ledger.shard-K-of-N.jsonl".
  std::string ledger_name() const;
  std::string to_string() const;  ///< "K/N"
};

/// Parses `K/N` for the flag `flag`; an empty text takes SLURM_ARRAY_TASK_ID (K = id + 1 when the
/// array starts at 0, i.e. SLURM_ARRAY_TASK_MIN is 0 or unset) and SLURM_ARRAY_TASK_COUNT, else
/// 1/1. std::invalid_argument "<flag> (<text>) must be K/N with 1 <= K <= N" otherwise.
Shard parse_shard(const std::string& text, const std::string& flag);

/// The ledgers of a study folder: ledger.jsonl and every ledger.shard-K-of-N.jsonl, sorted.
std::vector<std::string> study_ledger_files(const std::string& dir);

/// Every ledger of `dir` merged: one study record (all must have the same settings:
/// std::runtime_error naming the file otherwise), then the other records, the first record of
/// each (kind, key) kept. std::runtime_error when the folder holds no ledger. `who` (e.g.
/// "--report"; may be empty) starts the messages.
std::vector<nlohmann::json> read_study_ledgers(const std::string& dir, const std::string& who);

}  // namespace moca::sim
