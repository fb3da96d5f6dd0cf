#include "shoal/ids/transform.hh"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <cctype>

namespace shoal::ids {

namespace {

int hexval(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

std::string digest(const EVP_MD* md, const std::string& s) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), out, &n, md, nullptr);
  return std::string(reinterpret_cast<const char*>(out), n);
}

int b64val(uint8_t c) {
  return c >= 'A' && c <= 'Z'   ? c - 'A'
         : c >= 'a' && c <= 'z' ? c - 'a' + 26
         : c >= '0' && c <= '9' ? c - '0' + 52
         : c == '+'             ? 62
         : c == '/'             ? 63
                                : -1;
}

}  // namespace

void base64_decode_rfc4648(const uint8_t* in, size_t n, std::string& out) {
  size_t i = 0;
  while (i < n) {
    uint8_t g[4];
    int k = 0;
    while (k < 4 && i < n && (b64val(in[i]) >= 0 || in[i] == '=')) g[k++] = in[i++];
    const bool stop = k < 4;
    if (k == 0) return;
    for (; k < 4; ++k) g[k] = '=';  // a short group at the end or before a byte outside the alphabet
    int a = b64val(g[0]), b = b64val(g[1]);
    if (a < 0 || b < 0) return;
    out.push_back(char(a << 2 | b >> 4));
    if (g[2] != '=') {
      int c = b64val(g[2]);
      out.push_back(char((b & 15) << 4 | c >> 2));
      if (g[3] != '=') out.push_back(char((c & 3) << 6 | b64val(g[3])));
    }
    if (stop) return;
  }
}

bool parse_transform(std::string_view k, std::string_view v, Transform& out, bool& is_transform, std::string& err) {
  static const std::pair<const char*, Transform::Kind> kNames[] = {
      {"to_lowercase", Transform::ToLowercase},
      {"to_uppercase", Transform::ToUppercase},
      {"strip_whitespace", Transform::StripWhitespace},
      {"compress_whitespace", Transform::CompressWhitespace},
      {"url_decode", Transform::UrlDecode},
      {"to_md5", Transform::ToMd5},
      {"to_sha1", Transform::ToSha1},
      {"to_sha256", Transform::ToSha256},
      {"dotprefix", Transform::DotPrefix},
      {"header_lowercase", Transform::HeaderLowercase},
      {"strip_pseudo_headers", Transform::StripPseudoHeaders},
      {"xor", Transform::Xor}};
  is_transform = false;
  for (auto& [name, kind] : kNames)
    if (k == name) {
      is_transform = true;
      out = Transform{kind, {}};
    }
  if (!is_transform) return false;
  if (out.kind != Transform::Xor) {
    if (!v.empty()) return err = fmt::format("transform '{}' takes no value", k), false;
    return true;
  }
  // xor:"0d0ac8ff": the key in hex
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  if (v.empty() || v.size() % 2) return err = fmt::format("xor: '{}' is not a key of hex digit pairs", v), false;
  for (size_t i = 0; i < v.size(); i += 2) {
    int a = hexval(v[i]), b = hexval(v[i + 1]);
    if (a < 0 || b < 0) return err = fmt::format("xor: '{}' is not a key of hex digit pairs", v), false;
    out.key.push_back(char(a << 4 | b));
  }
  return true;
}

std::string apply_transforms(const std::vector<Transform>& chain, std::string_view in) {
  std::string s(in);
  for (const Transform& t : chain) {
    std::string o;
    switch (t.kind) {
      case Transform::ToLowercase:
        for (char& c : s) c = char(std::tolower(uint8_t(c)));
        continue;
      case Transform::ToUppercase:
        for (char& c : s) c = char(std::toupper(uint8_t(c)));
        continue;
      case Transform::StripWhitespace:
        for (char c : s)
          if (!std::isspace(uint8_t(c))) o.push_back(c);
        break;
      case Transform::CompressWhitespace:
        for (size_t i = 0; i < s.size(); ++i) {
          if (std::isspace(uint8_t(s[i]))) {
            o.push_back(' ');
            while (i + 1 < s.size() && std::isspace(uint8_t(s[i + 1]))) ++i;
          } else {
            o.push_back(s[i]);
          }
        }
        break;
      case Transform::UrlDecode:  // %XX and '+' (a malformed escape stays as it is)
        for (size_t i = 0; i < s.size(); ++i) {
          if (s[i] == '%' && i + 2 < s.size() && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            o.push_back(char(hexval(s[i + 1]) << 4 | hexval(s[i + 2])));
            i += 2;
          } else {
            o.push_back(s[i] == '+' ? ' ' : s[i]);
          }
        }
        break;
      case Transform::ToMd5: o = digest(EVP_md5(), s); break;
      case Transform::ToSha1: o = digest(EVP_sha1(), s); break;
      case Transform::ToSha256: o = digest(EVP_sha256(), s); break;
      case Transform::DotPrefix: o = "." + s; break;
      case Transform::HeaderLowercase: {  // "Name: value" lines: the names lower-cased
        bool name = true;
        for (char c : s) {
          if (c == ':') name = false;
          if (c == '\n') name = true;
          o.push_back(name ? char(std::tolower(uint8_t(c))) : c);
        }
        break;
      }
      case Transform::StripPseudoHeaders: {  // lines starting ':' (HTTP/2's) left out
        size_t at = 0;
        while (at < s.size()) {
          size_t eol = s.find('\n', at);
          size_t end = eol == std::string::npos ? s.size() : eol + 1;
          if (s[at] != ':') o.append(s, at, end - at);
          at = end;
        }
        break;
      }
      case Transform::Xor:
        o = s;
        for (size_t i = 0; i < o.size(); ++i) o[i] = char(o[i] ^ t.key[i % t.key.size()]);
        break;
    }
    s = std::move(o);
  }
  return s;
}

}  // namespace shoal::ids
