// The Click language's tokens: identifiers, $variables, numbers and
// punctuation, with locations; a configuration string after '(' is taken
// raw up to its matching ')'.
#pragma once
#include <fmt/format.h>

#include <cctype>
#include <string>

#include "shoal/core/diag.hh"

namespace shoal::config {

enum class T {
  Ident,
  Var,
  Number,
  Colon2,
  Arrow,
  Arrow2,  // '=>'
  Dots3,   // '...'
  LBrack,
  RBrack,
  LBrace,
  RBrace,
  LParen,
  RParen,
  Comma,
  Semi,
  Bar,
  Bar2,
  Eof,
  Bad
};

struct Token {
  T type = T::Eof;
  std::string text;
  Loc loc;
};

class Lexer {
 public:
  Lexer(int32_t file, const std::string& text) : file_(file), s_(text) {}

  const Token& peek() {
    if (!have_) {
      tok_ = lex();
      have_ = true;
    }
    return tok_;
  }
  Token next() {
    peek();
    have_ = false;
    return tok_;
  }
  // After a '(' token has been peeked: consumes it and returns the raw text up
  // to the matching ')', which is consumed too.
  bool raw_config(std::string& out, Loc& start, Diagnostics& diag) {
    Token open = next();
    start = here();
    size_t begin = pos_;
    int depth = 0;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '"' || c == '\'') {
        char q = c;
        advance();
        while (pos_ < s_.size() && s_[pos_] != q) {
          if (s_[pos_] == '\\' && q == '"' && pos_ + 1 < s_.size()) advance();
          advance();
        }
        if (pos_ >= s_.size()) break;
        advance();
        continue;
      }
      if (c == '/' && pos_ + 1 < s_.size() && (s_[pos_ + 1] == '/' || s_[pos_ + 1] == '*')) {
        skip_comment();
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')') {
        if (depth == 0) {
          out = strip_comments(s_.substr(begin, pos_ - begin));
          advance();
          return true;
        }
        --depth;
      }
      advance();
    }
    diag.error(open.loc, "unterminated configuration string: missing ')'");
    return false;
  }
  Loc here() const { return Loc{file_, line_, col_, 1}; }
  // Two-token lookahead where the grammar needs it (keyword formals).
  struct State {
    size_t pos;
    uint32_t line, col;
    Token tok;
    bool have;
  };
  State save() const { return {pos_, line_, col_, tok_, have_}; }
  void restore(const State& s) { pos_ = s.pos, line_ = s.line, col_ = s.col, tok_ = s.tok, have_ = s.have; }

 private:
  void advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skip_comment() {
    if (s_[pos_ + 1] == '/') {
      while (pos_ < s_.size() && s_[pos_] != '\n') advance();
    } else {
      advance();
      advance();
      while (pos_ < s_.size() && !(s_[pos_] == '*' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/')) advance();
      if (pos_ < s_.size()) advance(), advance();
    }
  }
  // Comments inside configuration strings are removed, keeping newlines so
  // argument locations stay right.
  static std::string strip_comments(const std::string& in) {
    std::string out;
    for (size_t i = 0; i < in.size(); ++i) {
      char c = in[i];
      if (c == '"' || c == '\'') {
        size_t j = i + 1;
        while (j < in.size() && in[j] != c) j += (in[j] == '\\' && c == '"') ? 2 : 1;
        out.append(in, i, std::min(j + 1, in.size()) - i);
        i = j;
      } else if (c == '/' && i + 1 < in.size() && in[i + 1] == '/') {
        while (i < in.size() && in[i] != '\n') out.push_back(' '), ++i;
        if (i < in.size()) out.push_back('\n');
      } else if (c == '/' && i + 1 < in.size() && in[i + 1] == '*') {
        out += "  ";
        i += 2;
        while (i < in.size() && !(in[i] == '*' && i + 1 < in.size() && in[i + 1] == '/'))
          out.push_back(in[i] == '\n' ? '\n' : ' '), ++i;
        out += "  ";
        ++i;
      } else {
        out.push_back(c);
      }
    }
    return out;
  }
  static bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '@'; }
  static bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '@' || c == '/';
  }

  Token lex() {
    for (;;) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) advance();
      if (pos_ >= s_.size()) return Token{T::Eof, "", here()};
      char c = s_[pos_];
      if (c == '/' && pos_ + 1 < s_.size() && (s_[pos_ + 1] == '/' || s_[pos_ + 1] == '*')) {
        skip_comment();
        continue;
      }
      if (c == '#' && col_ == 1) {  // preprocessor-style lines (#!, #line) are ignored
        while (pos_ < s_.size() && s_[pos_] != '\n') advance();
        continue;
      }
      break;
    }
    Token t;
    t.loc = here();
    char c = s_[pos_];
    auto one = [&](T type) {
      t.type = type;
      t.text = std::string(1, c);
      advance();
      return t;
    };
    auto two = [&](T type) {
      t.type = type;
      t.text = s_.substr(pos_, 2);
      t.loc.len = 2;
      advance();
      advance();
      return t;
    };
    char n = pos_ + 1 < s_.size() ? s_[pos_ + 1] : '\0';
    if (c == ':' && n == ':') return two(T::Colon2);
    if (c == '-' && n == '>') return two(T::Arrow);
    if (c == '=' && n == '>') return two(T::Arrow2);
    if (c == '.' && n == '.' && pos_ + 2 < s_.size() && s_[pos_ + 2] == '.') {
      t.type = T::Dots3;
      t.text = "...";
      t.loc.len = 3;
      advance(), advance(), advance();
      return t;
    }
    if (c == '|' && n == '|') return two(T::Bar2);
    switch (c) {
      case '[': return one(T::LBrack);
      case ']': return one(T::RBrack);
      case '{': return one(T::LBrace);
      case '}': return one(T::RBrace);
      case '(': return one(T::LParen);
      case ')': return one(T::RParen);
      case ',': return one(T::Comma);
      case ';': return one(T::Semi);
      case '|': return one(T::Bar);
      default: break;
    }
    size_t b = pos_;
    if (c == '$' && pos_ + 1 < s_.size() && ident_start(s_[pos_ + 1])) {
      advance();
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) advance();
      t.type = T::Var;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) advance();
      t.type = T::Number;
    } else if (ident_start(c)) {
      while (pos_ < s_.size() && ident_char(s_[pos_])) advance();
      // A name cannot end with '/'
      while (pos_ > b + 1 && s_[pos_ - 1] == '/') --pos_, --col_;
      t.type = T::Ident;
    } else {
      advance();
      t.type = T::Bad;
    }
    t.text = s_.substr(b, pos_ - b);
    t.loc.len = uint32_t(t.text.size());
    return t;
  }

  int32_t file_;
  const std::string& s_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
  Token tok_;
  bool have_ = false;
};

}  // namespace shoal::config
