// Suricata's transforms: keywords after a sticky buffer that change what
// the contents after them see (to_lowercase, strip_whitespace, url_decode,
// to_sha256, dotprefix, ...). A run of items in a buffer reads the buffer
// through its chain, applied in rule order.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shoal::ids {

struct Transform {
  enum Kind : uint8_t {
    ToLowercase,
    ToUppercase,
    StripWhitespace,
    CompressWhitespace,
    UrlDecode,
    ToMd5,
    ToSha1,
    ToSha256,
    DotPrefix,
    HeaderLowercase,
    StripPseudoHeaders,
    Xor,
  };
  Kind kind;
  std::string key;  // Xor's
};

// The transform a keyword names (value: xor's "hex key"); false when the
// keyword is not a transform. err says why a transform's value is bad.
bool parse_transform(std::string_view keyword, std::string_view value, Transform& out, bool& is_transform,
                     std::string& err);

// Base64 as Suricata's base64_decode reads it (RFC 4648 mode): groups of
// four from the alphabet or '=', up to the first other byte, where a group
// left short is padded; '=' in a group's third or fourth place ends it
// short. The bytes decoded before a group that cannot be (a '=' in its
// first two places) are the result. Appends to out.
void base64_decode_rfc4648(const uint8_t* in, size_t n, std::string& out);

// in through the chain.
std::string apply_transforms(const std::vector<Transform>& chain, std::string_view in);

}  // namespace shoal::ids
