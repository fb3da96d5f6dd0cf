#!/usr/bin/python3
"""Writes examples/data/router-ids.pcap for examples/ids-std-router.click: one
capture of both links of a two-interface router (eth0 10.1.0.1/16, MAC
02:00:00:00:01:01; eth1 10.2.0.1/16, MAC 02:00:00:00:02:01, the uplink, default
route via 10.2.0.254), frames addressed to the router's MACs. It holds ARP, web
and DNS traffic both ways, pings to the router, TTL expiries, packets too big
for eth0's MTU of 1000 (with and without DF), a bad checksum, IP options, and
packets that local.rules alerts on among near misses.
Run: /usr/bin/python3 examples/data/router/make_traffic.py"""
import os
from scapy.all import Ether, ARP, IP, IPOption_RR, TCP, UDP, ICMP, Raw, wrpcap

out = os.path.join(os.path.dirname(__file__), "..", "router-ids.pcap")
R0, R1 = "02:00:00:00:01:01", "02:00:00:00:02:01"
H0, GW = "02:00:00:00:01:05", "02:00:00:00:02:fe"
pkts = []
def in0(p): pkts.append(Ether(src=H0, dst=R0) / p)
def in1(p): pkts.append(Ether(src=GW, dst=R1) / p)
# eth0's hosts announce themselves; the uplink's gateway answers an ARP query
for h in range(5, 9):
    pkts.append(Ether(src="02:00:00:00:01:%02x" % h, dst=R0) /
                ARP(op=2, hwsrc="02:00:00:00:01:%02x" % h, psrc="10.1.0.%d" % h, hwdst=R0, pdst="10.1.0.1"))
pkts.append(Ether(src=GW, dst=R1) / ARP(op=2, hwsrc=GW, psrc="10.2.0.254", hwdst=R1, pdst="10.2.0.1"))
pkts.append(Ether(src=H0, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=H0, psrc="10.1.0.5", pdst="10.1.0.1"))
for i in range(60):
    h = 5 + i % 4
    # web: requests out (inside to outside), pages in
    in0(IP(src="10.1.0.%d" % h, dst="203.0.113.%d" % (1 + i % 20)) / TCP(sport=40000 + i, dport=80, flags="PA") /
        Raw(b"GET /index%d.html HTTP/1.1\r\nHost: shop\r\n\r\n" % i))
    in1(IP(src="203.0.113.%d" % (1 + i % 20), dst="10.1.0.%d" % h) / TCP(sport=80, dport=40000 + i, flags="PA") /
        Raw(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * (100 + 7 * i)))
    if i % 5 == 0:
        in0(IP(src="10.1.0.%d" % h, dst="198.51.100.53") / UDP(sport=5000 + i, dport=53) /
            Raw(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03www\x07example\x03com\x00\x00\x01\x00\x01"))
    if i % 10 == 3:  # attacks from outside, and near misses
        in1(IP(src="198.51.100.7", dst="10.1.0.%d" % h) / TCP(sport=41000 + i, dport=80, flags="PA") /
            Raw(b"GET /../../etc/PASSWD HTTP/1.1\r\n\r\n"))
        in1(IP(src="198.51.100.7", dst="10.1.0.%d" % h) / TCP(sport=41100 + i, dport=80, flags="PA") /
            Raw(b"POST /etc/passwd HTTP/1.1\r\n\r\n"))
        in1(IP(src="198.51.100.8", dst="10.1.0.%d" % h) / TCP(sport=41200 + i, dport=8080, flags="PA") /
            Raw(b"GET /item?id=1 UNION  ALL SELECT pw FROM u HTTP/1.1\r\n\r\n"))
        in1(IP(src="198.51.100.8", dst="10.1.0.%d" % h) / TCP(sport=41300 + i, dport=8080, flags="PA") /
            Raw(b"GET /item?union=1&x=aaaaaaaaaaaaaaaaaaaaaaaa&select=2 HTTP/1.1\r\n\r\n"))
        in1(IP(src="198.51.100.10", dst="10.1.0.%d" % h) / ICMP() / Raw(b"y" * 900))  # large ping: alert
    if i % 10 == 7:
        in0(IP(src="10.1.0.%d" % h, dst="10.1.0.1") / ICMP(id=7, seq=i) / Raw(b"ping"))          # to the router
        in0(IP(src="10.1.0.%d" % h, dst="203.0.113.9", ttl=1) / UDP(sport=7000, dport=33434))  # TTL expires
        in1(IP(src="203.0.113.9", dst="10.1.0.%d" % h, flags="DF") / UDP(sport=9, dport=9) / Raw(b"z" * 1200))  # needfrag
        in1(IP(src="203.0.113.9", dst="10.1.0.%d" % h) / UDP(sport=9, dport=9) / Raw(b"f" * 1200))  # fragmented
        in0(IP(src="10.1.0.%d" % h, dst="203.0.113.9", options=[IPOption_RR(routers=["0.0.0.0"] * 3)]) /
            UDP(sport=7001, dport=9) / Raw(b"rr"))
        bad = IP(src="10.1.0.%d" % h, dst="203.0.113.9") / UDP(sport=7002, dport=9) / Raw(b"bad")
        bad = IP(bytes(bad)); bad.chksum ^= 0x5555
        in0(bad)
in0(IP(src="10.1.0.23", dst="198.51.100.11") / TCP(sport=23, dport=50000, flags="PA") / Raw(b"login: root\r\n"))
wrpcap(out, pkts)
print("wrote %s: %d packets" % (out, len(pkts)))
