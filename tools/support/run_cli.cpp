#include "run_cli.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/memory.hpp"

namespace moca::tools {

namespace {

std::string g_tool = "moca";  // the running program's name, for the terminate handler

std::string message_of(const std::exception& e) {
  return debug_errors() ? std::string(e.what()) : exception_text(e);
}

[[noreturn]] void on_terminate() {
  std::string message = "internal error: terminate called";
  if (const std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::exception& e) {
      message = "internal error: " + message_of(e);
    } catch (...) {
      message = "internal error: unknown exception";
    }
  }
  std::cerr << g_tool << ": " << message << std::endl;
  std::_Exit(1);
}

}  // namespace

bool debug_errors() {
  const char* v = std::getenv("MOCA_DEBUG");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

int run_program(const std::string& tool, const std::function<int()>& body) {
  g_tool = tool;
  std::set_terminate(on_terminate);
  std::signal(SIGPIPE, SIG_IGN);
  tune_allocator();
  int status = 1;
  try {
    status = body();
  } catch (const std::invalid_argument& e) {
    std::cerr << tool << ": " << message_of(e) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << tool << ": out of memory (std::bad_alloc)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << message_of(e) << "\n";
    return 1;
  } catch (...) {
    std::cerr << tool << ": unknown error (an exception that is not a std::exception)\n";
    return 1;
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << tool << ": cannot write standard output (" << std::strerror(errno) << ")\n";
    return 1;
  }
  return status;
}

int run_cli(const std::string& tool, CLI::App& app, int argc, char** argv,
            const std::function<int()>& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << tool << ": " << e.what() << "\n";
    return 2;
  }
  return run_program(tool, body);
}

}  // namespace moca::tools
