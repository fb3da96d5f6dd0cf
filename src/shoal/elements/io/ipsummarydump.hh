// Click's IP summary dump text format, shared by ToIPSummaryDump and
// FromIPSummaryDump: the field names (with Click's synonyms and its "X" ->
// "ip_X" rule), how each field is written from a packet, and how a line of
// fields becomes a packet again.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/core/packet.hh"

namespace shoal::ipsum {

enum Field : int {
  kTimestamp,
  kNTimestamp,
  kTsSec,
  kTsUsec,
  kTsUsec1,
  kCount,
  kLink,
  kDirection,
  kAggregate,
  kWireLen,
  kIpSrc,
  kIpDst,
  kIpTos,
  kIpDscp,
  kIpEcn,
  kIpTtl,
  kIpFrag,
  kIpFragoff,
  kIpId,
  kIpSum,
  kIpProto,
  kIpHl,
  kIpLen,
  kIpCaptureLen,
  kIpOpt,
  kSport,
  kDport,
  kTcpSeq,
  kTcpAck,
  kTcpOff,
  kTcpFlags,
  kTcpWindow,
  kTcpUrp,
  kTcpOpt,
  kUdpLen,
  kIcmpType,
  kIcmpCode,
  kIcmpTypeName,
  kIcmpCodeName,
  kIcmpFlowid,
  kIcmpSeq,
  kIcmpNextmtu,
  kPayloadLen,
  kPayload,
  kPayloadMd5,
  kPayloadMd5Hex,
  kEthSrc,
  kEthDst,
  kEthType,
  kNumFields
};

// The field a name means (Click's synonyms, spaces as underscores, and a
// name without '_' taken as "ip_NAME"), or -1.
int find_field(std::string_view name);
const char* field_name(int f);
// "src dst sport" -> fields; false with `bad` set at an unknown name.
bool parse_fields(std::string_view text, std::vector<int>& out, std::string& bad);

// Writes field f of packet p (its IPv4 header found from the network header
// annotation, else an Ethernet IPv4 frame or a raw IPv4 packet), or "-"
// when the packet lacks it, as Click's ToIPSummaryDump does.
void write_field(std::string& out, int f, const Packet* p);
// Why Click's ToIPSummaryDump(BAD_PACKETS true) calls the packet bad
// ("no IP header", "truncated IP header capture"...), or "" when it is not.
std::string bad_reason(const Packet* p);

// One line of values in the order of `fields` -> packet p (cleared first):
// an IPv4 packet built as Click's FromIPSummaryDump builds it (TTL 100,
// headers sized by the protocol, ip_len from the fields or the data, the
// UDP length filled in; with `checksum`, the packet padded to ip_len and
// every checksum set). `default_proto` is the '!proto' line's protocol (-1: none; the fields
// imply one, else TCP, as Click).
// False with `err` when no field could be used or the packet does not fit.
bool build_packet(Packet* p, const std::vector<int>& fields, const std::vector<std::string>& values, int default_proto,
                  bool checksum, std::string& err);

// Click's ip_opt text for the IPv4 options at o (n bytes): '.' for none,
// '?' for options that do not parse; NOP and EOL only with `padding`
// (ToIPSummaryDump leaves them out). ipsummarydump_options.cc has the forms.
void write_ip_options(std::string& out, const uint8_t* o, size_t n, bool padding);
// The text -> the option bytes (at most 40); false when it does not parse.
bool parse_ip_options(std::string_view text, std::string& bytes);

// Click's binary summary dumps ('!binary' after the header lines): records
// of a 4-byte big-endian length (itself included; the top bit marks a
// metadata record, a text line) and the fields in '!data' order, each of
// Click's size (ip_opt and tcp_opt: a length byte and the option bytes).
// The size of f in a record (0: variable), or -1 when Click has no binary
// form for it.
int binary_size(int f);
// Appends p's record (a field the packet lacks is zeros, as in Click).
void write_binary(std::string& out, const std::vector<int>& fields, const Packet* p);
// Appends a metadata record holding `line` (ending with a newline).
void write_binary_note(std::string& out, std::string_view line);
// A record's fields (after its length word, n bytes) -> packet p, as
// build_packet does from text.
bool build_packet_binary(Packet* p, const std::vector<int>& fields, const uint8_t* rec, size_t n, int default_proto,
                         bool checksum, std::string& err);

// Splits a line into values: spaces separate them, except inside double
// quotes (payloads).
std::vector<std::string> split_values(std::string_view line);

// Click's ICMP type names ("echo", "unreachable"...), or nullptr.
const char* icmp_type_name(int type);
bool icmp_type_number(std::string_view name, int& type);
// Click's names of the codes of unreachable, redirect, time exceeded and
// parameter problem messages ("port", "needfrag"...), or nullptr.
const char* icmp_code_name(int type, int code);
// Click's names of IP protocols ("tcp", "udp", "icmp"...), or nullptr.
const char* ip_proto_name(int proto);

}  // namespace shoal::ipsum
