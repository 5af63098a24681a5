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

}  // namespace

json build_transfer_report(const std::string& dir, std::ostream& out, std::ostream& log, bool png) {
  const std::vector<json> records = read_study_ledgers(dir, "--report");
  TransferStudyOptions o;
  o.set_settings(records.front().at("settings"));
  std::map<std::string, const json*> units;
  for (const json& r : records)
    if (r.at("kind") == "unit") units[r.at("key")] = &r;

  const std::vector<Row> rows = table_rows(o);
  json report;
  report["settings"] = o.settings_json();
  // the options of the run that started the study (its flags, as --print-config writes them)
  if (records.front().contains("options")) report["options"] = records.front().at("options");
  report["data"] = records.front().value("data", json::array());
  json unit_table = json::object();
  for (const TransferUnit& u : transfer_units(o)) {
    const auto it = units.find(u.key());
    unit_table[u.key()] = it == units.end() ? json(nullptr)
                                            : json{{"summary", it->second->at("summary")},
                                                   {"protocol", it->second->at("protocol")},
                                                   {"folds", it->second->at("folds").size()},
                                                   {"seconds", it->second->at("seconds")}};
  }
  report["units"] = unit_table;
  report["units_done"] = units.size();
  report["units_total"] = transfer_units(o).size();

  std::ostringstream md;
  md << "# transfer_study report\n\nBuilt from the ledgers of this folder alone (" << units.size()
     << " of " << transfer_units(o).size()
     << " units done). Each cell: mean ± sd over the data set's folds, in %. `avg`: the "
        "row's mean over the data sets it has. `lp-shuffled`: the first model's linear probe "
        "with training labels permuted (the no-signal control).\n\n";
  md << "| data set | protocol | windows | classes | subjects |\n|---|---|---|---|---|\n";
  for (const json& d : report["data"]) {
    md << "| " << d.value("name", "") << " | " << d.value("protocol", "") << " | "
       << d.value("windows", 0) << " | " << d.value("class_names", json::array()).size() << " | "
       << d.value("subjects", 0) << " |\n";
  }
  json tables = json::object();
  for (const Metric& m : kMetrics) {
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
        const auto it = units.find(row.model + "/" + d.name + "/" + row.setting);
        const json* summary = it == units.end() ? nullptr : &it->second->at("summary").at(m.key);
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
    tables[m.key] = table;
  }
  report["tables"] = tables;

  // One boxplot per setting: per model, its top-1 means over the data sets.
  namespace fs = std::filesystem;
  const std::string fig_dir = dir + "/figures";
  fs::create_directories(fig_dir);
  json figures = json::array();
  const bool draw = png && gnuplot_available();
  for (const std::string& s : o.settings) {
    std::vector<Row> cols;
    for (const Row& r : rows) {  // the rows of this setting (and the baseline) with a unit done
      if (r.setting != s && r.setting != "supervised") continue;
      for (const auto& d : o.data) {
        if (units.count(r.model + "/" + d.name + "/" + r.setting)) {
          cols.push_back(r);
          break;
        }
      }
    }
    if (cols.empty()) continue;
    std::ostringstream dat;
    dat << "# data set";
    for (const Row& c : cols) dat << " \"" << c.label() << "\"";
    dat << "\n";
    for (const auto& d : o.data) {
      dat << d.name;
      for (const Row& c : cols) {
        const auto it = units.find(c.model + "/" + d.name + "/" + c.setting);
        dat << " "
            << (it == units.end()
                    ? std::string("NaN")
                    : percent(it->second->at("summary").at("accuracy").at("mean").get<double>()));
      }
      dat << "\n";
    }
    const std::string base = fig_dir + "/boxplot_" + s;
    write_output_text(base + ".dat", dat.str());
    std::ostringstream gp;
    gp << "set terminal pngcairo size 900,500\nset output '" << base
       << ".png.tmp'\nset title 'Top-1 accuracy over data sets (" << s
       << ")' noenhanced\nset ylabel 'top-1 (%)'\nset style data boxplot\nset style boxplot "
          "nooutliers\nset style fill solid 0.3\nset key off\nset grid ytics\nset "
          "xtics (";
    for (size_t i = 0; i < cols.size(); ++i)
      gp << (i ? ", " : "") << "'" << cols[i].label() << "' " << i + 1;
    gp << ") noenhanced\nset xrange [0.5:" << cols.size() + 0.5
       << "]\nset boxwidth 0.5\n"
       // gnuplot draws a box from 4 values on; every data set's value is drawn as a point too
       << "plot for [i=1:" << cols.size() << "] '" << base
       << ".dat' using (i):(column(i+1)) with boxplot notitle, for [i=1:" << cols.size() << "] '"
       << base << ".dat' using (i):(column(i+1)) with points pt 7 lc rgb 'black' notitle\n";
    write_output_text(base + ".gp", gp.str());
    if (draw) {
      run_gnuplot(base + ".gp", base + ".png.tmp", base + ".png", "transfer_study --report");
      figures.push_back("figures/boxplot_" + s + ".png");
      md << "\n![top-1 over data sets, " << s << "](figures/boxplot_" << s << ".png)\n";
    }
  }
  if (png && !draw) log << "transfer_study: gnuplot not found; wrote .dat/.gp files only\n";
  report["figures"] = figures;
  write_json(dir + "/report.json", report);
  write_output_text(dir + "/report.md", md.str());

  // stdout: the top-1 table.
  out << std::left << std::setw(24) << "top-1 (%)";
  for (const auto& d : o.data) out << std::setw(18) << d.name;
  out << "avg\n";
  for (const json& row : tables["accuracy"]) {
    out << std::setw(24)
        << (row["model"].get<std::string>() + " " + row["setting"].get<std::string>());
    for (const auto& d : o.data)
      out << std::setw(18)
          << cell_text(row["cells"][d.name].is_null() ? nullptr : &row["cells"][d.name]);
    out << (row["average"].is_null() ? "—" : percent(row["average"].get<double>())) << "\n";
  }
  out << "transfer_study: report " << dir << "/report.md (" << units.size() << " of "
      << transfer_units(o).size() << " units)\n";
  return report;
}

}  // namespace moca::sim
