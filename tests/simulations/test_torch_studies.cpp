// Option validation of the studies that need the model layer (built with MOCA_WITH_TORCH=ON).
// Their end-to-end runs are covered by paper_reproduce_smoke.
#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>

#include "bound_check.hpp"
#include "paper_experiments.hpp"

TEST_CASE("BoundCheckOptions::validate and a missing checkpoint") {
  moca::sim::BoundCheckOptions o;
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);  // no checkpoint
  o.checkpoint = "/nonexistent/model.pt";
  CHECK_NOTHROW(o.validate());
  o.c = 0;
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o.c = 1;
  o.data.selection.dataset.use_env = false;
  o.data.samples = 20;
  std::ostringstream out, log;
  CHECK_THROWS_AS(moca::sim::run_bound_check(o, out, log), std::runtime_error);
}

TEST_CASE("PaperExperimentsOptions::validate") {
  // One fresh options object per case (reassigning `o = {}` trips GCC 12's maybe-uninitialized).
  using Options = moca::sim::PaperExperimentsOptions;
  auto rejects = [](void (*change)(Options&)) {
    Options o;
    change(o);
    CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  };
  CHECK_NOTHROW(Options().validate());
  rejects([](Options& o) { o.only = {"table2"}; });
  rejects([](Options& o) { o.mask_ratios = {0.5, 1.0}; });
  rejects([](Options& o) { o.patch_lengths = {0}; });
  rejects([](Options& o) { o.finetune_epochs = 0; });
}
