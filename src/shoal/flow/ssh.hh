// SSH (RFC 4253) as an IDS reads it: each side's identification line
// ("SSH-protoversion-softwareversion comments"), then the binary packets in
// the clear until NEWKEYS: the KEXINIT's algorithm lists give HASSH (the
// client's) and HASSH-server fingerprints (MD5 of "kex;ciphers;macs;
// compression" for that side's direction). Past NEWKEYS the stream is
// encrypted and not read. Bounded: the identification line at most 255
// bytes (RFC 4253 4.2), lines before it (a server may send some) at most 8 KiB,
// a packet at most 256 KiB.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace shoal::flow {

struct SshSide {
  bool banner = false;  // the identification line was read
  std::string proto_version, software_version, comments;
  bool kexinit = false;
  std::string hassh, hassh_string;  // the side's KEXINIT fingerprint (client: HASSH, server: HASSH-server)
  bool newkeys = false;             // encrypted from here on
};

// 1: the bytes start an SSH identification line ("SSH-"); 0: they do not;
// -1: too few bytes to say.
int ssh_detect(const uint8_t* d, uint32_t n);

class SshConn {
 public:
  enum What : uint8_t { kBanner, kKexinit, kNewkeys };
  // What progressed, on which side (0 client, 1 server).
  using Event = std::function<void(uint8_t dir, uint8_t what)>;
  explicit SshConn(Event on) : on_(std::move(on)) {}
  // In-order stream data of one direction; false once it is given up (not
  // SSH, or past the bounds).
  bool data(uint8_t dir, const uint8_t* d, uint32_t n);
  void gap(uint8_t dir) { state_[dir & 1] = kDone; }
  const SshSide& side(uint8_t dir) const { return side_[dir & 1]; }
  bool done() const { return side_[0].newkeys && side_[1].newkeys; }

 private:
  enum State : uint8_t { kLine, kPackets, kDone };
  bool packet(uint8_t dir, const uint8_t* p, uint32_t n);
  Event on_;
  SshSide side_[2];
  State state_[2] = {kLine, kLine};
  std::string buf_[2];
  uint32_t skipped_[2] = {0, 0};  // bytes of lines before the identification line
};

}  // namespace shoal::flow
