// Suricata's datasets: named sets of values a rule tests a sticky buffer
// against (dataset:isset / isnotset) or adds it to and removes it from
// (set / unset), shared by every rule that names them and by every worker.
// Types: string (files hold one base64 value a line), md5 and sha256 (hex
// digests; the buffer is the raw digest, as to_md5 / to_sha256 make it),
// ipv4 and ip (dotted or IPv6 text; the buffer is the raw address, 4 or 16
// bytes, an IPv4 one mapped into IPv6 for ip). A set loads its file once
// (load, or state), and save / state write it back when the run ends.
// Bounded: a set holds at most `capacity` values (Suricata's memcap):
// adding past it fails, counted.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace shoal::ids {

class Dataset {
 public:
  enum class Type : uint8_t { String, Md5, Sha256, Ipv4, Ip };
  Dataset(std::string name, Type type, size_t capacity) : name_(std::move(name)), type_(type), capacity_(capacity) {}
  const std::string& name() const { return name_; }
  Type type() const { return type_; }
  // The file's values added; false with err (file:line: why) when it cannot
  // be read or a line is not a value of the type.
  bool load(const std::string& path, std::string& err);
  // The same from a file's text (`name` for the errors).
  bool load_text(std::string_view text, const std::string& name, std::string& err);
  // Writes every value, one a line, in the file format; false with err.
  bool save(const std::string& path, std::string& err) const;
  // The file's text: the values in the file format, sorted.
  std::string save_text() const;
  // The buffer as this set's value: false when it cannot be one (a digest
  // or an address of the wrong length).
  bool value(const uint8_t* s, uint32_t n, std::string& out) const;
  bool contains(const uint8_t* s, uint32_t n) const;
  bool add(const uint8_t* s, uint32_t n);     // true when it was not there and was added
  bool remove(const uint8_t* s, uint32_t n);  // true when it was there
  size_t size() const;
  uint64_t full() const { return full_.load(std::memory_order_relaxed); }  // adds refused at the capacity
  static bool parse_type(std::string_view w, Type& t);
  static const char* type_name(Type t);

 private:
  bool parse_line(std::string_view line, std::string& out) const;
  std::string text(const std::string& v) const;
  std::string name_;
  Type type_;
  size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_set<std::string> values_;
  std::atomic<uint64_t> full_{0};
};

// A rule's use of a set: dataset:CMD,NAME[, type T][, load F][, save F]
// [, state F][, memcap M][, hashsize H].
struct DatasetUse {
  enum Cmd : uint8_t { IsSet, IsNotSet, Set, Unset };
  Cmd cmd = IsSet;
  std::string name, load, save;
  Dataset::Type type = Dataset::Type::String;
  bool typed = false;  // a type was given
  uint64_t memcap = 0;
};
bool parse_dataset(std::string_view v, DatasetUse& u, std::string& err);
// Suricata's size values (memcaps, limits): N, Nb, Nkb, Nmb, Ngb (k, m, g
// too; any case), below 2^40 before the unit; false when it is not one.
bool parse_suricata_size(std::string_view v, uint64_t& out);
// Runs a use against the buffer: isset / isnotset test it; set / unset
// change the set and hold when they did.
bool dataset_check(const DatasetUse& u, Dataset& set, const uint8_t* s, uint32_t n);

// The sets of a rule set, by name: the first rule that names one with a
// type (or load) makes it; the others must agree.
class Datasets {
 public:
  // The set u names, made (and its file loaded) the first time; null with
  // err when the uses disagree or the file is unusable. Relative paths, as
  // Suricata's: a load file in the rules file's directory `dir` when it is
  // there, else in the data directory; save and state files in the data
  // directory (dir when there is none).
  std::shared_ptr<Dataset> bind(const DatasetUse& u, const std::string& dir, std::string& err);
  void set_data_dir(std::string d) { data_dir_ = std::move(d); }
  // Writes the sets with a save or state file; false with the first error.
  bool save_all(std::string& err) const;
  const std::map<std::string, std::shared_ptr<Dataset>>& sets() const { return sets_; }

 private:
  std::map<std::string, std::shared_ptr<Dataset>> sets_;
  std::map<std::string, std::string> save_;  // name -> file
  std::string data_dir_;
};

}  // namespace shoal::ids
