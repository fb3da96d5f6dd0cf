#!/usr/bin/python3
"""Writes examples/data/ids-traffic.pcap: benign traffic and, among it, the
packets examples/data/ids/local.rules must alert on (one per rule, plus
near misses that must not). Run: /usr/bin/python3 examples/data/ids/make_traffic.py"""
import os
from scapy.all import Ether, IP, TCP, UDP, ICMP, Raw, wrpcap

out = os.path.join(os.path.dirname(__file__), "..", "ids-traffic.pcap")
E = lambda: Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
pkts = []
def tcp(src, dst, dport, data, sport=40000):
    pkts.append(E() / IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags="PA") / Raw(data))
for i in range(40):  # benign web and DNS
    tcp("203.0.113.%d" % (i + 1), "10.0.0.80", 80, b"GET /index%d.html HTTP/1.1\r\nHost: shop\r\n\r\n" % i)
    pkts.append(E() / IP(src="10.0.0.%d" % (i + 2), dst="10.0.0.53") / UDP(sport=5000 + i, dport=53) /
                Raw(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03www\x07example\x03com\x00\x00\x01\x00\x01"))
tcp("198.51.100.7", "10.0.0.80", 80, b"GET /../../etc/PASSWD HTTP/1.1\r\n\r\n")          # 1000001
tcp("198.51.100.7", "10.0.0.80", 80, b"POST /etc/passwd HTTP/1.1\r\n\r\n")               # miss: not GET
tcp("10.9.9.9", "10.0.0.80", 80, b"GET /etc/passwd HTTP/1.1\r\n\r\n")                   # miss: internal source
tcp("198.51.100.8", "10.0.0.80", 8080, b"GET /item?id=1 UNION  ALL SELECT pw FROM u HTTP/1.1\r\n\r\n")  # 1000002
tcp("198.51.100.8", "10.0.0.80", 8080, b"GET /item?union=1&x=aaaaaaaaaaaaaaaaaaaaaaaa&select=2 HTTP/1.1\r\n\r\n")  # miss: within
tcp("198.51.100.9", "10.0.0.80", 80, b"GET /q?<ScRiPt>alert(1)</script> HTTP/1.1\r\n\r\n")  # 1000003
pkts.append(E() / IP(src="10.0.0.7", dst="10.0.0.53") / UDP(sport=6000, dport=53) /
            Raw(b"\xab\xcd\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07MALWARE\x07example\x03com\x00\x00\x01\x00\x01"))  # 1000004
pkts.append(E() / IP(src="198.51.100.10", dst="10.0.0.1") / ICMP() / Raw(b"x" * 1000))   # 1000005
pkts.append(E() / IP(src="198.51.100.10", dst="10.0.0.1") / ICMP() / Raw(b"x" * 56))     # miss: small
tcp("10.0.0.23", "198.51.100.11", 50000, b"login: root\r\n", sport=23)                   # 1000006 (<>)
wrpcap(out, pkts)
print("wrote %s: %d packets" % (out, len(pkts)))
