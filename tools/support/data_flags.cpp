#include "data_flags.hpp"

#include "enum_option.hpp"

namespace moca::tools {

void add_data_flags(CLI::App* app, std::string& spec, data::DatasetOptions& o) {
  app->add_option("--data", spec,
                  "data: hapt:DIR | hmp:DIR | npy:DIR | generator[:coupling=0.8,windows=N,...] | "
                  "DIR (format detected); default $MOCA_HAPT_DIR, else the generator")
      ->group("Data");
  add_enum_option(app, "--data-format", o.format, data::kDataFormatNames,
                  "force the format of --data DIR: hapt | hmp | npy")
      ->group("Data");
  app->add_option("--modalities", o.modalities,
                  "modality groups, e.g. acc=0-2,gyro=3-5 (channels not named are dropped; "
                  "default: meta.json, else by channel-name prefix)")
      ->group("Data");
  app->add_option("--sample-rate", o.sample_rate_hz,
                  ".npy input rate in Hz (default: meta.json's sample_rate); resampled to the "
                  "model's rate")
      ->group("Data");
  app->add_flag("--drop-nonfinite", o.drop_nonfinite,
                "drop windows holding NaN/Inf (and say how many) instead of failing")
      ->group("Data");
  app->add_option("--keep-classes", o.keep_classes,
                  "keep only these classes, comma-separated names, relabelled in that order")
      ->group("Data");
  app->add_option("--channel-names", o.channel_names,
                  "the input's channel names in order, comma-separated (default: meta.json's; a "
                  ".npy folder without names is named from its modality groups: acc_x, acc_y, ...)")
      ->delimiter(',')
      ->group("Data");
  app->add_option("--segment", o.segment,
                  "SECONDS[:STRIDE]: cut each window into sub-windows (label and subject kept; "
                  "samples after the last whole one dropped), e.g. 5 for 10-s windows -> two")
      ->group("Data");
  add_enum_option(app, "--npy-layout", o.npy_layout, data::kNpyLayoutNames,
                  "X.npy axis order: auto | NCL | NLC")
      ->group("Data");
}

}  // namespace moca::tools
