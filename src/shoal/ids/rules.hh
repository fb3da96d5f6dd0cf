// Snort 2 / Suricata rules: the model and the parser.
//
//   action proto src sport -> dst dport (option; option:value; ...)
//
// Addresses and ports take variables ($HOME_NET), lists ([a,b]), ranges
// (1024:), negation (!) and `any`, nested; the direction is -> or <>. The
// options the engine honours: msg, sid, gid, rev, content (|hex| bytes,
// escapes, ! negation), nocase, offset, depth, distance, within,
// fast_pattern, rawbytes, pcre (flags i s m x A E G R B, captures to pkt/flow/alert variables), dsize, flow
// (Suricata's: established, not_established, to_server, to_client,
// no_stream, stateless), flowbits, noalert, classtype, priority, reference,
// metadata. Any other option, an HTTP buffer modifier or an
// application-layer protocol makes the rule unusable: it is reported with
// file, line and sid and skipped (counted), or with `strict` the load fails.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "shoal/ids/dataset.hh"
#include "shoal/ids/transform.hh"

namespace shoal::ids {

// An IPv4 or IPv6 address as parsed from a packet.
struct Addr {
  bool v6 = false;
  uint8_t b[16] = {};
};

// A tree of address or port terms: a list matches when any of its positive
// members does (or it has none) and none of its negated members does.
struct AddrSet {
  bool neg = false, any = false, list = false;
  bool v6 = false;
  uint8_t net[16] = {};
  uint8_t len = 0;
  std::vector<AddrSet> kids;
  bool match(const Addr& a) const;
};

struct PortSet {
  bool neg = false, any = false, list = false;
  uint16_t lo = 0, hi = 65535;
  std::vector<PortSet> kids;
  // A long list's every port, one bit each (set by Database::build, shared
  // by the rules with an equal set): match() in one load
  std::shared_ptr<const std::vector<uint64_t>> bits;
  bool match(uint16_t p) const;
};

// Where a content or pcre looks: the packet's payload, or one of an
// application-layer transaction's buffers (Suricata's sticky buffers and
// Snort's http_* modifiers).
enum class Buf : uint8_t {
  Packet,
  HttpUri,
  HttpUriRaw,
  HttpMethod,
  HttpHost,
  HttpHostRaw,
  HttpUserAgent,
  HttpHeader,
  HttpHeaderRaw,
  HttpCookie,
  HttpRequestBody,
  HttpRequestLine,
  HttpProtocol,
  HttpReferer,
  HttpContentType,
  HttpStatCode,
  HttpStatMsg,
  HttpResponseLine,
  HttpResponseBody,
  HttpServer,
  HttpConnection,
  HttpAccept,
  HttpAcceptEnc,
  HttpAcceptLang,
  HttpContentLen,
  HttpLocation,
  HttpStart,           // the request (or response) line and headers, as sent
  HttpRequestHeader,   // each request header, "Name: value" (a multi-buffer)
  HttpResponseHeader,  // each response header
  HttpHeaderNames,     // the header names (either side's)
  HttpFileName,        // the transaction's files' names (file.name, filename, fileext of an http rule)
  // DNS (multi-buffers: a run matches when one of the values does)
  DnsQuery,           // a request's query names (dns.query)
  DnsQueriesRrname,   // the query names of either side
  DnsAnswersRrname,   // the answer names
  DnsResponseRrname,  // every name of a response (queries, answers, authorities, additionals)
  // TLS (the handshake's)
  TlsSni,
  TlsCertSubject,
  TlsCertIssuer,
  TlsCertSerial,
  TlsCertFingerprint,
  TlsCerts,           // every certificate of the server's chain, DER (a multi-buffer)
  TlsSubjectAltName,  // the server certificate's DNS names (a multi-buffer)
  TlsRandom,          // this side's hello random (32 bytes), its first 4, its last 28
  TlsRandomTime,
  TlsRandomBytes,
  Ja3Hash,
  Ja3String,
  Ja3sHash,
  Ja3sString,
  Ja4Hash,
  // the packet's headers, options included (ipv4.hdr, ...): read per packet
  Ipv4Hdr,
  Ipv6Hdr,
  TcpHdr,
  UdpHdr,
  Icmpv4Hdr,
  Icmpv6Hdr,
  // SIP (a message's; the header ones are multi-buffers: a header may repeat)
  SipMethod,
  SipUri,
  SipRequestLine,
  SipStatCode,
  SipStatMsg,
  SipResponseLine,
  SipProtocol,
  SipFrom,
  SipTo,
  SipVia,
  SipUserAgent,
  SipContentType,
  SipContentLength,
  // SSH (each side's: the rule's direction, or the packet's)
  SshProto,
  SshSoftware,
  SshHassh,  // the client's KEXINIT fingerprint
  SshHasshString,
  SshHasshServer,  // the server's
  SshHasshServerString,
  // FTP (a command's transaction)
  FtpCommand,
  FtpCommandData,
  FtpCompletionCode,  // each reply's code (a multi-buffer)
  FtpReply,           // each reply's text
  // SMTP (a transaction's: the commands, then its message's headers, URLs and attachments)
  SmtpHelo,
  SmtpMailFrom,
  SmtpRcptTo,  // each recipient (a multi-buffer)
  EmailFrom,
  EmailTo,
  EmailCc,
  EmailSubject,
  EmailDate,
  EmailMessageId,
  EmailXMailer,
  EmailReceived,  // each Received header (a multi-buffer)
  EmailUrl,       // each URL of the text (a multi-buffer)
  SmtpFileData,   // each attachment's content, decoded (file.data of an smtp rule)
  SmtpFileName,   // each attachment's name (file.name)
  Count
};
const char* buf_name(Buf b);
// Buffers only a response has (the others, except headers, cookies and
// content type which either side has, are the request's).
bool response_only(Buf b);
bool either_side(Buf b);
bool dns_buf(Buf b);
bool tls_buf(Buf b);
inline bool sip_buf(Buf b) { return b >= Buf::SipMethod && b <= Buf::SipContentLength; }
inline bool ssh_buf(Buf b) { return b >= Buf::SshProto && b <= Buf::SshHasshServerString; }
inline bool ftp_buf(Buf b) { return b >= Buf::FtpCommand && b <= Buf::FtpReply; }
inline bool smtp_buf(Buf b) { return b >= Buf::SmtpHelo && b <= Buf::SmtpFileName; }
// The packet's payload or one of its headers (not an application buffer).
inline bool packet_buf(Buf b) { return b == Buf::Packet || (b >= Buf::Ipv4Hdr && b <= Buf::Icmpv6Hdr); }

// Application protocols a rule header may name.
enum App : uint16_t {
  kAppNone = 0,
  kAppHttp = 1,
  kAppDns = 2,
  kAppTls = 3,
  kAppSip = 4,
  kAppSsh = 5,
  kAppFtp = 6,
  kAppSmtp = 7
};
const char* app_name(uint16_t app);  // "http", "dns", "tls", "sip", "ssh", "ftp", "smtp"; null for none

// Suricata's application-layer events this engine raises, per protocol (a
// transaction's events are bits in this order).
enum DnsEvent : uint8_t {
  kDnsMalformedData,
  kDnsNotARequest,
  kDnsNotAResponse,
  kDnsZFlagSet,
  kDnsInvalidOpcode,
  kDnsInvalidAdditionals,
  kDnsInvalidAuthorities,
  kDnsNameTooLong,
};
enum FtpEvent : uint8_t {
  kFtpRequestCommandTooLong,
  kFtpResponseCommandTooLong,
  kFtpFileBeforePort,
  kFtpFileWithoutName
};
// HTTP's: libhtp's warnings and errors and its transactions' flags, as
// Suricata names them (http-events.rules)
enum HttpEvent : uint8_t {
  kHttpUnknownError,
  kHttpGzipDecompressionFailed,
  kHttpRequestFieldMissingColon,
  kHttpResponseFieldMissingColon,
  kHttpInvalidRequestChunkLen,
  kHttpInvalidResponseChunkLen,
  kHttpInvalidTransferEncodingValueInRequest,
  kHttpInvalidContentLengthFieldInRequest,
  kHttpInvalidContentLengthFieldInResponse,
  kHttp100ContinueAlreadySeen,
  kHttpUnableToMatchResponseToRequest,
  kHttpInvalidServerPortInRequest,
  kHttpRequestHeaderInvalid,
  kHttpResponseHeaderInvalid,
  kHttpMissingHostHeader,
  kHttpHostHeaderAmbiguous,
  kHttpInvalidRequestFieldFolding,
  kHttpInvalidResponseFieldFolding,
  kHttpRequestFieldTooLong,
  kHttpResponseFieldTooLong,
  kHttpRequestServerPortTcpPortMismatch,
  kHttpRequestUriHostInvalid,
  kHttpRequestHeaderHostInvalid,
  kHttpUriDelimNonCompliant,
  kHttpMethodDelimNonCompliant,
  kHttpRequestLineLeadingWhitespace,
  kHttpTooManyEncodingLayers,
  kHttpAbnormalCeHeader,
  kHttpRequestAuthUnrecognized,
  kHttpRequestHeaderRepetition,
  kHttpResponseHeaderRepetition,
  kHttpResponseMultipartByteranges,
  kHttpResponseAbnormalTransferEncoding,
  kHttpResponseChunkedOldProto,
  kHttpResponseInvalidProtocol,
  kHttpResponseInvalidStatus,
  kHttpRequestLineIncomplete,
  kHttpRequestLineInvalid,
  kHttpRequestBodyUnexpected,
  kHttpLzmaMemlimitReached,
  kHttpDuplicateContentLengthFieldInRequest,
  kHttpDuplicateContentLengthFieldInResponse,
  kHttpCompressionBomb,
  kHttpTooManyWarnings,
  kHttpRequestLineMissingProtocol,
  kHttpRequestTooManyHeaders,
  kHttpResponseTooManyHeaders,
  kHttpEventCount
};
// TLS's: Suricata's TLS decoder events that this parser raises (records,
// handshake messages, certificates, heartbeats), for the connection's one
// transaction (tls-events.rules)
enum TlsEvent : uint8_t {
  kTlsInvalidSslv2Header,
  kTlsInvalidTlsHeader,
  kTlsInvalidRecordVersion,
  kTlsInvalidRecordType,
  kTlsInvalidRecordLength,
  kTlsInvalidHandshakeMessage,
  kTlsHandshakeInvalidLength,
  kTlsHeartbeatMessage,
  kTlsInvalidHeartbeatMessage,
  kTlsOverflowHeartbeatMessage,
  kTlsDataleakHeartbeatMismatch,
  kTlsMultipleSniExtensions,
  kTlsInvalidSniType,
  kTlsInvalidSniLength,
  kTlsInvalidCertificate,
  kTlsCertificateInvalidLength,
  kTlsTooManyRecordsInPacket,
  kTlsInvalidSslRecord,
  kTlsErrorMessageEncountered,
  kTlsEventCount
};
// "dns.z_flag_set" -> (kAppDns, kDnsZFlagSet); false when unknown.
bool find_app_event(std::string_view name, uint16_t& app, uint8_t& event);
const char* app_event_name(uint16_t app, uint8_t event);  // "z_flag_set" (without the protocol)

// Suricata's stream events this engine raises (stream-event:NAME): on the
// packet whose data met a hole in its stream, or first went past the
// reassembly depth; the rest on a packet the session checks
// (flow::TcpSession) found wrong.
enum StreamEvent : uint8_t {
  kStreamReassemblySeqGap,
  kStreamReassemblyDepthReached,
  kStream3whsAckInWrongDir,
  kStream3whsAckDataInject,
  kStream3whsAsyncWrongSeq,
  kStream3whsRightSeqWrongAckEvasion,
  kStream3whsSynackInWrongDirection,
  kStream3whsSynackResendWithDifferentAck,
  kStream3whsSynackToserverOnSynRecv,
  kStream3whsSynackWithWrongAck,
  kStream3whsSynackFlood,
  kStream3whsSynackTfoDataIgnored,
  kStream3whsSynResendDiffSeqOnSynRecv,
  kStream3whsSynToclientOnSynRecv,
  kStream3whsWrongSeqWrongAck,
  kStream3whsSynFlood,
  kStream4whsSynackWithWrongAck,
  kStream4whsSynackWithWrongSyn,
  kStream4whsWrongSeq,
  kStreamEstSynackResend,
  kStreamEstSynackResendWithDifferentAck,
  kStreamEstSynackResendWithDiffSeq,
  kStreamEstSynackToserver,
  kStreamEstSynResend,
  kStreamEstSynResendDiffSeq,
  kStreamEstSynToclient,
  kStreamPktInvalidTimestamp,
  kStreamRstButNoSession,
  kStreamFinButNoSession,
  kStreamEstInvalidAck,
  kStreamEstPktBeforeLastAck,
  kStreamEstPacketOutOfWindow,
  kStreamPktInvalidAck,
  kStreamFinInvalidAck,
  kStreamFinOutOfWindow,
  kStreamFinSyn,
  kStreamRstInvalidAck,
  kStreamShutdownSynResend,
  kStreamPktBrokenAck,
  kStreamSuspectedRstInject,
  kStreamPktBadWindowUpdate,
  kStreamPktSpuriousRetransmission,
  kStreamPktRetransmission,
  kStream4whsInvalidAck,
  kStreamFin1FinWrongSeq,
  kStreamFin1InvalidAck,
  kStreamFin1AckWrongSeq,
  kStreamFin2FinWrongSeq,
  kStreamFin2InvalidAck,
  kStreamFin2AckWrongSeq,
  kStreamClosingAckWrongSeq,
  kStreamClosingInvalidAck,
  kStreamClosewaitFinOutOfWindow,
  kStreamClosewaitInvalidAck,
  kStreamClosewaitPktBeforeLastAck,
  kStreamClosewaitAckOutOfWindow,
  kStreamLastackInvalidAck,
  kStreamLastackAckWrongSeq,
  kStreamTimewaitAckWrongSeq,
  kStreamTimewaitInvalidAck,
  kStreamWrongThread,  // (never raised: a flow stays on its worker here)
  kStreamReassemblyOverlapDifferentData,
  kStreamEventCount
};
const char* stream_event_name(uint8_t e);  // "reassembly_seq_gap"
bool find_stream_event(std::string_view name, uint8_t& e);

// One content or pcre, in rule order (relative ones follow the previous).
struct Content {
  std::string bytes;  // the pattern, escapes and |hex| resolved
  bool neg = false, nocase = false, fast_pattern = false;
  bool endswith = false;  // the match ends where the buffer does
  bool has_offset = false, has_depth = false, has_distance = false, has_within = false;
  int32_t offset = 0, depth = 0, distance = 0, within = 0;
  int8_t var_offset = -1, var_depth = -1, var_distance = -1, var_within = -1;  // byte_extract variables read
  bool relative() const { return has_distance || has_within; }
};

// pcre flags that name an HTTP buffer (U I P H D M C K S Y V W Q).
bool pcre_buffer_flag(char f);

// A pcre capture group kept in a variable (Suricata's pcre captures): of
// the packet (pktvar), the flow (flowvar, which lasts) or the alert (its
// context). Named groups say where: (?P<pkt_NAME>...), (?P<flow_NAME>...),
// (?P<alert_NAME>...); or the groups in order after the flags:
// "/.../, pkt:NAME, flow:NAME".
struct PcreCapture {
  enum Scope : uint8_t { Pkt, Flow, Alert };
  Scope scope = Pkt;
  std::string name;
  uint16_t group = 0;
};
struct Pcre {
  std::string pattern, flags;  // as written between the slashes, and after
  bool neg = false, relative = false;
  char buffer_flag = 0;        // U I P H D M C K S Y V W Q: the HTTP buffer it looks at
  std::shared_ptr<void> code;  // compiled (pcre2_code), shared by copies
  std::vector<PcreCapture> captures;
};

// isdataat, byte_test and byte_jump: checks on the payload that take part in
// the relative positions like contents do (byte_jump moves the cursor).
struct ByteOp {
  // Bsize: the buffer's length within [lo, hi]; ByteExtract: a number read
  // into variable `var` (the cursor moves past it); ByteMath: var = number op rvalue
  // Absent: the buffer's first item, `absent` (neg: `absent: or_else`, the
  // rest of the run holds otherwise)
  // Dataset: the buffer tested against or added to a dataset (Item::dataset)
  // Base64Decode: decodes `value` bytes (RFC 4648, up to the first byte
  // outside the alphabet) from offset; the items after it marked Item::b64
  // (base64_data) read what it decoded, and end the run
  enum Kind : uint8_t {
    None,
    IsDataAt,
    ByteTest,
    ByteJump,
    Bsize,
    ByteExtract,
    ByteMath,
    Absent,
    Dataset,
    Base64Decode
  };
  Kind kind = None;
  bool relative = false, neg = false;
  int32_t offset = 0;
  uint8_t nbytes = 0;
  bool little = false, string = false;
  uint8_t base = 10;
  uint64_t bitmask = 0;
  // byte_test: the comparison ("<", ">", "=", "<=", ">=", "&", "^") and value
  char op[3] = {0, 0, 0};
  uint64_t value = 0;
  // bsize (value..hi; neg: outside)
  uint64_t hi = 0;
  // byte_jump
  uint64_t multiplier = 1;
  int32_t post_offset = 0;
  bool align = false, from_beginning = false, from_end = false;
  // byte_extract / byte_math variables (kMaxRuleVars per rule): the one set,
  // and those read for the offset and the value (-1: a literal)
  int8_t var = -1, var_offset = -1, var_value = -1;
  // the byte count read from a variable (byte_test, byte_jump, byte_math: a
  // count out of range then fails the check), or -1: nbytes
  int8_t var_nbytes = -1;
  char math = 0;         // byte_math: + - * / < (<<) > (>>)
  uint8_t align_to = 0;  // byte_extract: round the number up to a multiple of 2 or 4
};
constexpr int kMaxRuleVars = 8;

struct Item {
  bool is_pcre = false;
  ByteOp byte;  // kind != None: this item is a byte check, not a content
  Buf buf = Buf::Packet;
  int8_t xform = -1;  // the transform chain its buffer is read through (Rule::xforms), or none
  // the first item of a run although the item before it reads the same
  // buffer (the buffer was named again): a multi-buffer's runs hold each in
  // any value
  bool run_start = false;
  // base64_data: reads the bytes the Base64Decode item before it decoded
  // (the run's last items), not the buffer itself
  bool b64 = false;
  bool is_content() const { return !is_pcre && byte.kind == ByteOp::None; }
  bool relative() const;
  Content content;
  Pcre pcre;
  // byte.kind Dataset: the use (cmd, name, files) and the set, bound when
  // the rule set loads the rule (RuleSet's Datasets)
  std::shared_ptr<const DatasetUse> dataset_use;
  std::shared_ptr<Dataset> dataset;
};

// filemd5, filesha1, filesha256: a whole file's digest is in a list (neg:
// is not). The list (a file of hex digests, one a line, as Suricata reads
// it) is loaded relative to the rules file when the rule set takes the rule.
enum FileHashAlgo : uint8_t { kFileMd5 = 1, kFileSha1 = 2, kFileSha256 = 4 };
struct FileHashCond {
  uint8_t algo = kFileMd5;
  bool neg = false;
  std::string list;                                            // as written
  std::shared_ptr<const std::unordered_set<std::string>> set;  // lower-case hex, bound at load
};

enum class Proto : uint8_t { IP, TCP, UDP, ICMP, ICMP4, ICMP6, IP4, IP6, SCTP };

// The flow option's words (Rule::flow).
enum FlowOpt : uint8_t {
  kFlowEstablished = 1,
  kFlowNotEstablished = 2,
  kFlowToServer = 4,  // also from_client
  kFlowToClient = 8,  // also from_server
  kFlowNoStream = 16,
  kFlowStateless = 32,
  kFlowOnlyStream = 64,  // only_stream, and the protocol tcp-stream: matched on the reassembled stream
};

// One flowbits option. Names become bit numbers when the rule set is
// loaded (RuleSet numbers them in order of first use).
struct Flowbit {
  enum Cmd : uint8_t { Set, Unset, Toggle, IsSet, IsNotSet };
  Cmd cmd = Set;
  bool any = false;  // isset/isnotset a|b: any of them; a&b (or one name): all
  std::vector<std::string> names;
  std::vector<uint16_t> bits;
  bool check() const { return cmd == IsSet || cmd == IsNotSet; }
};

// How many distinct flowbit names a rule set may use: each flow keeps one
// bit per name, so per-flow memory stays fixed.
constexpr uint32_t kMaxFlowbits = 512;

// One flowint option (Suricata's integer per flow): set, add or subtract a
// value (a number, or another flowint's value), compare with one, or test
// whether it is set. Names become variable numbers when the rule set is
// loaded; run in rule order once the rest of the rule matched (a change
// before a failing comparison stays, as Suricata's).
struct Flowint {
  enum Op : uint8_t { Set, Add, Sub, Lt, Gt, Le, Ge, Eq, Ne, IsSet, NotSet };
  Op op = Set;
  std::string name, value_name;  // value_name: the value is that flowint's (empty: `value`)
  uint16_t var = 0, value_var = 0;
  uint32_t value = 0;
  bool modifies() const { return op <= Sub; }
};
// hostbits and xbits: a named bit per host (the packet's source, its
// destination, both) or per pair of hosts, which expires. Names become
// numbers when the rule set is loaded (HostBits keeps the bits).
struct Hostbit {
  enum Cmd : uint8_t { Set, Unset, Toggle, IsSet, IsNotSet };
  enum Track : uint8_t { Src, Dst, Both, Pair };
  Cmd cmd = Set;
  Track track = Src;
  std::string name;
  uint16_t id = 0;
  uint32_t expire = 30;  // seconds (Suricata's default)
  bool check() const { return cmd == IsSet || cmd == IsNotSet; }
};
// tag: what follows an alert is logged (Suricata's tagged packets): the
// session's packets, or a host's (the packet's source or destination), for
// a count of packets, bytes or seconds.
struct Tag {
  enum Scope : uint8_t { Session, Host };
  enum Metric : uint8_t { Packets, Bytes, Seconds };
  Scope scope = Session;
  Metric metric = Packets;
  uint32_t count = 256;  // (Suricata's default: 256 packets)
  bool dst = false;      // host: the destination's (default: the source's)
};
// How many distinct flowint names a rule set may use (each flow keeps them all).
constexpr uint32_t kMaxFlowints = 16;
// A flow's flowints: values, and a bit per variable set.
struct FlowInts {
  uint32_t v[kMaxFlowints] = {};
  uint32_t set = 0;
};

// Suricata's action order: pass, drop, reject, alert (log, sdrop as drop).
int action_rank(const std::string& action);
bool is_drop_action(const std::string& action);  // drop, sdrop, reject*

// A header field test (itype, icode, icmp_id, icmp_seq, ttl, ip_proto, id,
// seq, ack): lo <= value <= hi, or outside with neg.
// IPv4 options, as ipopts names them (any: any of them).
enum IpOpt : uint16_t {
  kIpOptRr = 1,
  kIpOptEol = 2,
  kIpOptNop = 4,
  kIpOptTs = 8,
  kIpOptSec = 16,
  kIpOptEsec = 32,
  kIpOptLsrr = 64,
  kIpOptSsrr = 128,
  kIpOptSatid = 256,
  kIpOptOther = 512,
  kIpOptAny = 1023
};

struct FieldCond {
  enum Field : uint8_t {
    IcmpType,
    IcmpCode,
    IcmpId,
    IcmpSeq,
    Ttl,
    IpProto,
    IpId,
    TcpSeq,
    TcpAck,
    TcpMss,      // the MSS option's value (none: no match)
    Icmpv6Mtu,   // an ICMPv6 Packet Too Big's MTU (other messages: no match)
    VlanLayers,  // the packet's VLAN tags
    VlanId,      // a tag's id: the one at `layer`, or any, or all
    // a transaction's (Rule::tx_fields)
    DnsOpcode,
    DnsRcode,
    DnsRrtype,
    TlsVersion,       // the negotiated version (0x0303...)
    SslState,         // bit masks of handshake states: lo the states asked, hi those negated (one item holding matches)
    SslVersion,       // bit masks of versions, as SslState
    TlsCertChainLen,  // the server's certificates
    FtpMode,          // 1 active, 2 passive
    FtpDynamicPort,
    FtpReplyReceived,  // 0 or 1
    FileSize,          // an HTTP file's size once it is whole (either side's, or one side's)
    FileSizeToServer,
    FileSizeToClient,
  };
  static constexpr int kTxFirst = DnsOpcode, kTxFields = 13;
  // Whose transactions a field's condition reads.
  uint16_t app() const;
  // ssl_state bits, ssl_version bits
  static constexpr uint64_t kClientHello = 1, kServerHello = 2, kClientKeyx = 4, kServerKeyx = 8, kUnknown = 16;
  bool mask() const { return field == SslState || field == SslVersion; }
  Field field;
  bool neg = false;
  uint64_t lo = 0, hi = UINT64_MAX;
  // VlanId: the layer (0 outermost to 2; -1 innermost to -3), or one of these
  static constexpr int8_t kAnyLayer = INT8_MIN, kAllLayers = INT8_MAX;
  int8_t layer = kAnyLayer;
};

// flags: the TCP flags that must be set (Snort/Suricata letters FSRPAUCE),
// with a modifier: exactly these (default), '+' these and maybe others,
// '*' any of these, '!' none of these; mask: flags ignored.
struct FlagsCond {
  uint8_t want = 0, mask = 0;
  char mod = 0;
};

// threshold and detection_filter: how often a match becomes an alert, per
// tracked key (source, destination, both, the rule, or the flow) within a
// time window.
struct Threshold {
  // EveryNth: type threshold; Backoff: at the count-th match, then at count x multiplier^k (no window)
  enum Type : uint8_t { None, Limit, EveryNth, Both, DetectionFilter, Backoff };
  enum Track : uint8_t { BySrc, ByDst, ByBoth, ByRule, ByFlow };
  Type type = None;
  Track track = BySrc;
  uint32_t count = 0, seconds = 0, multiplier = 0;
};

// threshold.config's suppress: matches of the rule raise no alert (all of
// them, or those from / to / either way of these addresses).
struct Suppress {
  enum Track : uint8_t { All, BySrc, ByDst, ByEither };
  Track track = All;
  AddrSet addrs;
};
// threshold.config's rate_filter: past `count` matches in `seconds` per
// tracked key, the rule's action becomes new_action for `timeout` seconds.
struct RateFilter {
  Threshold::Track track = Threshold::ByRule;
  uint32_t count = 0, seconds = 0, timeout = 0;
  std::string new_action;
};

struct Rule {
  std::string action = "alert";
  Proto proto = Proto::IP;
  AddrSet src, dst;
  PortSet sport, dport;
  bool bidirectional = false;
  // `=>`: a transactional rule (Suricata 8): its buffers are of both sides of
  // one transaction; the addresses are the flow's (client => server)
  bool transactional = false;
  std::string msg, classtype;
  uint32_t sid = 0, gid = 1, rev = 0;
  int32_t priority = 0;  // 0: not given
  std::vector<Item> items;
  bool has_dsize = false, dsize_neg = false;     // neg: outside the bounds
  uint32_t dsize_lo = 0, dsize_hi = UINT32_MAX;  // inclusive bounds
  uint8_t flow = 0;                              // FlowOpt bits
  std::vector<Flowbit> flowbits;
  std::vector<Flowint> flowints;
  std::vector<Hostbit> hostbits;  // hostbits and xbits
  std::vector<Tag> tags;
  bool noalert = false;      // matches (flowbits act) but raises no alert
  bool force_alert = false;  // alert: a pass rule alerts too (Suricata's alert-then-pass)
  bool no_tx_log = false;    // config rule: the transaction it matches is not logged
  uint16_t app = kAppNone;   // the header's application protocol (alert http ...)
  // app-layer-protocol:[!]NAME, each of them
  struct AppCond {
    uint16_t app;
    bool neg;
  };
  std::vector<AppCond> app_conds;
  bool has_app_cond = false;
  Threshold threshold;
  std::vector<Suppress> suppress;  // from threshold.config
  bool has_rate = false;
  RateFilter rate;
  // Suricata's IP-only rules (addresses and protocol only: no payload,
  // header, flow or port test) are matched once per flow direction, on its
  // first packet.
  bool ip_only = false;
  bool packet_only = false;  // tcp-pkt: matched on packets, never on the stream
  // A TCP payload rule as Suricata inspects it: on the reassembled stream
  // (the data acknowledged, or arrived, since the last inspection, across
  // segments) where a packet's data joined the stream, and on the packet
  // otherwise (no flow, data before the stream or past its depth, a RST's).
  // Rules reading a packet's own size or headers (dsize, flags, ttl, ...)
  // stay on packets.
  bool stream_payload = false;
  // A pass or drop of this rule acts on the whole flow wherever it matched
  // (Suricata's IP-only and protocol-detection-only rules, rules of an
  // application protocol with nothing else to check, and transaction rules);
  // otherwise only a match on the stream does (IdsMatcher).
  bool flow_scope = false;
  bool header_bufs = false;                    // some items read the packet's headers (ipv4.hdr, tcp.hdr, ...)
  bool captures = false;                       // a pcre keeps groups in variables (PcreCapture)
  std::vector<std::vector<Transform>> xforms;  // transform chains; an item's xform indexes them
  uint64_t decode_events = 0;  // decode-event: the decoder events the packet must have (DecodeEvent bits)
  uint64_t stream_events = 0;  // stream-event: the stream events the packet must have (StreamEvent bits)
  uint64_t app_events = 0;     // app-layer-event: the transaction's events it must have (bits of app_event_names)
  std::vector<FieldCond> fields;
  std::vector<FieldCond> tx_fields;  // a transaction's numbers (dns.opcode, dns.rcode, dns.rrtype)
  std::vector<FileHashCond> file_hashes;
  bool has_flags = false;
  FlagsCond flags;
  uint16_t ipopts = 0;  // ipopts: one of the IPv4 options (kIpOpt* bits) the packet must have
  // stream_size:client|server|both|either,OP,N (Suricata's: sequence space seen per side)
  struct StreamSize {
    uint8_t side = 0;  // 1 client, 2 server, 3 both, 4 either
    char op = '=';     // < > = ! (not equal) l (<=) g (>=)
    uint32_t value = 0;
  } stream_size;
  // ipv4-csum, tcpv4-csum, tcpv6-csum, udpv4-csum, udpv6-csum, icmpv4-csum,
  // icmpv6-csum: the checksum is valid (or invalid); another protocol, or a
  // packet cut short: no match
  struct Csum {
    enum Kind : uint8_t { Ipv4, Tcpv4, Tcpv6, Udpv4, Udpv6, Icmpv4, Icmpv6 };
    Kind kind;
    bool valid;
  };
  std::vector<Csum> csums;
  bool has_fragbits = false;  // fragbits: IPv4 flags (R 4, D 2, M 1), modifier as flags'
  FlagsCond fragbits;
  // an http rule's file.data with no side (no flow:to_server/to_client):
  // the files uploaded by a form as well as the response's (Suricata
  // inspects files both ways)
  bool file_data_either = false;
  // an http rule's file.data on the client's side (flow:to_server) that
  // reads no request body of its own (http.request_body): the request's
  // files, a form's uploads one by one rather than its whole body
  bool file_data_request = false;
  bool has_urilen = false, urilen_raw = false;
  uint32_t urilen_lo = 0, urilen_hi = UINT32_MAX;
  // Whether the rule reads a transaction's buffers (it is then matched on
  // transactions, not packets), and which side's.
  bool uses_tx() const {
    if (has_urilen || !tx_fields.empty() || app_events || !file_hashes.empty()) return true;
    for (const Item& it : items)
      if (!packet_buf(it.buf)) return true;
    return false;
  }
  bool response_side() const;
  bool uses_flow() const { return (flow & ~kFlowStateless) || !flowbits.empty() || !flowints.empty() || has_app_cond; }
  // A rule matched on a TCP connection's reassembled byte stream (each
  // direction's data in order, across segments) instead of on packets.
  bool stream_only() const { return flow & kFlowOnlyStream; }
  std::string file;
  int line = 0;
  std::string text;  // the rule as written (one line)
};

// What the loader did not take, and why.
struct RuleProblem {
  std::string file;
  int line = 0;
  uint32_t sid = 0;
  std::string what;
  bool threshold = false;   // a threshold.config line's, not a rule's
  std::string str() const;  // "file:line: sid N: what"
};

// Variables: Suricata's YAML (vars: address-groups / port-groups, NAME:
// value) or Snort's `var`, `ipvar` and `portvar` lines; both may be mixed.
class Vars {
 public:
  bool load_file(const std::string& path, std::string& err);
  bool load_text(const std::string& text, const std::string& name, std::string& err);
  // Suricata's default variables (HOME_NET, EXTERNAL_NET, HTTP_PORTS, ...:
  // the vars of the suricata.yaml it ships), added to or overridden by what
  // is loaded after them.
  bool load_suricata_defaults();
  void set(const std::string& name, const std::string& value) { vars_[name] = value; }
  const std::string* get(const std::string& name) const;

 private:
  std::map<std::string, std::string> vars_;
};

// classification.config: classtype -> (description, priority), as Suricata
// reads it ("config classification: name,description,priority"). Starts
// with the standard table Snort and Suricata ship; a file adds to it or
// overrides entries.
class Classifications {
 public:
  struct Class {
    std::string description;
    int priority = 3;
  };
  Classifications();
  bool load_file(const std::string& path, std::string& err);
  bool load_text(const std::string& text, const std::string& name, std::string& err);
  const Class* find(const std::string& classtype) const;

 private:
  std::map<std::string, Class> classes_;
};

class RuleSet {
 public:
  // Loads rules; unusable ones go to problems() (or, strict, the load fails
  // with the first). False with err when the file cannot be read.
  bool load_file(const std::string& path, const Vars& vars, bool strict, std::string& err);
  bool load_text(const std::string& text, const std::string& name, const Vars& vars, bool strict, std::string& err);
  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<RuleProblem>& problems() const { return problems_; }
  // Moves the rules `pred` refuses to problems() with `why`.
  template <class Pred>
  void refuse_if(Pred pred, const std::string& why) {
    std::vector<Rule> keep;
    for (Rule& r : rules_) {
      if (pred(r))
        problems_.push_back({r.file, r.line, r.sid, why});
      else
        keep.push_back(std::move(r));
    }
    rules_ = std::move(keep);
    sid_index_.clear();
    for (size_t i = 0; i < rules_.size(); ++i) sid_index_[uint64_t(rules_[i].gid) << 32 | rules_[i].sid] = i;
  }
  // Applies a threshold.config file (Suricata's: threshold, event_filter,
  // suppress and rate_filter lines, gen_id/sig_id 0 meaning every rule).
  // Lines that name no loaded rule or cannot be read go to problems();
  // false with err when the file cannot be read.
  bool load_threshold_config(const std::string& path, const Vars& vars, std::string& err);
  bool apply_threshold_text(const std::string& text, const std::string& name, const Vars& vars);
  // The datasets the rules name (save_all writes those with a save or state
  // file), and where their relative save and state files go (before loading).
  const Datasets& datasets() const { return datasets_; }
  void set_data_dir(const std::string& d) { datasets_.set_data_dir(d); }
  // Flowbit names numbered so far (kMaxFlowbits at most).
  size_t flowbit_count() const { return flowbit_ids_.size(); }
  const std::map<std::string, uint16_t>& flowbit_ids() const { return flowbit_ids_; }
  const std::map<std::string, uint16_t>& flowint_ids() const { return flowint_ids_; }
  const std::map<std::string, uint16_t>& hostbit_ids() const { return hostbit_ids_; }

 private:
  bool number_flowbits(Rule& r, std::string& why);
  bool bind_datasets(Rule& r, const std::string& file, std::string& why);
  bool bind_file_hashes(Rule& r, const std::string& file, std::string& why);
  Datasets datasets_;
  // hash lists by algorithm and path, shared by the rules that name them
  std::map<std::pair<uint8_t, std::string>, std::shared_ptr<const std::unordered_set<std::string>>> hash_lists_;
  std::map<std::string, uint16_t> flowbit_ids_, flowint_ids_, hostbit_ids_;
  std::map<uint64_t, size_t> sid_index_;  // gid << 32 | sid -> index in rules_
  std::vector<Rule> rules_;
  std::vector<RuleProblem> problems_;
};

// Parses one rule; false with err (the rule is unusable).
bool parse_rule(const std::string& text, const Vars& vars, Rule& r, std::string& err);

// A pcre option's value ("/pattern/flags", optionally "!" first), compiled
// with PCRE2; false with err.
bool parse_pcre(std::string_view v, Pcre& p, std::string& err);

// Whether PCRE2 is built in (pcre options need it).
bool have_pcre();
// Runs a compiled pcre over [s, s + n) from `start`; true when it matches,
// with the end of the match. A search that hits the match or depth limit
// (catastrophic backtracking) counts as no match, as in Snort; limit_hit
// says when that happened.
bool pcre_match(const Pcre& p, const uint8_t* s, size_t n, size_t start, size_t& match_end, bool* limit_hit = nullptr);
// The groups of a pcre with captures at its last match on this thread (by
// pcre_match; group i at [i - 1]); null before any.
const std::vector<std::string>* pcre_last_groups(const Pcre& p);

}  // namespace shoal::ids
