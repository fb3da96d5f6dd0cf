// Source locations and diagnostics shared by the configuration language and by
// element argument parsing: file:line:column, the source line, and a caret.
#pragma once
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace shoal {

struct Loc {
  int32_t file = -1;  // index in SourceManager; -1 = no location
  uint32_t line = 0;  // 1-based
  uint32_t col = 0;   // 1-based
  uint32_t len = 1;   // characters to underline
  bool valid() const { return file >= 0; }
};

// Keeps every configuration source read, so diagnostics can quote lines.
class SourceManager {
 public:
  static SourceManager& instance();
  int32_t add(std::string name, std::string text);
  void clear() { files_.clear(); }  // for the fuzzer: forget every source
  const std::string& name(int32_t id) const { return files_.at(size_t(id)).name; }
  const std::string& text(int32_t id) const { return files_.at(size_t(id)).text; }
  std::string_view line(int32_t id, uint32_t line) const;
  // The location reached after advancing over `s` from `start`.
  static Loc advance(Loc start, std::string_view s);

 private:
  struct File {
    std::string name, text;
  };
  std::deque<File> files_;  // stable: lexers keep references to the text while files are added
};

// An error with a location: thrown by parsers and by element configuration.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(Loc loc, const std::string& msg) : std::runtime_error(msg), loc_(loc) {}
  const Loc& loc() const { return loc_; }

 private:
  Loc loc_;
};

// Formats "file:line:col: error: msg" and, with a location, the line and a caret.
std::string format_diagnostic(const Loc& loc, std::string_view msg, std::string_view kind = "error");

// Collects diagnostics; parsing continues after an error where it can.
class Diagnostics {
 public:
  void error(const Loc& loc, const std::string& msg);
  void note(const Loc& loc, const std::string& msg);
  // An element's configure() or initialize() failed: `at` is where (an
  // argument), `msg` is the element's message (its lines), `element` its
  // "NAME :: CLASS" and `eloc` its declaration. Prefixed "NAME: " with the
  // source line, or (click_style) as Click prints it: "FILE:LINE: While
  // configuring 'NAME :: CLASS':" and each line of msg indented by two.
  void element_error(const Loc& at, const Loc& eloc, std::string_view name, std::string_view cls, std::string msg,
                     bool initializing = false);
  bool click_style = false;
  bool has_errors() const { return errors_ > 0; }
  size_t error_count() const { return errors_; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  size_t errors_ = 0;
};

}  // namespace shoal
