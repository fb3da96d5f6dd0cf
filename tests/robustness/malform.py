#!/usr/bin/env python3
"""Malformed captures for the robustness test, from a seed capture and a
fixed seed: every record of every output is a damaged copy of a real
packet (cut short, bytes flipped where headers live, header length and
total-length fields lied about, options garbage) or garbage outright.
Usage: malform.py IN.pcap OUTDIR COUNT PREFIX"""
import random
import struct
import sys


def read_pcap(path):
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    recs, pos = [], 24
    while pos + 16 <= len(data):
        sec, frac, cap, wire = struct.unpack(endian + "IIII", data[pos:pos + 16])
        recs.append((sec, frac, data[pos + 16:pos + 16 + cap]))
        pos += 16 + cap
    return linktype, recs


def damage(rng, pkt):
    b = bytearray(pkt)
    kind = rng.randrange(7)
    if kind == 0 and b:  # cut short anywhere, headers included
        del b[rng.randrange(len(b)):]
    elif kind == 1:  # flip bytes where the Ethernet, IP and L4 headers are
        for _ in range(rng.randrange(1, 6)):
            if b:
                i = rng.randrange(min(len(b), 80))
                b[i] ^= 1 << rng.randrange(8)
    elif kind == 2 and len(b) > 24:  # IPv4 header length and total length lie
        b[14] = 0x40 | rng.choice([0, 1, 4, 5, 6, 15])
        b[16:18] = struct.pack(">H", rng.choice([0, 1, 19, 20, 21, len(b), 65535]))
    elif kind == 3 and len(b) > 40:  # IP options of random bytes
        b[14] = 0x40 | rng.randrange(6, 16)
        for i in range(34, min(len(b), 74)):
            b[i] = rng.randrange(256)
    elif kind == 4:  # garbage of any length, even empty
        b = bytearray(rng.randrange(256) for _ in range(rng.choice([0, 1, 13, 14, 15, 33, 34, 60, 200])))
    elif kind == 5 and len(b) > 13:  # another ethertype (IPv6, ARP, VLAN) on the same bytes
        b[12:14] = struct.pack(">H", rng.choice([0x86DD, 0x0806, 0x8100, 0x88A8, 0x0000]))
    return bytes(b)


def main():
    src, outdir, count, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    linktype, recs = read_pcap(src)
    for n in range(count):
        rng = random.Random(1000 + n)
        out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype)]
        for sec, frac, pkt in recs:
            p = damage(rng, pkt) if rng.random() < 0.7 else pkt
            out.append(struct.pack("<IIII", sec, frac % 1000000, len(p), max(len(p), len(pkt))) + p)
        open(f"{outdir}/{prefix}-{n}.pcap", "wb").write(b"".join(out))


main()
