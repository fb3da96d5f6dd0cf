#!/usr/bin/python3
"""L7Classifier (l7-filter's patterns) against nDPI's ndpiReader.

scapy makes connections of ten protocols with the bytes real clients and
servers send (an HTTP exchange, SSH and mail banners, DNS and NTP queries, a
TLS handshake, a BitTorrent handshake...), interleaved in one capture.
ndpiReader labels each flow on its own; L7Classifier must give the same
label to every flow, except where the two engines differ by design (KNOWN
below, with the reason: those flows are made on purpose and must differ
exactly that way).
Usage: l7_oracle.py SHOAL PATTERN_DIR
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

try:
    from scapy.all import DNS, DNSQR, IP, NTP, TCP, UDP, Ether, Raw, wrpcap
except ImportError:
    print("skipped: scapy is not installed")
    sys.exit(77)
if not shutil.which("ndpiReader"):
    print("skipped: ndpiReader (libndpi-bin) is not installed")
    sys.exit(77)
SHOAL, PATTERNS = sys.argv[1], sys.argv[2]
if not os.path.isdir(PATTERNS):
    print("skipped: no l7-filter patterns at %s" % PATTERNS)
    sys.exit(77)

rng = random.Random(3)
E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
NDPI_NAMES = {"HTTP": "http", "SSH": "ssh", "SMTP": "smtp", "FTP_CONTROL": "ftp", "POP3": "pop3", "IMAP": "imap",
              "DNS": "dns", "BitTorrent": "bittorrent", "TLS": "ssl", "NTP": "ntp"}
# Where the engines differ by design, made on purpose below and checked to
# differ exactly so (so the list hides nothing): l7-filter's http pattern
# needs a response status line followed by a header (or a POST), while nDPI
# recognises HTTP from a request alone. An unanswered GET is 'http' to
# nDPI and unlabelled ('-') to L7Classifier.
KNOWN = {"unanswered-get": ("-", "http")}


def tcp_conn(c, s, cp, sp, exchange):
    """A TCP connection: handshake, then (from_client, bytes) in order, then FINs."""
    a, b = rng.randint(0, 2**31), rng.randint(0, 2**31)
    pk = [E / IP(src=c, dst=s) / TCP(sport=cp, dport=sp, flags="S", seq=a),
          E / IP(src=s, dst=c) / TCP(sport=sp, dport=cp, flags="SA", seq=b, ack=a + 1),
          E / IP(src=c, dst=s) / TCP(sport=cp, dport=sp, flags="A", seq=a + 1, ack=b + 1)]
    so, ss = a + 1, b + 1
    for fwd, data in exchange:
        if fwd:
            pk.append(E / IP(src=c, dst=s) / TCP(sport=cp, dport=sp, flags="PA", seq=so, ack=ss) / Raw(data))
            so += len(data)
        else:
            pk.append(E / IP(src=s, dst=c) / TCP(sport=sp, dport=cp, flags="PA", seq=ss, ack=so) / Raw(data))
            ss += len(data)
    pk.append(E / IP(src=c, dst=s) / TCP(sport=cp, dport=sp, flags="FA", seq=so, ack=ss))
    pk.append(E / IP(src=s, dst=c) / TCP(sport=sp, dport=cp, flags="FA", seq=ss, ack=so + 1))
    return pk


def tls_client_hello():
    body = b"\x03\x03" + rng.randbytes(32) + b"\x00" + b"\x00\x04\x13\x01\x13\x02" + b"\x01\x00"
    ext_sni = b"example.com"
    sni = b"\x00\x00" + (len(ext_sni) + 5).to_bytes(2, "big") + (len(ext_sni) + 3).to_bytes(2, "big") + b"\x00" + \
        len(ext_sni).to_bytes(2, "big") + ext_sni
    body += len(sni).to_bytes(2, "big") + sni
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + len(hs).to_bytes(2, "big") + hs


def tls_server_hello():
    body = b"\x03\x03" + rng.randbytes(32) + b"\x00" + b"\x13\x01" + b"\x00" + b"\x00\x00"
    hs = b"\x02" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x03" + len(hs).to_bytes(2, "big") + hs + b"\x14\x03\x03\x00\x01\x01"


def flows():
    out = []
    for i in range(40):
        c, s = "10.3.%d.%d" % (i // 50, i % 50 + 1), "198.51.100.%d" % (i % 9 + 1)
        cp = 41000 + i
        kind = list(NDPI_NAMES.values())[i % 10]
        if kind == "http":
            ex = [(1, b"GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n"),
                  (0, b"HTTP/1.1 200 OK\r\nDate: Mon, 23 Nov 2026 19:00:00 GMT\r\nContent-Type: text/html\r\n"
                      b"Content-Length: 5\r\nConnection: close\r\n\r\nhello")]
            out.append(tcp_conn(c, s, cp, 80, ex))
        elif kind == "ssh":
            out.append(tcp_conn(c, s, cp, 22, [(0, b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"), (1, b"SSH-2.0-OpenSSH_9.2p1\r\n")]))
        elif kind == "smtp":
            out.append(tcp_conn(c, s, cp, 25, [(0, b"220 mail.example.com ESMTP Postfix (Debian/GNU)\r\n"),
                                               (1, b"EHLO client.example.org\r\n"),
                                               (0, b"250-mail.example.com\r\n250-PIPELINING\r\n250 8BITMIME\r\n")]))
        elif kind == "ftp":
            out.append(tcp_conn(c, s, cp, 21, [(0, b"220 ProFTPD Server (Debian) [198.51.100.1]\r\n"),
                                               (1, b"USER anonymous\r\n"), (0, b"331 Anonymous login ok\r\n")]))
        elif kind == "pop3":
            out.append(tcp_conn(c, s, cp, 110, [(0, b"+OK Dovecot (Debian) ready.\r\n"), (1, b"USER alice\r\n"),
                                                (0, b"+OK\r\n")]))
        elif kind == "imap":
            out.append(tcp_conn(c, s, cp, 143, [(0, b"* OK [CAPABILITY IMAP4rev1 LITERAL+ SASL-IR] Dovecot ready.\r\n"),
                                                (1, b"a1 LOGIN alice secret\r\n"), (0, b"a1 OK Logged in\r\n")]))
        elif kind == "bittorrent":
            hs = b"\x13BitTorrent protocol" + b"\x00" * 8 + rng.randbytes(20) + b"-qB4500-" + rng.randbytes(12)
            out.append(tcp_conn(c, s, cp, 6881, [(1, hs), (0, hs)]))
        elif kind == "ssl":
            out.append(tcp_conn(c, s, cp, 443, [(1, tls_client_hello()), (0, tls_server_hello())]))
        elif kind == "dns":
            q = E / IP(src=c, dst=s) / UDP(sport=cp, dport=53) / DNS(id=i, rd=1, qd=DNSQR(qname="www%d.example.com" % i))
            r = E / IP(src=s, dst=c) / UDP(sport=53, dport=cp) / DNS(id=i, qr=1, ra=1, qd=DNSQR(qname="www%d.example.com" % i))
            out.append([q, r])
        elif kind == "ntp":
            q = E / IP(src=c, dst=s) / UDP(sport=123, dport=123) / NTP(version=4, mode=3)
            r = E / IP(src=s, dst=c) / UDP(sport=123, dport=123) / NTP(version=4, mode=4, stratum=2)
            out.append([q, r])
    for i in range(4):  # KNOWN["unanswered-get"]
        c, s = "10.4.0.%d" % (i + 1), "198.51.100.99"
        out.append(tcp_conn(c, s, 42000 + i, 8080, [(1, b"GET /x HTTP/1.1\r\nHost: example.net\r\n\r\n")]))
    pk = []
    while any(out):
        f = rng.choice([x for x in out if x])
        pk.append(f.pop(0))
    return pk


def ndpi_labels(pcap):
    res = subprocess.run(["ndpiReader", "-i", pcap, "-v", "2"], capture_output=True, text=True)
    labels = {}
    pat = re.compile(r"(TCP|UDP) ([\d.]+):(\d+) <-> ([\d.]+):(\d+) .*?\[proto: [\d.]+/([\w.]+)\]")
    for line in res.stdout.splitlines():
        m = pat.search(line)
        if not m:
            continue
        a, b = (m.group(2), int(m.group(3))), (m.group(4), int(m.group(5)))
        name = m.group(6).split(".")[-1]
        labels[frozenset([a, b])] = NDPI_NAMES.get(name, "-")
    return labels


def main():
    tmp = tempfile.mkdtemp()
    try:
        pcap = os.path.join(tmp, "l7.pcap")
        pk = flows()
        for i, p in enumerate(pk):
            p.time = 1700000000 + i * 0.001
        wrpcap(pcap, pk)
        log = os.path.join(tmp, "conn.json")
        cfg = ("FromDump(%s, STOP true) -> FlowIPManager -> L7Classifier(PATTERNS %s, PROTOCOLS \"%s\")"
               " -> FlowLog(%s, FORMAT json) -> Discard;" % (pcap, PATTERNS, " ".join(NDPI_NAMES.values()), log))
        res = subprocess.run([SHOAL, "run", "-q", "/dev/stdin"], input=cfg, capture_output=True, text=True)
        if res.returncode != 0:
            print("FAIL: shoal exited %d: %s" % (res.returncode, res.stderr))
            return 1
        ours = {}
        for line in open(log):
            r = json.loads(line)
            key = frozenset([(r["id.orig_h"], r["id.orig_p"]), (r["id.resp_h"], r["id.resp_p"])])
            ours[key] = r.get("service", "-")
        theirs = ndpi_labels(pcap)
        fails = agree = 0
        for key, label in sorted(ours.items(), key=lambda kv: sorted(kv[0])):
            other = theirs.get(key)
            if other is None:
                print("FAIL: nDPI did not report flow %s" % sorted(key))
                fails += 1
            known = "unanswered-get" if any(h == "10.4.0.%d" % (i + 1) for h, _ in key for i in range(4)) else None
            if known:
                if (label, other) == KNOWN[known]:
                    agree += 1
                else:
                    print("FAIL %s (%s): L7Classifier %s, nDPI %s; expected %s" % (sorted(key), known, label, other,
                                                                                 KNOWN[known]))
                    fails += 1
            elif label == other:
                agree += 1
            else:
                print("FAIL %s: L7Classifier %s, nDPI %s" % (sorted(key), label, other))
                fails += 1
        if len(ours) != 44:
            print("FAIL: %d flows logged, 44 made" % len(ours))
            fails += 1
        print("%d flows, %d labels as nDPI's (or differing as KNOWN says): %d failures" % (len(ours), agree, fails))
        return 1 if fails else 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
