// What IPsecOutbound and IPsecInbound share: the SA and policy database of
// one SAD file (one per file, shared by both directions and every worker),
// each worker's keyed ciphers, and the selector fields of a packet.
#pragma once
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "shoal/crypto/esp.hh"
#include "shoal/crypto/sadb.hh"
#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/offload/mirror.hh"

namespace shoal {

// Whether the offloaded IPsec elements split GCM and CTR packets among
// threads on a device (SHOAL_ESP_SPLIT=0 in the environment keeps a thread
// per packet, to measure the difference).
inline bool esp_split_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("SHOAL_ESP_SPLIT");
    return !e || std::string_view(e) != "0";
  }();
  return on;
}

// The SAs of a worker's snapshot as a device sees them (the offloaded
// elements): the keys of each SA whose suite the device does, in a table
// (an SA's index is its place there), mirrored to the device per snapshot.
class DeviceSaKeys {
 public:
  void refresh(const std::shared_ptr<const crypto::Database>& db) {
    if (t_ && t_->db == db) return;
    auto t = std::make_shared<Table>();
    t->db = db;
    for (const auto& sa : db->sas()) {
      k::EspKeys kk;
      std::string why;
      if (!crypto::esp_device_keys(sa->params, kk, why)) continue;
      t->index.emplace(sa.get(), uint32_t(t->keys.size()));
      t->keys.push_back(kk);
      t->sas.push_back(sa.get());
    }
    if (t->keys.empty()) t->keys.emplace_back();  // (a valid pointer for the kernel)
    t_ = std::move(t);
  }
  // The SA's index, or -1 when the device does not do its suite.
  int32_t index(const crypto::SA* sa) const {
    auto it = t_->index.find(sa);
    return it == t_->index.end() ? -1 : int32_t(it->second);
  }
  crypto::SA* sa(uint32_t i) const { return t_->sas[i]; }
  // Whether the device does every SA's suite.
  bool covers_all() const { return t_->sas.size() == t_->db->sas().size(); }
  const k::EspKeys& keys(uint32_t i) const { return t_->keys[i]; }
  // The keys and AES's table where the launch's kernel reads them.
  bool launch(offload::Launch& L, offload::TableMirror& m, const k::EspKeys*& keys, const uint32_t*& te0,
              std::string& err) {
    keys = t_->keys.data();
    te0 = crypto::aes_te0();
    if (L.host) return true;
    if (!m.sync(L, t_,
                {{t_->keys.data(), t_->keys.size() * sizeof(k::EspKeys)}, {te0, k::kAesTableWords * sizeof(uint32_t)}},
                err))
      return false;
    keys = m.at<k::EspKeys>(0);
    te0 = m.at<uint32_t>(1);
    return true;
  }

 private:
  struct Table {
    std::shared_ptr<const crypto::Database> db;
    std::vector<k::EspKeys> keys;
    std::vector<crypto::SA*> sas;
    std::unordered_map<const crypto::SA*, uint32_t> index;
  };
  std::shared_ptr<Table> t_;
};

template <class D, class Base = PacketElement<D>>
class IPsecBase : public Base {
 public:
  void push(int port, PacketBatch* b) override {
    refresh();
    Base::push(port, b);
    tally_.flush();
  }
  PacketBatch* pull(int port, uint32_t max) override {
    refresh();
    PacketBatch* r = Base::pull(port, max);
    tally_.flush();
    return r;
  }
  // (PacketElement's hook: the batch's transforms are queued; the
  // element's finish_batch completes them)
  void begin_batch(PacketBatch*) { queuing_ = true; }

 protected:
  void read_sad(Args& a) {
    InputPath f;
    std::string engine = "auto";
    a.read_mp("SAD", f).read("VERBOSE", verbose_).read("CRYPTO", engine);
    if (!crypto::parse_engine(engine, engine_)) a.fail(fmt::format("CRYPTO '{}': auto, ipsec-mb or openssl", engine));
    if (engine_ == crypto::Engine::IpsecMb && !crypto::have_ipsec_mb())
      a.fail("CRYPTO ipsec-mb: intel-ipsec-mb is not built in (libipsec-mb-dev) or this CPU lacks AES-NI");
    file_ = f.path;
    loc_ = a.element_loc();
  }
  // Loads the file once for all workers (and for the other direction's
  // element naming the same file); errors point at the element.
  void load_sad() {
    bool first = false;
    sad_ = shared_state_named<crypto::SharedDatabase>(this, "ipsec-sad:" + file_, &first);
    if (first) {
      std::string err;
      if (!sad_->load_file(file_, err)) throw ConfigError(loc_, fmt::format("{}: {}", this->name(), err));
      if (verbose_) {
        auto s = sad_->snapshot();
        fmt::print(stderr, "shoal: {}: {} SAs and {} policies from {}\n", this->name(), s->sas().size(),
                   s->policies().size(), file_);
      }
    }
    refresh();
  }
  void add_sad_handlers() {
    this->add_read_handler("sa", [this] { return sad_->snapshot()->list_sas(); });
    this->add_read_handler("policies", [this] { return sad_->snapshot()->list_policies(); });
    // each SA's engine, as this worker's ciphers have it (SAs not used yet: what auto would pick)
    this->add_read_handler("crypto", [this] {
      std::string s;
      for (const auto& sa : sad_->snapshot()->sas()) {
        crypto::Engine e = crypto::engine_for(sa->params, engine_, true);
        s += fmt::format("spi {:#010x} {}\n", sa->params.spi, e == crypto::Engine::IpsecMb ? "ipsec-mb" : "openssl");
      }
      return s;
    });
    // A command in ip-xfrm syntax: state add|update|delete|flush, policy ...
    this->add_write_handler("xfrm", [this](const std::string& cmd) {
      std::string err;
      if (!sad_->apply(cmd, err)) throw std::runtime_error(err);
    });
  }

  // The worker's snapshot, taken again when a write handler changed it.
  void refresh() {
    uint64_t g = sad_->generation();
    if (g == gen_) return;
    tally_.flush();  // (its SA may leave with the old snapshot)
    auto next = sad_->snapshot();
    std::unordered_map<const crypto::SA*, std::unique_ptr<crypto::EspCipher>> keep;
    for (const auto& sa : next->sas()) {
      auto it = ciphers_.find(sa.get());
      if (it != ciphers_.end()) keep.emplace(sa.get(), std::move(it->second));
    }
    ciphers_ = std::move(keep);
    last_sa_ = nullptr;
    db_ = std::move(next);
    gen_ = g;
  }
  // This worker's cipher for an SA, keyed when first used; nullptr when
  // the crypto library refuses it (counted by the caller, never thrown
  // through the data path).
  crypto::EspCipher* cipher(const crypto::SA* sa) {
    if (sa == last_sa_) return last_;
    auto& c = ciphers_[sa];
    if (!c) {
      try {
        c = std::make_unique<crypto::EspCipher>(sa->params, engine_, true);
      } catch (const std::exception& e) {
        ciphers_.erase(sa);
        if (!warned_) fmt::print(stderr, "shoal: {}: spi {:#010x}: {}\n", this->name(), sa->params.spi, e.what());
        warned_ = true;
        return nullptr;
      }
    }
    last_sa_ = sa;
    last_ = c.get();
    return last_;
  }
  // A batch's transforms go through the queue (begin_batch to
  // finish_batch, and the host's share of an offloaded aggregate): the
  // packet's work up to the cipher is done in process(), the rest when the
  // queue completes. Outside (process() called alone) they are done at once.
  // Writes each queued packet's result (`r` of the pending entries, in
  // batch order) into its slot of b; true when any is not output 0 (the
  // result process() gave them).
  template <class P>
  static bool settle(PacketBatch* b, const std::vector<P>& pend) {
    size_t c = 0;
    bool changed = false;
    b->for_each([&](uint32_t i, Packet* p) {
      if (c < pend.size() && pend[c].p == p) {
        b->result(i) = int16_t(pend[c].r);
        changed |= pend[c].r != 0;
        ++c;
      }
    });
    return changed;
  }
  // seal/open, with a library failure (an exception) turned into false.
  static bool run_cipher(crypto::EspCipher& c, bool seal, uint8_t* esp, uint32_t text, uint64_t seq, bool& failed) {
    try {
      return seal ? c.seal(esp, text, seq) : c.open(esp, text, seq);
    } catch (const std::exception&) {
      failed = true;
      return false;
    }
  }

  // The selector of the IP packet at `ip` (len bytes, its version checked).
  static crypto::Selector selector(const uint8_t* ip, uint32_t len) {
    crypto::Selector s;
    uint32_t l4 = 0;
    bool first = true;
    if ((ip[0] >> 4) == 4) {
      s.src.set_v4(ip + 12);
      s.dst.set_v4(ip + 16);
      s.proto = ip[9];
      l4 = uint32_t(ip[0] & 0xf) * 4;
      first = (k::load_be16(ip + 6) & 0x1fff) == 0;
    } else {
      s.src.set_v6(ip + 8);
      s.dst.set_v6(ip + 24);
      uint8_t nh = ip[6];
      l4 = 40;
      // hop-by-hop, routing and destination options, then a fragment header
      while ((nh == 0 || nh == 43 || nh == 60 || nh == 44) && l4 + 8 <= len) {
        if (nh == 44) {
          first = (k::load_be16(ip + l4 + 2) & 0xfff8) == 0;
          nh = ip[l4];
          l4 += 8;
          continue;
        }
        uint8_t next = ip[l4];
        l4 += (uint32_t(ip[l4 + 1]) + 1) * 8;
        nh = next;
      }
      s.proto = nh;
    }
    if (first && l4 + 4 <= len) {
      if (s.proto == 6 || s.proto == 17 || s.proto == 132 || s.proto == 33) {
        s.sport = k::load_be16(ip + l4);
        s.dport = k::load_be16(ip + l4 + 2);
      } else if (s.proto == 1 || s.proto == 58) {
        s.sport = ip[l4];  // Linux keys ICMP type and code as ports
        s.dport = ip[l4 + 1];
      }
    }
    return s;
  }
  // The IP packet at the start of p: its version, checked against its
  // length field (trimmed to it, or with `trim` the bytes to trim said
  // there); 0 when it is not a whole IP packet.
  static int ip_version(Packet* p, uint32_t* trim = nullptr) {
    uint32_t len = p->length();
    const uint8_t* ip = p->data();
    uint32_t tot = 0;
    int v = 0;
    if (len >= 20 && (ip[0] >> 4) == 4) {
      uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
      tot = k::load_be16(ip + 2);
      if (hl < 20 || tot < hl || tot > len) return 0;
      v = 4;
    } else if (len >= 40 && (ip[0] >> 4) == 6) {
      tot = 40u + k::load_be16(ip + 4);
      if (tot > len) return 0;
      v = 6;
    } else {
      return 0;
    }
    if (trim)
      *trim = len - tot;
    else if (tot < len)
      p->take(len - tot);  // link-layer padding
    return v;
  }

  std::string file_;
  Loc loc_;
  bool verbose_ = true, warned_ = false;
  crypto::Engine engine_ = crypto::Engine::Auto;
  std::shared_ptr<crypto::SharedDatabase> sad_;
  std::shared_ptr<const crypto::Database> db_;
  uint64_t gen_ = 0;
  std::unordered_map<const crypto::SA*, std::unique_ptr<crypto::EspCipher>> ciphers_;
  crypto::SaTally tally_;  // the SAs' packet and byte counters, added per batch
  const crypto::SA* last_sa_ = nullptr;
  crypto::EspCipher* last_ = nullptr;
  crypto::EspQueue queue_;
  bool queuing_ = false;
  uint32_t slot_ = 0;  // offload_post: the aggregate's slot of the packet process() is given
};

}  // namespace shoal
