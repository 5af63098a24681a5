#pragma once
/// \file dataset_settle.hpp
/// The steps open_dataset takes after a format's reader (dataset.cpp), for a caller that reads
/// the windows itself (select_stream settles one window of a streamed folder with them).
#include "moca/data/dataset.hpp"

namespace moca::data {

/// --channel-names, the rate, --segment, the modality groups (and names from them),
/// --keep-classes, and the fit to the model's rate and length, in open_dataset's order, each
/// change noted in d.notes; sets d.source_channels and d.source_length. Throws as open_dataset.
void settle_dataset(Windows& w, Dataset& d, const DatasetOptions& o);

}  // namespace moca::data
