// A flat JSON object built field by field and written in one go, for
// records written per packet (EVE alerts): the text nlohmann::json's dump
// gives for the same object (keys in order, a key set again keeps its last
// value, strings escaped the same way, invalid UTF-8 replaced by U+FFFD),
// without building its tree of maps and values. Values are kept as JSON
// text in one buffer; a nested object is another record written into it,
// or any nlohmann::json value dumped.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace shoal {

class JsonRecord {
 public:
  void str(std::string_view key, std::string_view v);
  void num(std::string_view key, uint64_t v);
  void num(std::string_view key, int64_t v);
  void num(std::string_view key, int v) { num(key, int64_t(v)); }
  void num(std::string_view key, unsigned v) { num(key, uint64_t(v)); }
  void boolean(std::string_view key, bool v) { raw(key, v ? "true" : "false"); }
  void object(std::string_view key, const JsonRecord& r);
  void json(std::string_view key, const nlohmann::json& v);
  // each member of object v (as the record's own fields)
  void merge(const nlohmann::json& v);
  void raw(std::string_view key, std::string_view json_text);
  bool empty() const { return fields_.empty(); }
  // Appends the object's text (no newline).
  void write(std::string& out) const;
  std::string text() const {
    std::string s;
    write(s);
    return s;
  }
  void clear() { buf_.clear(), fields_.clear(); }

 private:
  struct Field {
    uint32_t key, klen, value, vlen;  // in buf_
  };
  std::string buf_;
  std::vector<Field> fields_;
  uint32_t start_key(std::string_view key);
  void end_value(uint32_t k, size_t value_at);
};

// s as a JSON string (quoted), as nlohmann::json's dump writes it with
// ensure_ascii off and invalid UTF-8 replaced.
void json_string(std::string& out, std::string_view s);

}  // namespace shoal
