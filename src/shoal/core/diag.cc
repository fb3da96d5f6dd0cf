#include "shoal/core/diag.hh"

#include <fmt/format.h>

namespace shoal {

SourceManager& SourceManager::instance() {
  static SourceManager sm;
  return sm;
}

int32_t SourceManager::add(std::string name, std::string text) {
  files_.push_back({std::move(name), std::move(text)});
  return int32_t(files_.size() - 1);
}

std::string_view SourceManager::line(int32_t id, uint32_t line) const {
  std::string_view t = text(id);
  uint32_t cur = 1;
  size_t pos = 0;
  while (cur < line) {
    size_t nl = t.find('\n', pos);
    if (nl == std::string_view::npos) return {};
    pos = nl + 1;
    ++cur;
  }
  size_t end = t.find('\n', pos);
  return t.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

Loc SourceManager::advance(Loc start, std::string_view s) {
  for (char c : s) {
    if (c == '\n') {
      ++start.line;
      start.col = 1;
    } else {
      ++start.col;
    }
  }
  return start;
}

std::string format_diagnostic(const Loc& loc, std::string_view msg, std::string_view kind) {
  if (!loc.valid()) return fmt::format("{}: {}\n", kind, msg);
  auto& sm = SourceManager::instance();
  std::string out = fmt::format("{}:{}:{}: {}: {}\n", sm.name(loc.file), loc.line, loc.col, kind, msg);
  std::string_view line = sm.line(loc.file, loc.line);
  if (line.empty() && loc.col <= 1) return out;
  std::string gutter = fmt::format("{:>5}", loc.line);
  out += fmt::format("{} | {}\n", gutter, line);
  std::string caret(gutter.size(), ' ');
  caret += " | ";
  for (uint32_t i = 1; i < loc.col && i <= line.size(); ++i) caret += line[i - 1] == '\t' ? '\t' : ' ';
  caret += '^';
  uint32_t avail = loc.col <= line.size() ? uint32_t(line.size()) - loc.col : 0;
  uint32_t extra = loc.len > 1 ? std::min(loc.len - 1, avail) : 0;
  caret.append(extra, '~');
  out += caret + "\n";
  return out;
}

void Diagnostics::error(const Loc& loc, const std::string& msg) {
  // Click's form: "FILE:LINE: message", no column, no source line.
  if (click_style && loc.valid())
    text_ += fmt::format("{}:{}: {}\n", SourceManager::instance().name(loc.file), loc.line, msg);
  else
    text_ += format_diagnostic(loc, msg, "error");
  ++errors_;
}

void Diagnostics::element_error(const Loc& at, const Loc& eloc, std::string_view name, std::string_view cls,
                                std::string msg, bool initializing) {
  std::string prefix = std::string(name) + ": ";
  if (!click_style) {
    if (msg.compare(0, prefix.size(), prefix) != 0) msg = prefix + msg;
    return error(at.valid() ? at : eloc, msg);
  }
  if (msg.compare(0, prefix.size(), prefix) == 0) msg.erase(0, prefix.size());
  const Loc& l = eloc.valid() ? eloc : at;
  if (l.valid()) text_ += fmt::format("{}:{}: ", SourceManager::instance().name(l.file), l.line);
  text_ += fmt::format("While {} '{} :: {}':\n", initializing ? "initializing" : "configuring", name, cls);
  size_t start = 0;
  while (start <= msg.size()) {
    size_t nl = msg.find('\n', start);
    if (nl == std::string::npos) nl = msg.size();
    text_ += "  " + msg.substr(start, nl - start) + "\n";
    start = nl + 1;
  }
  ++errors_;
}

void Diagnostics::note(const Loc& loc, const std::string& msg) {
  if (!click_style) text_ += format_diagnostic(loc, msg, "note");  // Click has no notes
}

}  // namespace shoal
