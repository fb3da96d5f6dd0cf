#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "helpers.hh"

using namespace shoal;
using shoal::test::load;

namespace {
std::vector<std::string> names(const Program& p) {
  std::vector<std::string> n;
  for (auto& e : p.elements) n.push_back(e.name);
  return n;
}
bool connected(const Program& p, const std::string& a, int ap, const std::string& b, int bp) {
  for (auto& c : p.conns)
    if (p.elements[size_t(c.from)].name == a && c.from_port == ap && p.elements[size_t(c.to)].name == b &&
        c.to_port == bp)
      return true;
  return false;
}
}  // namespace

TEST(Config, DeclarationsChainsAnonymousAndPorts) {
  auto r = load(R"(
    // comment
    src :: InfiniteSource(LIMIT 1) /* block */ -> c :: Classifier(12/0800, -);
    c[0] -> Counter -> Discard;
    c [1] -> [0] d :: Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  // Elements in text order, as Click's lexer makes them; an anonymous one
  // is Class@N with N its place among the scope's elements.
  EXPECT_EQ(names(r->prog), (std::vector<std::string>{"src", "c", "Counter@3", "Discard@4", "d"}));
  EXPECT_TRUE(connected(r->prog, "src", 0, "c", 0));
  EXPECT_TRUE(connected(r->prog, "c", 1, "d", 0));
  EXPECT_TRUE(connected(r->prog, "Counter@3", 0, "Discard@4", 0));
  EXPECT_EQ(r->prog.elements[1].config, "12/0800, -");
}

// Click's endpoint lists and port lists: one to many, many to one, pairwise.
TEST(Config, CommaListsAndPortLists) {
  auto r = load(R"(
    src :: Idle -> c :: Classifier(12/0800, 12/86dd, -) [0,1,2] -> d :: Idle;
    a, b :: Idle;
    a -> Discard;
    a [1], b -> e :: Idle;
    g, h :: Idle => [0]k :: Idle, [1]k;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  for (int p : {0, 1, 2}) EXPECT_TRUE(connected(r->prog, "c", p, "d", 0)) << p;  // many to one
  EXPECT_TRUE(connected(r->prog, "a", 1, "e", 0));
  EXPECT_TRUE(connected(r->prog, "b", 0, "e", 0));
  EXPECT_TRUE(connected(r->prog, "g", 0, "k", 0));  // pairwise
  EXPECT_TRUE(connected(r->prog, "h", 0, "k", 1));
  // One to many: both connections are made, so a push output is used twice.
  auto twice = load("m :: Idle -> [0,1] n :: Idle;");
  EXPECT_FALSE(twice->ok);
  EXPECT_NE(twice->errors.find("'m' :: Idle push output 0 is connected more than once"), std::string::npos)
      << twice->errors;
  auto bad = load("x, y :: Idle => [0,1,2] z :: Idle;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("test.click:1:14: error: connection mismatch: 2 outputs connected to 3 inputs"),
            std::string::npos)
      << bad->errors;
  // Many to many (pairwise) takes Click's '=>'.
  auto arrow = load("x, y :: Idle -> [0]z :: Idle, [1]z;");
  EXPECT_NE(arrow->errors.find("syntax error: many-to-many connections require '=>'"), std::string::npos)
      << arrow->errors;
}

// Click's '=>': a lone element without ports expands to as many ports as the
// other side has; "[]" and "[N,]" are expandable lists; at most one per
// connection.
TEST(Config, DoubleArrowExpandsPorts) {
  auto r = load("a, b, c :: Idle; a => b, c, [0,1] a;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_TRUE(connected(r->prog, "a", 0, "b", 0));
  EXPECT_TRUE(connected(r->prog, "a", 1, "c", 0));
  EXPECT_TRUE(connected(r->prog, "a", 2, "a", 0));
  EXPECT_TRUE(connected(r->prog, "a", 3, "a", 1));
  auto e = load("a, b, c, d :: Idle; a [1,] => b, c; a -> d;");
  ASSERT_TRUE(e->ok) << e->errors;
  EXPECT_TRUE(connected(e->prog, "a", 1, "b", 0));
  EXPECT_TRUE(connected(e->prog, "a", 2, "c", 0));
  auto two = load("c, d :: Idle; c [] => [] d;");
  EXPECT_NE(two->errors.find("at most one expandable port allowed per connection"), std::string::npos) << two->errors;
}

// In a compound or a group, a port with no element is 'input' at a chain's
// start and 'output' at its end ("-> x ->", "[1] -> y -> [1]").
TEST(Config, ImplicitCompoundPorts) {
  auto r = load("a, b :: Idle; a -> { -> } -> b; a [1] -> { [0] -> [0] } -> [1] b;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_TRUE(connected(r->prog, "a", 0, "b", 0));
  EXPECT_TRUE(connected(r->prog, "a", 1, "b", 1));
  auto top = load("-> Null;");
  EXPECT_NE(top->errors.find("test.click:1:1: error: syntax error near '->'"), std::string::npos) << top->errors;
}

// Click's element groups: "( ... )" inside a connection, their elements named
// in the enclosing scope, ports implied for all the group's ports.
TEST(Config, ElementGroups) {
  auto r = load(R"(
    a, d :: Idle;
    a => (-> c :: Idle), (-> b :: Idle), d;
    src :: Idle -> ( [0] -> p :: Paint(1) -> [0]; ) -> q :: Idle;
    Idle -> p;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_TRUE(connected(r->prog, "a", 0, "c", 0));
  EXPECT_TRUE(connected(r->prog, "a", 1, "b", 0));
  EXPECT_TRUE(connected(r->prog, "a", 2, "d", 0));
  EXPECT_TRUE(connected(r->prog, "src", 0, "p", 0));  // 'p' is a top-level name
  EXPECT_TRUE(connected(r->prog, "p", 0, "q", 0));
  auto bad = load("i :: Idle -> ( [0] -> Null; ) -> Idle;");
  EXPECT_NE(bad->errors.find("has no output 0"), std::string::npos) << bad->errors;
  // A group the compound around it ends before its ')' is an error, not an
  // endless loop of errors (found by fuzzing).
  auto open = load("elementclass T { $a | input -> ( -: [1] output }");
  EXPECT_FALSE(open->ok);
  EXPECT_NE(open->errors.find("unterminated element group: missing ')'"), std::string::npos) << open->errors;
}

// Idle is Click's "x/y": its inputs and outputs resolve to push or pull apart.
TEST(Config, IdlePortsResolveApart) {
  auto r = load("a, b :: Idle; a -> b -> p :: PullNull -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
}

// As in Click, ';' between statements is optional: a statement ends where
// the next token cannot continue it.
TEST(Config, SemicolonsAreOptional) {
  auto r = load(R"(
    src :: InfiniteSource(LIMIT 1) -> c :: Counter -> Discard
    Idle -> d :: Discard  i :: Idle i -> [0] d
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_TRUE(connected(r->prog, "src", 0, "c", 0));
  EXPECT_TRUE(connected(r->prog, "i", 0, "d", 0));
  // Still an error: a token that can neither continue nor start a statement.
  auto bad = load("a :: Idle -> Discard )");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("expected ';' or '->'"), std::string::npos) << bad->errors;
}

TEST(Config, UseBeforeDeclarationAndMultipleNames) {
  auto r = load("a -> b; a, b2 :: Counter; b :: Discard; InfiniteSource -> a; b2 -> Discard; Idle -> b2;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_TRUE(connected(r->prog, "a", 0, "b", 0));
  EXPECT_EQ(r->prog.elements[size_t(r->prog.find("b2"))].info->name, "Counter");
}

TEST(Config, CompoundWithFormalsAndNesting) {
  auto r = load(R"(
    elementclass Painter { $color | input -> Paint($color) -> output }
    elementclass Two { $a, $b |
      input -> p :: Painter($a) -> Painter($b) -> output;
    }
    InfiniteSource(LIMIT 1) -> t :: Two(3, 4) -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  auto n = names(r->prog);
  ASSERT_EQ(n.size(), 4u) << testing::PrintToString(n);
  EXPECT_EQ(n[1], "t/p/Paint@1");
  EXPECT_EQ(r->prog.elements[1].config, "3");
  EXPECT_EQ(r->prog.elements[2].config, "4");
  EXPECT_TRUE(connected(r->prog, "InfiniteSource@1", 0, "t/p/Paint@1", 0));
  EXPECT_TRUE(connected(r->prog, "t/p/Paint@1", 0, n[2], 0));
  EXPECT_TRUE(connected(r->prog, n[2], 0, "Discard@3", 0));
}

TEST(Config, CompoundMultiplePortsAndOverloads) {
  auto r = load(R"(
    elementclass Split { input -> c :: Classifier(0/01, -); c[0] -> [0]output; c[1] -> [1]output; }
    elementclass P { $x | input -> Paint($x) -> output || $x, $y | input -> Paint($x) -> Paint($y) -> output }
    s :: InfiniteSource(LIMIT 1) -> sp :: Split;
    sp[0] -> P(1) -> Discard;
    sp[1] -> P(1, 2) -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_TRUE(connected(r->prog, "sp/c", 0, "P@3/Paint@1", 0)) << testing::PrintToString(names(r->prog));
  EXPECT_TRUE(connected(r->prog, "sp/c", 1, "P@5/Paint@1", 0)) << "P(1, 2) picks the two-formal overload";
  EXPECT_TRUE(connected(r->prog, "P@5/Paint@1", 0, "P@5/Paint@2", 0));
  int paints = 0;
  for (auto& e : r->prog.elements) paints += e.info->name == "Paint";
  EXPECT_EQ(paints, 3);
}

TEST(Config, KeywordAndRestFormals) {
  auto r = load(R"(
    elementclass K { COLOR $c | input -> Paint($c) -> output }
    elementclass R { $a, __REST__ $rest | input -> Paint($a) -> c :: Classifier($rest) -> output; c[1] -> output }
    InfiniteSource(LIMIT 1) -> K(COLOR 7) -> r :: R(3, 12/0800, -) -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->prog.elements[size_t(r->prog.find("K@2/Paint@1"))].config, "7")
      << testing::PrintToString(names(r->prog));
  EXPECT_EQ(r->prog.elements[size_t(r->prog.find("r/c"))].config, "12/0800, -");
  EXPECT_FALSE(load("elementclass K { COLOR $c | input -> output } InfiniteSource -> K(1) -> Discard;")->ok)
      << "a positional argument does not fill a keyword formal";
  // Capitalised words are a keyword argument only for a declared keyword formal.
  auto r2 = load(R"(elementclass F { $a | input -> Print("${a[2]}") -> output }
                    InfiniteSource(LIMIT 1) -> F(A B C) -> Discard;)");
  ASSERT_TRUE(r2->ok) << r2->errors;
  EXPECT_EQ(r2->prog.elements[1].config, "\"C\"");
}

TEST(Config, DefinesAndCommandLineOverride) {
  const char* text = "define($N 5, $M $N) InfiniteSource(LIMIT $M, DATA '$N') -> Discard;";
  auto r = load(text);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->prog.elements[0].config, "LIMIT 5, DATA '$N'") << "single quotes are not substituted";
  auto r2 = load("define($N 5) InfiniteSource(LIMIT $N, DATA ${N}x) -> Discard;", {{"N", "7"}});
  ASSERT_TRUE(r2->ok) << r2->errors;
  EXPECT_EQ(r2->prog.elements[0].config, "LIMIT 7, DATA 7x");
  EXPECT_EQ(config::substitute("$UNKNOWN $(c.count)", {{"X", "1"}}), "$UNKNOWN $(c.count)");
  // Click's indexed variables: words of a value, the index maybe a variable.
  std::map<std::string, std::string> v{{"a", "A B  C"}, {"n", "2"}};
  EXPECT_EQ(config::substitute("${a[0]}|${a[$n]}|${a[3]}|${a}", v), "A|C||A B  C");
}

TEST(Config, ElementclassSynonymAndRequire) {
  auto r = load("require(package \"shoal\"); elementclass Sink Discard; InfiniteSource(LIMIT 1) -> Sink;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->prog.elements[1].info->name, "Discard");
  ASSERT_EQ(r->prog.requirements.size(), 1u);
}

// Diagnostics: exact text, with file:line:col, the line and a caret.
TEST(ConfigDiagnostics, UnknownClassSuggests) {
  auto r = load("src :: InfiniteSource -> Countr -> Discard;\n");
  ASSERT_FALSE(r->ok);
  EXPECT_EQ(r->errors,
            "test.click:1:26: error: unknown element class 'Countr' (did you mean 'Counter'?)\n"
            "    1 | src :: InfiniteSource -> Countr -> Discard;\n"
            "      |                          ^~~~~~\n");
}

TEST(ConfigDiagnostics, Redeclaration) {
  auto r = load("c :: Counter;\nc :: Counter;\n");
  ASSERT_FALSE(r->ok);
  EXPECT_EQ(r->errors,
            "test.click:2:1: error: redeclaration of element 'c'\n"
            "    2 | c :: Counter;\n"
            "      | ^\n"
            "test.click:1:1: note: 'c' was first declared here\n"
            "    1 | c :: Counter;\n"
            "      | ^\n");
}

TEST(ConfigDiagnostics, PortOutOfRange) {
  auto r = load("InfiniteSource -> c :: Counter; c[1] -> Discard; c -> Discard;");
  ASSERT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("test.click:1:38: error: 'c' :: Counter has no output 1 (Counter takes 1 output)"),
            std::string::npos)
      << r->errors;
}

TEST(ConfigDiagnostics, PushPullMismatchSuggestsQueue) {
  // InfiniteSource is agnostic: pulled by Unqueue it becomes pull, as in Click.
  EXPECT_TRUE(load("InfiniteSource -> u :: Unqueue -> Discard;")->ok);
  auto r = load("InfiniteSource -> t :: Tee -> u :: Unqueue -> Discard;");
  ASSERT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("'t' :: Tee output 0 is push, but 'u' :: Unqueue input 0 is pull "
                           "(put a Queue between them)"),
            std::string::npos)
      << r->errors;
}

TEST(ConfigDiagnostics, UnconnectedPorts) {
  auto r = load("c :: Counter -> Discard;");
  ASSERT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("test.click:1:1: error: 'c' :: Counter input 0 is not connected"), std::string::npos)
      << r->errors;
}

TEST(ConfigDiagnostics, PushOutputTwice) {
  auto r = load("s :: InfiniteSource; s -> Discard; s -> Discard;");
  ASSERT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("'s' :: InfiniteSource push output 0 is connected more than once"), std::string::npos)
      << r->errors;
}

TEST(ConfigDiagnostics, SyntaxErrorsHaveLocations) {
  auto r = load("a :: Counter(\n");
  ASSERT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("test.click:1:13: error: unterminated configuration string: missing ')'"), std::string::npos)
      << r->errors;
  auto r2 = load("a :: -> b;");
  ASSERT_FALSE(r2->ok);
  EXPECT_NE(r2->errors.find("test.click:1:6: error: expected a class name after '::', found '->'"), std::string::npos)
      << r2->errors;
  auto r3 = load("x -> y;");
  ASSERT_FALSE(r3->ok);
  EXPECT_NE(r3->errors.find("undeclared element 'x'"), std::string::npos) << r3->errors;
  auto r4 = load("elementclass A { input -> output } InfiniteSource -> a :: A -> [1]Discard;");
  ASSERT_FALSE(r4->ok);
  auto r5 = load("elementclass A { input -> output } InfiniteSource -> a :: A; a[1] -> Discard; a -> Discard;");
  ASSERT_FALSE(r5->ok);
  EXPECT_NE(r5->errors.find("'a' :: A has no output 1"), std::string::npos) << r5->errors;
}

TEST(ConfigDiagnostics, RecursiveCompoundIsBounded) {
  auto r = load("elementclass R { input -> R -> output } InfiniteSource -> R -> Discard;");
  ASSERT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("nested more than 50 deep"), std::string::npos) << r->errors;
}

TEST(ConfigDiagnostics, BadArgumentPointsAtIt) {
  auto r = shoal::test::run("InfiniteSource(LIMIT 2,\n  BURST many) -> Discard;");
  ASSERT_FALSE(r->ok);
  EXPECT_EQ(r->errors,
            "test.click:2:3: error: InfiniteSource@1: BURST expects an unsigned integer, got 'many'\n"
            "    2 |   BURST many) -> Discard;\n"
            "      |   ^~~~~~~~~~\n");
}

// require(library FILE): the file, relative to the one that requires it,
// is read at file scope (its classes and elements), once however often it
// is required; a missing library or one required inside a compound is an
// error at the requirement.
TEST(Config, RequireLibrary) {
  std::string dir = test::tmpdir() + "/lib";
  std::filesystem::create_directories(dir + "/sub");
  auto put = [&](const std::string& f, const std::string& text) { std::ofstream(dir + "/" + f) << text; };
  put("main.click", "require(library lib.click, library lib3.click)\na :: A;\n");
  put("lib.click", "require(library sub/lib2.click)\nelementclass A { b :: B; }\n");
  put("sub/lib2.click", "elementclass B { i :: Idle; }\n");
  put("lib3.click", "require(library lib.click, library main.click)\n");
  Program p;
  Diagnostics d;
  ASSERT_TRUE(config::load_file(dir + "/main.click", {}, p, d)) << d.text();
  EXPECT_EQ(names(p), (std::vector<std::string>{"a/b/i"}));
  put("bad.click", "require(library nowhere.click)\nIdle -> Discard;\n");
  Program q;
  Diagnostics e;
  EXPECT_FALSE(config::load_file(dir + "/bad.click", {}, q, e));
  EXPECT_NE(e.text().find("bad.click:1:"), std::string::npos) << e.text();
  EXPECT_NE(e.text().find("library 'nowhere.click' not found"), std::string::npos) << e.text();
  auto r = load("elementclass C { require(library x); input -> output }");
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("must be used at file scope"), std::string::npos) << r->errors;
}

namespace shoal {

// Click's lexical scoping of formals and its numbering (tools/lexer-02):
// a class defined inside a compound sees that compound's formals, not those
// of the compound that uses it, and anonymous elements are numbered by
// their place in the text (a bare "Idle;" before "Bar($a)").
TEST(Config, FormalsAreLexicallyScopedAndAnonymousElementsNumberedInTextOrder) {
  auto r = load(R"(
    elementclass Foo {
      $a |
      elementclass Bar { $b | Message($a); }
      elementclass Baz { $a | Idle; Bar($a); }
      Baz(other);
    }
    Foo(kept);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  std::vector<std::string> n;
  for (auto& e : r->prog.elements) n.push_back(e.name + " " + e.config);
  EXPECT_EQ(n, (std::vector<std::string>{"Foo@1/Baz@1/Idle@1 ", "Foo@1/Baz@1/Bar@2/Message@1 kept"}));
}

}  // namespace shoal
