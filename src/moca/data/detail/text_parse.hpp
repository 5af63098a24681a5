#pragma once
/// \file text_parse.hpp
/// Internal: fast, locale-independent parsing of whitespace-separated numbers on one line
/// (std::from_chars, no iostreams), shared by the text readers of moca::data.
#include <string>
#include <vector>

namespace moca::data::detail {

/// Result of parsing one line of whitespace-separated numbers.
struct ParsedLine {
  int count = 0;         ///< fields found (counting a bad field, if any)
  int bad_field = -1;    ///< 1-based index of the first field that is not a whole number, or -1
  std::string bad_text;  ///< that field's text
};

/// Parses up to `max_fields` numbers of `line` into `out` (fields beyond `max_fields` are counted
/// but not stored). A field is a maximal run of non-blank characters (blank = space, tab, CR).
ParsedLine parse_doubles(const std::string& line, double* out, int max_fields);

/// Parses whitespace-separated integers (same rules; a field like "1.5" is bad).
ParsedLine parse_longs(const std::string& line, long* out, int max_fields);

/// True if the line holds only blanks.
bool is_blank(const std::string& line);

/// Files of folder `dir` (names only, not recursive, sorted); std::runtime_error if the folder
/// cannot be opened.
std::vector<std::string> list_files(const std::string& dir);
/// Subfolders of `dir` (names only, sorted); std::runtime_error if it cannot be opened.
std::vector<std::string> list_subdirs(const std::string& dir);
/// True if `path` is an existing folder.
bool is_directory(const std::string& path);
/// True if `path` exists (a file, folder or anything else).
bool path_exists(const std::string& path);

}  // namespace moca::data::detail
