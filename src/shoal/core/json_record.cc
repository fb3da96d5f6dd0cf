#include "shoal/core/json_record.hh"

#include <algorithm>

#include <fmt/format.h>

namespace shoal {

namespace {

// Whether s is well-formed UTF-8 (RFC 3629: no overlongs, no surrogates,
// nothing past U+10FFFF).
bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      return false;
    }
    if (i + len > n || p[i + 1] < lo || p[i + 1] > hi) return false;
    for (size_t k = 2; k < len; ++k)
      if (p[i + k] < 0x80 || p[i + k] > 0xbf) return false;
    i += len;
  }
  return true;
}

}  // namespace

void json_string(std::string& out, std::string_view s) {
  if (!valid_utf8(s)) {  // (rare: nlohmann's own replacement, byte for byte)
    out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out.push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

uint32_t JsonRecord::start_key(std::string_view key) {
  auto k = uint32_t(buf_.size());
  buf_.append(key);
  return k;
}

void JsonRecord::end_value(uint32_t k, size_t value_at) {
  fields_.push_back({k, uint32_t(value_at - k), uint32_t(value_at), uint32_t(buf_.size() - value_at)});
}

void JsonRecord::str(std::string_view key, std::string_view v) {
  uint32_t k = start_key(key);
  size_t at = buf_.size();
  json_string(buf_, v);
  end_value(k, at);
}

void JsonRecord::num(std::string_view key, uint64_t v) {
  uint32_t k = start_key(key);
  size_t at = buf_.size();
  fmt::format_to(std::back_inserter(buf_), "{}", v);
  end_value(k, at);
}

void JsonRecord::num(std::string_view key, int64_t v) {
  uint32_t k = start_key(key);
  size_t at = buf_.size();
  fmt::format_to(std::back_inserter(buf_), "{}", v);
  end_value(k, at);
}

void JsonRecord::raw(std::string_view key, std::string_view json_text) {
  uint32_t k = start_key(key);
  size_t at = buf_.size();
  buf_.append(json_text);
  end_value(k, at);
}

void JsonRecord::object(std::string_view key, const JsonRecord& r) {
  uint32_t k = start_key(key);
  size_t at = buf_.size();
  r.write(buf_);
  end_value(k, at);
}

void JsonRecord::json(std::string_view key, const nlohmann::json& v) {
  uint32_t k = start_key(key);
  size_t at = buf_.size();
  buf_ += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  end_value(k, at);
}

void JsonRecord::merge(const nlohmann::json& v) {
  if (!v.is_object()) return;
  for (const auto& [k, x] : v.items()) json(k, x);
}

void JsonRecord::write(std::string& out) const {
  // nlohmann::json's object is a std::map: keys in byte order, a key set
  // again holding its last value
  std::vector<uint32_t> order(fields_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](uint32_t i) { return std::string_view(buf_).substr(fields_[i].key, fields_[i].klen); };
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  out.push_back('{');
  bool first = true;
  for (size_t n = 0; n < order.size(); ++n) {
    if (n + 1 < order.size() && key(order[n]) == key(order[n + 1])) continue;  // (a later value wins)
    const Field& f = fields_[order[n]];
    if (!first) out.push_back(',');
    first = false;
    json_string(out, key(order[n]));
    out.push_back(':');
    out.append(buf_, f.value, f.vlen);
  }
  out.push_back('}');
}

}  // namespace shoal
