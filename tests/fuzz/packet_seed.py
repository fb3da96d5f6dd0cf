#!/usr/bin/python3
"""Seeds for fuzz_packets (run from the repository root).

The harness picks its configuration by the input's first byte, modulo the
number of configurations it loads: the golden tests' that read $IN, sorted,
then a fixed list of examples (tests/fuzz/fuzz_packets.cc). A new golden case
shifts the indices, so seeds are written (or retargeted) through here:

  packet_seed.py CONFIG PCAP OUT   a seed of PCAP's frames for CONFIG
  packet_seed.py --retarget CONFIG SEED...   point seeds at CONFIG again
"""
import os
import struct
import sys

EXAMPLES = ["ipv4-fastpath", "firewall", "ids-router", "ids-std-router", "ids-suricata", "sdn-forwarder",
            "divergence", "nf-chain"]  # (fuzz_packets.cc's list, in its order)


def configs():
    golden = sorted(os.path.join("tests/golden", d, "config.click") for d in os.listdir("tests/golden")
                    if os.path.exists(os.path.join("tests/golden", d, "config.click")))
    every = golden + [f"examples/{e}.click" for e in EXAMPLES]
    return [p for p in every if "FromDump($IN" in open(p).read()]


def index_of(config):
    c = configs()
    i = c.index(os.path.normpath(config))
    if i > 255:
        sys.exit("more than 256 configurations: a first byte no longer names each")
    return i


def frames(pcap):
    b = open(pcap, "rb").read()
    magic = struct.unpack("<I", b[:4])[0]
    if magic not in (0xa1b2c3d4, 0xa1b23c4d):
        sys.exit(f"{pcap}: not a little-endian pcap")
    at = 24
    while at + 16 <= len(b):
        incl = struct.unpack("<I", b[at + 8:at + 12])[0]
        yield b[at + 16:at + 16 + incl]
        at += 16 + incl


def main():
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "--retarget":
        i = index_of(a[1])
        for s in a[2:]:
            d = bytearray(open(s, "rb").read())
            d[0] = i
            open(s, "wb").write(bytes(d))
        return
    if len(a) != 3:
        sys.exit(__doc__)
    out = bytearray([index_of(a[0])])
    for f in frames(a[1]):
        f = f[:0x7ff]  # (two length bytes: 11 bits)
        out += bytes([len(f) & 0xff, len(f) >> 8]) + f
    open(a[2], "wb").write(bytes(out))


main()
