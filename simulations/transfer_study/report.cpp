// transfer_study's report: the paper's Table 2 layout (model x setting rows, data-set columns,
// each model's average over data sets) for top-1, macro-F1 and balanced accuracy, and one
// boxplot per setting of the per-data-set top-1 accuracies; built from the ledgers alone.
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include "moca/common/gnuplot.hpp"
#include "moca/common/output_file.hpp"
#include "study_data.hpp"
#include "study_runner.hpp"
#include "transfer_study.hpp"

namespace moca::sim {

using nlohmann::json;

namespace {

struct Metric {
  const char* key;    ///< in FoldScores::summary_json
  const char* title;  ///< in report.md
};
constexpr Metric kMetrics[] = {{"accuracy", "Top-1 accuracy"},
                               {"macro_f1", "Macro-F1"},
                               {"balanced_accuracy", "Balanced accuracy"}};

/// A table row: a model in a setting.
struct Row {
  std::string model, setting;
  std::string label() const {
    return setting == "supervised" ? model + " (supervised)" : model + " " + setting;
  }
};

std::vector<Row> table_rows(const TransferStudyOptions& o) {
  std::vector<Row> rows;
  for (const std::string& s : o.settings)
    for (const auto& m : o.models) rows.push_back({m.first, s});
  if (o.scratch) rows.push_back({"scratch", "supervised"});
  if (o.control && !o.models.empty()) rows.push_back({o.models[0].first, "lp-shuffled"});
  return rows;
}

std::string percent(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << 100 * v;
  return s.str();
}

/// "mean ± sd" in percent (sd over folds), or "—" for a unit not yet done.
std::string cell_text(const json* summary) {
  if (!summary) return "—";
  const double mean = summary->at("mean"), sd = summary->at("sd");
  return percent(mean) + (summary->at("n").get<int>() > 1 ? " ± " + percent(sd) : "");
}

/// The study's ledgers and what the report is built from.
struct Ledgers {
  std::vector<json> records;
  TransferStudyOptions o;
  std::map<std::string, const json*> units;  ///< finished units by key
  std::vector<Row> rows;

  explicit Ledgers(const std::string& dir) : records(read_study_ledgers(dir, "--report")) {
    o.set_settings(records.front().at("settings"));
    for (const json& r : records)
      if (r.at("kind") == "unit") units[r.at("key")] = &r;
    rows = table_rows(o);
  }
  /// The unit of `row` on data set `data`, or nullptr when it has not run.
  const json* unit(const Row& row, const std::string& data) const {
    const auto it = units.find(row.model + "/" + data + "/" + row.setting);
    return it == units.end() ? nullptr : it->second;
  }
  size_t total() const { return transfer_units(o).size(); }

  /// Every unit: its summary, protocol, folds and wall time (null when not run).
  json unit_table() const {
    json table = json::object();
    for (const TransferUnit& u : transfer_units(o)) {
      const auto it = units.find(u.key());
      table[u.key()] = it == units.end() ? json(nullptr)
                                         : json{{"summary", it->second->at("summary")},
                                                {"protocol", it->second->at("protocol")},
                                                {"folds", it->second->at("folds").size()},
                                                {"seconds", it->second->at("seconds")}};
    }
    return table;
  }

  /// One metric's table (rows x data sets, each row's average) as JSON, its markdown to `md`.
  json metric_table(const Metric& m, std::ostream& md) const {
    md << "\n## " << m.title << "\n\n| model | setting |";
    for (const auto& d : o.data) md << " " << d.name << " |";
    md << " avg |\n|---|---|";
    for (size_t i = 0; i <= o.data.size(); ++i) md << "---|";
    md << "\n";
    json table = json::array();
    for (const Row& row : rows) {
      json cells = json::object();
      double sum = 0;
      int n = 0;
      md << "| " << row.model << " | " << row.setting << " |";
      for (const auto& d : o.data) {
        const json* u = unit(row, d.name);
        const json* summary = u ? &u->at("summary").at(m.key) : nullptr;
        md << " " << cell_text(summary) << " |";
        cells[d.name] = summary ? *summary : json(nullptr);
        if (summary) {
          sum += summary->at("mean").get<double>();
          ++n;
        }
      }
      const double avg = n > 0 ? sum / n : 0.0;
      md << " " << (n > 0 ? percent(avg) : "—") << " |\n";
      table.push_back({{"model", row.model},
                       {"setting", row.setting},
                       {"cells", cells},
                       {"average", n > 0 ? json(avg) : json(nullptr)},
                       {"data_sets", n}});
    }
    return table;
  }

  /// The rows drawn in setting `s`'s boxplot: its rows and the baseline, those with a unit done.
  std::vector<Row> boxplot_columns(const std::string& s) const {
    std::vector<Row> cols;
    for (const Row& r : rows) {
      if (r.setting != s && r.setting != "supervised") continue;
      for (const auto& d : o.data) {
        if (unit(r, d.name)) {
          cols.push_back(r);
          break;
        }
      }
    }
    return cols;
  }

  /// Writes figures/boxplot_<s>.{dat,gp} and, when `draw`, the PNG; false when nothing to draw.
  bool write_boxplot(const std::string& s, const std::string& base, bool draw) const {
    const std::vector<Row> cols = boxplot_columns(s);
    if (cols.empty()) return false;
    std::ostringstream dat;
    dat << "# data set";
    for (const Row& c : cols) dat << " \"" << c.label() << "\"";
    dat << "\n";
    for (const auto& d : o.data) {
      dat << d.name;
      for (const Row& c : cols) {
        const json* u = unit(c, d.name);
        dat << " "
            << (u ? percent(u->at("summary").at("accuracy").at("mean").get<double>())
                  : std::string("NaN"));
      }
      dat << "\n";
    }
    write_output_text(base + ".dat", dat.str());
    std::ostringstream gp;
    gp << "set terminal pngcairo size 900,500\nset output " << gnuplot_quoted(base + ".png.tmp")
       << "\nset title 'Top-1 accuracy over data sets (" << s
       << ")' noenhanced\nset ylabel 'top-1 (%)'\nset style data boxplot\nset style boxplot "
          "nooutliers\nset style fill solid 0.3\nset key off\nset grid ytics\nset "
          "xtics (";
    for (size_t i = 0; i < cols.size(); ++i)
      gp << (i ? ", " : "") << "'" << cols[i].label() << "' " << i + 1;
    gp << ") noenhanced\nset xrange [0.5:" << cols.size() + 0.5
       << "]\nset boxwidth 0.5\n"
       // gnuplot draws a box from 4 values on; every data set's value is drawn as a point too
       << "plot for [i=1:" << cols.size() << "] " << gnuplot_quoted(base + ".dat")
       << " using (i):(column(i+1)) with boxplot notitle, for [i=1:" << cols.size() << "] "
       << gnuplot_quoted(base + ".dat")
       << " using (i):(column(i+1)) with points pt 7 lc rgb 'black' notitle\n";
    write_output_text(base + ".gp", gp.str());
    if (draw)
      run_gnuplot(base + ".gp", base + ".png.tmp", base + ".png", "transfer_study --report");
    return draw;
  }
};

/// report.md's head: what the cells are, and the data sets.
void markdown_head(const Ledgers& L, const json& data, std::ostream& md) {
  md << "# transfer_study report\n\nBuilt from the ledgers of this folder alone (" << L.units.size()
     << " of " << L.total()
     << " units done). Each cell: mean ± sd over the data set's folds, in %. `avg`: the "
        "row's mean over the data sets it has. `lp-shuffled`: the first model's linear probe "
        "with training labels permuted (the no-signal control).\n\n";
  md << "| data set | protocol | windows | classes | subjects |\n|---|---|---|---|---|\n";
  for (const json& d : data) {
    md << "| " << d.value("name", "") << " | " << d.value("protocol", "") << " | "
       << d.value("windows", 0) << " | " << d.value("class_names", json::array()).size() << " | "
       << d.value("subjects", 0) << " |\n";
  }
}

/// The top-1 table on stdout.
void print_top1(const TransferStudyOptions& o, const json& table, std::ostream& out) {
  out << std::left << std::setw(24) << "top-1 (%)";
  for (const auto& d : o.data) out << std::setw(18) << d.name;
  out << "avg\n";
  for (const json& row : table) {
    out << std::setw(24)
        << (row["model"].get<std::string>() + " " + row["setting"].get<std::string>());
    for (const auto& d : o.data)
      out << std::setw(18)
          << cell_text(row["cells"][d.name].is_null() ? nullptr : &row["cells"][d.name]);
    out << (row["average"].is_null() ? "—" : percent(row["average"].get<double>())) << "\n";
  }
}

}  // namespace

json build_transfer_report(const std::string& dir, std::ostream& out, std::ostream& log, bool png) {
  const Ledgers L(dir);
  json report;
  report["settings"] = L.o.settings_json();
  // the options of the run that started the study (its flags, as --print-config writes them)
  if (L.records.front().contains("options")) report["options"] = L.records.front().at("options");
  report["data"] = L.records.front().value("data", json::array());
  report["units"] = L.unit_table();
  report["units_done"] = L.units.size();
  report["units_total"] = L.total();
  std::ostringstream md;
  markdown_head(L, report["data"], md);
  for (const Metric& m : kMetrics) report["tables"][m.key] = L.metric_table(m, md);

  std::filesystem::create_directories(dir + "/figures");
  json figures = json::array();
  const bool draw = png && gnuplot_available();
  for (const std::string& s : L.o.settings) {
    if (!L.write_boxplot(s, dir + "/figures/boxplot_" + s, draw)) continue;
    figures.push_back("figures/boxplot_" + s + ".png");
    md << "\n![top-1 over data sets, " << s << "](figures/boxplot_" << s << ".png)\n";
  }
  if (png && !draw) log << "transfer_study: gnuplot not found; wrote .dat/.gp files only\n";
  report["figures"] = figures;
  write_json(dir + "/report.json", report);
  write_output_text(dir + "/report.md", md.str());
  print_top1(L.o, report["tables"]["accuracy"], out);
  out << "transfer_study: report " << dir << "/report.md (" << L.units.size() << " of " << L.total()
      << " units)\n";
  return report;
}

}  // namespace moca::sim
