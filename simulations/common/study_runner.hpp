#pragma once
/// \file study_runner.hpp
/// What the resumable studies (policy_study, transfer_study, margin_study) share: a ledger of JSON
/// records, worker processes started from the study's own program, and the share of units one
/// process of a SLURM job array takes.
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
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/file_lock.hpp"
#include "moca/common/option_schema.hpp"

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

/// The "unit" records of a ledger: how many units a study has recorded.
int recorded_units(const std::vector<nlohmann::json>& records);

/// Threads each of `jobs` workers gets: max(1, T / jobs), T = `threads`, or the cores when 0.
int threads_per_job(int threads, int jobs);

/// The flags every unit-based study (transfer_study, margin_study) takes for its runs, declared
/// once: the studies' option structs hold one and call its schema with their own owner name.
struct StudyRunOptions {
  int jobs = 1;         ///< units at once (worker processes)
  int threads = 0;      ///< threads in all; each job gets threads_per_job(); 0 = cores
  bool report = false;  ///< only rebuild the report from the ledgers
  int max_units = -1;   ///< stop after this many new units (-1 = no limit)
  std::string shard;    ///< K/N (above); "" = SLURM's array, else 1/1

  template <class O, class V>
  static void schema(const char* owner, O& o, V&& v) {
    v(o.jobs, Option{owner, "jobs", "--jobs", "units at once (threads are split between them)",
                     Range::at_least(1)});
    v(o.threads,
      Option{owner, "threads", "--threads", "threads in all (0 = cores)", Range::at_least(0)});
    v(o.max_units, Option{owner, "max_units", "--max-units",
                          "stop after this many new units (run again to resume; -1 = all)",
                          Range::at_least(-1)});
    v(o.shard, Option{owner, "shard", "--shard",
                      "K/N: run this share of the units (1 <= K <= N; default: SLURM's job "
                      "array, else 1/1) into ledger.shard-K-of-N.jsonl; --report merges the "
                      "shards"});
    v(o.report, Option{owner, "report", "--report", "only rebuild the report from the ledgers"});
  }
};

/// One run of a unit-based study (one shard's): the output folder created, the shard's ledger
/// locked for the run (FileLock: a second process on the same ledger is refused), then the
/// study record written (with the program's options), or on resume checked: the same settings
/// (open_study_record), then `check_resume(recorded study record, ledger path)`, which throws
/// when what the units ran on has changed.
class StudyRun {
 public:
  StudyRun(const std::string& out, const Shard& shard, const nlohmann::json& study,
           const std::string& who, std::ostream& log,
           const std::function<void(const nlohmann::json&, const std::string&)>& check_resume = {});
  ~StudyRun();
  StudyRun(const StudyRun&) = delete;
  StudyRun& operator=(const StudyRun&) = delete;

  Ledger& ledger() { return *ledger_; }
  const Shard& shard() const { return shard_; }

  /// The worker job of unit `key`: this program with --out, --shard, --worker-unit KEY and
  /// --worker-threads `threads`; its log is `unit_dir`/worker.log.
  WorkerJob worker_job(const std::string& key, const std::string& unit_dir, int threads) const;

  /// Appends `unit_dir`/result.json as a "unit" record ("result": its path relative to the
  /// output folder) and logs "<who>: <key> recorded".
  void record_unit(const std::string& key, const std::string& unit_dir);

  /// After the units ran: logs how far this shard got (`mine` units are its share) and how to
  /// go on; returns whether the report is to be built now (an unsharded run).
  bool finish(int mine);

 private:
  std::string out_;
  Shard shard_;
  std::string who_;
  std::ostream& log_;
  std::unique_ptr<FileLock> lock_;
  std::unique_ptr<Ledger> ledger_;
};

}  // namespace moca::sim
