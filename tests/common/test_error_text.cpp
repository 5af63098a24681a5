#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "moca/common/error_text.hpp"
#include "moca/common/text_replace.hpp"

TEST_CASE("binary bytes in messages are escaped; backtraces are dropped") {
  CHECK(moca::printable("abc 1.5") == "abc 1.5");
  CHECK(moca::printable(std::string("\x1f\x8b\x00\xff", 4)) == "\\x1f\\x8b\\x00\\xff");
  CHECK(moca::printable("a\tb\\c\n") == "a\\tb\\\\c\\n");
  CHECK(moca::printable(std::string(100, 'x'), 10) == std::string(10, 'x') + "...");
  const std::runtime_error torch_like(
      "PytorchStreamWriter failed writing file data/0: file write failed\nException raised "
      "from writeRecord at ../caffe2/serialize/inline_container.cc:476 (most recent call "
      "first):\nframe #0: c10::Error::Error()");
  CHECK(moca::exception_text(torch_like) ==
        "PytorchStreamWriter failed writing file data/0: file write failed");
  CHECK(moca::exception_text(std::invalid_argument("plain")) == "plain");
}

namespace {
std::string thrown_text(void (*f)()) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<nothing thrown>";
}
}  // namespace

TEST_CASE("throw_invalid words validation errors as 'where: field (value) rule'") {
  CHECK(thrown_text([] {
          moca::throw_invalid("ScoreOptions::validate()", "draws", "1", "must be >= 2");
        }) == "ScoreOptions::validate(): draws (1) must be >= 2");
  CHECK(thrown_text([] { moca::throw_invalid("", "--ratio", "2", "must be in (0, 1)"); }) ==
        "--ratio (2) must be in (0, 1)");
  CHECK(thrown_text([] { moca::throw_invalid("Windows", "x has 5 columns"); }) ==
        "Windows: x has 5 columns");
  CHECK(thrown_text([] { moca::throw_invalid("", "--scheme: no scheme given"); }) ==
        "--scheme: no scheme given");
}

TEST_CASE("replace_all: every occurrence, left to right, replacements never rescanned") {
  using moca::replace_all;
  CHECK(replace_all("set DataOptions::data or DataOptions::data", "DataOptions::data", "spec") ==
        "set spec or spec");
  // `to` containing `from` does not loop or grow the text twice.
  CHECK(replace_all("aXa", "a", "aa") == "aaXaa");
  CHECK(replace_all("abc", "", "z") == "abc");
  CHECK(replace_all("", "a", "b").empty());
  CHECK(replace_all("no match", "DatasetOptions::", "--") == "no match");
}
