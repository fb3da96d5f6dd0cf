#!/usr/bin/python3
"""Writes gateway.pcap, the traffic of examples/ipsec-gateway.click, with
scapy (seeded, so the file is the same every time):
  - 24 clear packets from site A (10.1/16) to site B (10.2/16): encrypted;
  - 6 to the Internet: forwarded in the clear; 2 to 203.0.113.0/24: blocked;
  - 24 ESP packets from site B's gateway (scapy's SecurityAssociation), one
    of them replayed, one tampered with, one with an unknown SPI: decrypted
    or dropped with the reason;
  - 2 clear packets from site B that should have come through the tunnel:
    dropped (policy-mismatch).
Usage: make-traffic.py [OUT.pcap]"""
import random
import sys

from scapy.all import ICMP, IP, TCP, UDP, Ether, Raw, wrpcap
from scapy.layers.ipsec import ESP, SecurityAssociation

rng = random.Random(4303)
B_TO_A = SecurityAssociation(
    ESP, spi=0x2001, crypt_algo="AES-CBC",
    crypt_key=bytes.fromhex("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
    auth_algo="SHA2-256-128", auth_key=bytes.fromhex("fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"),
    tunnel_header=IP(src="192.0.2.2", dst="192.0.2.1", ttl=60))


def l4(i):
    data = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 5, 64, 300, 1200])))
    return [TCP(sport=40000 + i, dport=443, flags="PA", seq=1000 * i), UDP(sport=5000 + i, dport=53),
            ICMP(id=i, seq=i)][i % 3] / Raw(data)


def iv():
    return bytes(rng.getrandbits(8) for _ in range(16))


def eth(p):
    return Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:01") / p


pkts = []
seq = 0
for i in range(24):
    pkts.append(eth(IP(src=f"10.1.0.{10 + i % 5}", dst=f"10.2.0.{20 + i % 7}", ttl=64) / l4(i)))
    if i % 4 == 0:
        pkts.append(eth(IP(src="10.1.0.10", dst=f"198.51.100.{i}", ttl=64) / l4(i)))
    if i % 12 == 5:
        pkts.append(eth(IP(src="10.1.0.11", dst="203.0.113.9", ttl=64) / l4(i)))
    seq += 1
    inner = IP(src=f"10.2.0.{30 + i % 3}", dst=f"10.1.0.{10 + i % 5}", ttl=63) / l4(i)
    esp = B_TO_A.encrypt(inner, seq_num=seq, iv=iv())
    if i == 9:  # a forgery of the next packet (one bit of its ciphertext), before it
        b = bytearray(bytes(esp))
        b[60] ^= 0x10
        pkts.append(eth(IP(bytes(b))))
    pkts.append(eth(esp))
    if i == 7:  # replayed
        pkts.append(eth(esp))
    if i == 11:  # an SPI nobody set up
        B_TO_A.spi = 0x2002
        pkts.append(eth(B_TO_A.encrypt(inner, seq_num=seq + 100, iv=iv())))
        B_TO_A.spi = 0x2001
    if i % 12 == 3:  # site B in the clear: the policy says it must be ESP
        pkts.append(eth(IP(src="10.2.0.30", dst="10.1.0.10", ttl=63) / l4(i)))
for n, p in enumerate(pkts):
    p.time = 1700000000 + n / 1000
wrpcap(sys.argv[1] if len(sys.argv) > 1 else "gateway.pcap", pkts)
print(len(pkts), "packets")
