#pragma once
// Errors caused by what the user gave pgsim (netlist text, files, options).
// The command line maps each error class to its own exit code (README "Exit codes").
#include <stdexcept>
#include <string>

namespace pgsim {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An InputError tied to a place in a netlist file: what() reads "file:line: message".
class ParseError : public InputError {
 public:
  ParseError(const std::string& file, unsigned line, const std::string& message)
      : InputError(file + ":" + std::to_string(line) + ": " + message), file_(file), line_(line) {}
  const std::string& file() const { return file_; }
  unsigned line() const { return line_; }

 private:
  std::string file_;
  unsigned line_;
};

}  // namespace pgsim
