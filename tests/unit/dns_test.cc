// DNS messages: names with compression, every section, the rdata Suricata
// renders, and hostile input (loops, forward pointers, counts past the end,
// names past their bound); DNS-over-TCP framing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shoal/flow/dns.hh"

using namespace shoal::flow;

namespace {

using Bytes = std::vector<uint8_t>;

void u16(Bytes& b, uint16_t v) { b.push_back(uint8_t(v >> 8)), b.push_back(uint8_t(v)); }
void u32(Bytes& b, uint32_t v) { u16(b, uint16_t(v >> 16)), u16(b, uint16_t(v)); }
void name(Bytes& b, const std::string& n) {
  size_t at = 0;
  while (at < n.size()) {
    size_t dot = n.find('.', at);
    if (dot == std::string::npos) dot = n.size();
    b.push_back(uint8_t(dot - at));
    b.insert(b.end(), n.begin() + std::ptrdiff_t(at), n.begin() + std::ptrdiff_t(dot));
    at = dot + 1;
  }
  b.push_back(0);
}
Bytes header(uint16_t id, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ns, uint16_t ar) {
  Bytes b;
  for (uint16_t v : {id, flags, qd, an, ns, ar}) u16(b, v);
  return b;
}
// a record whose name is a pointer to offset 12 (the question's name)
void record(Bytes& b, uint16_t type, uint32_t ttl, const Bytes& rdata) {
  u16(b, 0xc00c);
  u16(b, type);
  u16(b, 1);
  u32(b, ttl);
  u16(b, uint16_t(rdata.size()));
  b.insert(b.end(), rdata.begin(), rdata.end());
}

}  // namespace

TEST(Dns, AResponseWithCompressionAndEverySection) {
  Bytes m = header(0x1234, 0x8180, 1, 4, 1, 0);
  name(m, "www.example.com");
  u16(m, 1), u16(m, 1);
  Bytes cname;
  u16(cname, 0xc010);  // "example.com", inside the question's name
  record(m, 5, 300, cname);
  record(m, 1, 60, {192, 0, 2, 7});
  record(m, 28, 60, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  Bytes mx;
  u16(mx, 10);
  name(mx, "mail.example.com");
  record(m, 15, 3600, mx);
  Bytes soa;
  name(soa, "ns1.example.com");
  u16(soa, 0xc010);
  for (uint32_t v : {2024u, 7200u, 900u, 1209600u, 86400u}) u32(soa, v);
  record(m, 6, 900, soa);
  DnsMessage d;
  ASSERT_TRUE(dns_parse(m.data(), uint32_t(m.size()), d));
  EXPECT_FALSE(d.malformed);
  EXPECT_EQ(d.id, 0x1234);
  EXPECT_TRUE(d.qr());
  EXPECT_EQ(d.rcode(), 0);
  ASSERT_EQ(d.queries.size(), 1u);
  EXPECT_EQ(d.queries[0].name, "www.example.com");
  ASSERT_EQ(d.answers.size(), 4u);
  EXPECT_EQ(d.answers[0].name, "www.example.com");
  EXPECT_EQ(d.answers[0].rdata, "example.com");
  EXPECT_EQ(d.answers[1].rdata, "192.0.2.7");
  EXPECT_EQ(d.answers[1].ttl, 60u);
  EXPECT_EQ(d.answers[2].rdata, "2001:0db8:0000:0000:0000:0000:0000:0001") << "Suricata's full form";
  EXPECT_EQ(d.answers[3].rdata, "mail.example.com");
  ASSERT_EQ(d.authorities.size(), 1u);
  ASSERT_TRUE(d.authorities[0].has_soa);
  EXPECT_EQ(d.authorities[0].soa.mname, "ns1.example.com");
  EXPECT_EQ(d.authorities[0].soa.rname, "example.com");
  EXPECT_EQ(d.authorities[0].soa.minimum, 86400u);
  EXPECT_EQ(d.authorities[0].rdata_names, (std::vector<std::string>{"ns1.example.com", "example.com"}));
}

TEST(Dns, HostileMessagesEndTheParseWithWhatWasRead) {
  {  // a pointer to itself, and one forward: no loop, malformed
    for (uint16_t ptr : {uint16_t(0xc00c), uint16_t(0xc020)}) {
      Bytes m = header(1, 0x0100, 1, 0, 0, 0);
      u16(m, ptr);
      u16(m, 1), u16(m, 1);
      m.resize(64, 0);
      DnsMessage d;
      ASSERT_TRUE(dns_parse(m.data(), uint32_t(m.size()), d));
      EXPECT_TRUE(d.malformed) << ptr;
      EXPECT_TRUE(d.queries.empty());
    }
  }
  {  // two pointers pointing at each other
    Bytes m = header(1, 0x0100, 2, 0, 0, 0);
    u16(m, 0xc00e), u16(m, 1), u16(m, 1);  // -> 14, which points back to 12
    DnsMessage d;
    ASSERT_TRUE(dns_parse(m.data(), uint32_t(m.size()), d));
    EXPECT_TRUE(d.malformed);
  }
  {  // counts past the end: what is there stays
    Bytes m = header(2, 0x8180, 1, 3, 0, 0);
    name(m, "a.example");
    u16(m, 1), u16(m, 1);
    record(m, 1, 5, {10, 0, 0, 1});
    DnsMessage d;
    ASSERT_TRUE(dns_parse(m.data(), uint32_t(m.size()), d));
    EXPECT_TRUE(d.malformed);
    ASSERT_EQ(d.answers.size(), 1u);
    EXPECT_EQ(d.answers[0].rdata, "10.0.0.1");
    EXPECT_FALSE(dns_probe(m.data(), uint32_t(m.size()))) << "3 answers cannot fit";
  }
  {  // a name of 40 labels of 63 bytes: kept to 1,025 bytes, flagged
    Bytes m = header(3, 0x0100, 1, 0, 0, 0);
    for (int i = 0; i < 40; ++i) {
      m.push_back(63);
      m.insert(m.end(), 63, 'x');
    }
    m.push_back(0);
    u16(m, 1), u16(m, 1);
    DnsMessage d;
    ASSERT_TRUE(dns_parse(m.data(), uint32_t(m.size()), d));
    ASSERT_EQ(d.queries.size(), 1u);
    EXPECT_LE(d.queries[0].name.size(), 1025u);
    EXPECT_TRUE(d.name_truncated);
  }
  {  // too short for a header; a request without a question is no DNS
    Bytes m = header(4, 0x0100, 0, 0, 0, 0);
    DnsMessage d;
    EXPECT_FALSE(dns_parse(m.data(), 11, d));
    EXPECT_FALSE(dns_probe(m.data(), uint32_t(m.size())));
  }
}

TEST(Dns, TcpFramingCutsTheStreamIntoMessages) {
  Bytes q = header(7, 0x0100, 1, 0, 0, 0);
  name(q, "example.org");
  u16(q, 1), u16(q, 1);
  Bytes stream;
  for (int i = 0; i < 2; ++i) {
    u16(stream, uint16_t(q.size()));
    stream.insert(stream.end(), q.begin(), q.end());
  }
  EXPECT_TRUE(dns_tcp_probe(stream.data(), uint32_t(stream.size())));
  EXPECT_FALSE(dns_tcp_probe(reinterpret_cast<const uint8_t*>("GET / HTTP/1.1\r\n"), 16));
  // one byte at a time, then all at once: two messages each way
  for (size_t chunk : {size_t(1), stream.size()}) {
    DnsTcpFramer f;
    std::vector<uint16_t> ids;
    for (size_t at = 0; at < stream.size(); at += chunk)
      f.data(stream.data() + at, uint32_t(std::min(chunk, stream.size() - at)), [&](const uint8_t* d, uint32_t n) {
        DnsMessage m;
        ASSERT_TRUE(dns_parse(d, n, m));
        ids.push_back(m.id);
        EXPECT_EQ(m.queries.at(0).name, "example.org");
      });
    EXPECT_EQ(ids, (std::vector<uint16_t>{7, 7})) << chunk;
  }
  // a gap loses the framing: nothing more is cut
  DnsTcpFramer f;
  int n = 0;
  f.data(stream.data(), 5, [&](const uint8_t*, uint32_t) { ++n; });
  f.gap();
  f.data(stream.data(), uint32_t(stream.size()), [&](const uint8_t*, uint32_t) { ++n; });
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(f.lost());
}
