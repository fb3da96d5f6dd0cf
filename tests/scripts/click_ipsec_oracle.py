#!/usr/bin/python3
"""Click's IPsec pieces (RadixIPsecLookup, IPsecESPEncap, IPsecAES,
IPsecAuthHMACSHA1, IPsecESPUnencap, IPsecEncap) as Click's
conf/router/ipsec-router.click wires them: a gateway's route table sends
packets into the tunnel (output 1) and takes ESP for itself (output 0),
with the SA in the route. Checked against scapy's SecurityAssociation
(pyca/cryptography), an independent ESP:
  1. RFC 4303's order (IPsecAES(1) before IPsecAuthHMACSHA1(0)): scapy
     decrypts and authenticates every packet the gateway sends (AES-128 and
     AES-256), with sequence numbers from REPLAY, the tunnel's addresses and
     Shoal's padding; and the other gateway takes scapy's packets, in an
     order shuffled within the window, with replays, forgeries, an unknown
     SPI and one below the window: exactly the genuine packets come out, in
     arrival order, each bad one counted under its reason.
  2. Click's order (authenticate, then encrypt): one gateway's packets go
     through the other's inbound path and come out as sent; a forged and a
     replayed packet are dropped. RFC 4303's inbound path refuses them all
     (the two orders are different wire formats).
  3. A key of the wrong length is a configuration error at its route.
Usage: click_ipsec_oracle.py SHOAL [SEED]. Exit 77 when scapy is missing.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

try:
    from scapy.all import ICMP, IP, TCP, UDP, Raw, rdpcap, conf
    from scapy.layers.ipsec import ESP, SecurityAssociation
    from scapy.utils import PcapWriter
except Exception as e:  # pragma: no cover
    print("SKIP: scapy with cryptography is needed:", e)
    sys.exit(77)

SHOAL = os.path.realpath(sys.argv[1])
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 1
rng = random.Random(SEED)
conf.verb = 0

GW = {"A": ("192.0.2.1", "10.1.0.0/16"), "B": ("192.0.2.2", "10.2.0.0/16")}
SPI = 0x2345
REPLAY = 300
WINDOW = 64
OUT = {"rfc": "IPsecAES(1) -> IPsecAuthHMACSHA1(0)", "click": "IPsecAuthHMACSHA1(0) -> IPsecAES(1)"}
IN = {"rfc": "auth :: IPsecAuthHMACSHA1(1) -> IPsecAES(0)", "click": "IPsecAES(0) -> auth :: IPsecAuthHMACSHA1(1)"}


def config(me, order, key, akey, src_pcap, tmp):
    """Click's ipsec-router.click for gateway `me`, with FromDump and ToDump
    for its interfaces (outputs 0-2 are Click's; 3: the other gateway, 4:
    the hosts behind this one)."""
    other = "B" if me == "A" else "A"
    addr, net = GW[me]
    oaddr, onet = GW[other]
    return f"""
FromDump({src_pcap}, STOP true) -> CheckIPHeader ->
rt :: RadixIPsecLookup({addr}/32 0,
                       {onet} {oaddr} 1 {SPI} {key.hex().upper()} {akey.hex().upper()} {REPLAY} {WINDOW},
                       {oaddr}/32 3,
                       {net} 4);
rt[1] -> IPsecESPEncap -> {OUT[order]} -> IPsecEncap(50) -> [0]rt;
rt[0] -> StripIPHeader -> {IN[order]} -> unencap :: IPsecESPUnencap -> CheckIPHeader -> [0]rt;
rt[2] -> host :: Counter -> Discard;
rt[3] -> FixIPSrc({addr}) -> ToDump({tmp}/wire-{me}.pcap, ENCAP IP);
rt[4] -> ToDump({tmp}/inner-{me}.pcap, ENCAP IP);
"""


def run(cfg, tmp):
    path = os.path.join(tmp, "gw.click")
    open(path, "w").write(cfg)
    stats = os.path.join(tmp, "stats.json")
    r = subprocess.run([SHOAL, "run", "-q", path, "--stats-out", stats], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAIL: shoal exited {r.returncode}")
    return json.load(open(stats))


def drops(stats, element):
    return {r: int(n) for r, n in stats.get("drops", {}).get(element, {}).items() if int(n)}


def write_raw(path, pkts):
    w = PcapWriter(path, linktype=101, sync=True)
    for i, p in enumerate(pkts):
        p.time = 1700000000 + i
        w.write(p)
    w.close()


def clear_packets(n, src_net, dst_net):
    out = []
    for _ in range(n):
        size = rng.choice([0, 1, 13, 14, 15, 16, 17, 64, 200, 511, 1000, 1400])
        data = bytes(rng.getrandbits(8) for _ in range(size))
        ip = IP(src=src_net.replace("0.0/16", f"{rng.randint(1, 250)}.{rng.randint(1, 250)}"),
                dst=dst_net.replace("0.0/16", f"{rng.randint(1, 250)}.{rng.randint(1, 250)}"),
                ttl=rng.randint(2, 255), id=rng.randint(0, 65535))
        l4 = rng.choice(["tcp", "udp", "icmp"])
        if l4 == "tcp":
            p = ip / TCP(sport=rng.randint(47100, 47999), dport=47001, flags="PA") / Raw(data)
        elif l4 == "udp":
            p = ip / UDP(sport=rng.randint(47100, 47999), dport=47002) / Raw(data)
        else:
            p = ip / ICMP() / Raw(data)
        out.append(IP(bytes(p)))
    return out


def scapy_sa(key, akey, src, dst):
    return SecurityAssociation(ESP, spi=SPI, crypt_algo="AES-CBC", crypt_key=key, auth_algo="HMAC-SHA1-96",
                               auth_key=akey, tunnel_header=IP(src=src, dst=dst))


def rfc_order(tmp, klen):
    label = f"RFC 4303 order, AES-{klen * 8}-CBC + HMAC-SHA1-96"
    key = bytes(rng.getrandbits(8) for _ in range(klen))
    akey = bytes(rng.getrandbits(8) for _ in range(16))
    clear = clear_packets(40, GW["A"][1], GW["B"][1])
    write_raw(f"{tmp}/clear.pcap", clear)
    # 1. A sends, scapy decrypts
    st = run(config("A", "rfc", key, akey, f"{tmp}/clear.pcap", tmp), tmp)
    wire = rdpcap(f"{tmp}/wire-A.pcap")
    if len(wire) != len(clear) or drops(st, "rt"):
        print(f"FAIL {label}: {len(wire)} ESP packets for {len(clear)}, drops {drops(st, 'rt')}")
        return 1
    sa = scapy_sa(key, akey, GW["A"][0], GW["B"][0])
    for i, (c, e) in enumerate(zip(clear, wire)):
        e = IP(bytes(e))
        if e.src != GW["A"][0] or e.dst != GW["B"][0] or e.proto != 50 or e[ESP].spi != SPI or \
                e[ESP].seq != REPLAY + i:
            print(f"FAIL {label}: packet {i}: {e.src} -> {e.dst} proto {e.proto} spi {e[ESP].spi:#x} "
                  f"seq {e[ESP].seq}, wanted seq {REPLAY + i}")
            return 1
        try:
            d = sa.decrypt(e)
        except Exception as ex:
            print(f"FAIL {label}: packet {i}: scapy cannot decrypt it: {ex!r}")
            return 1
        if bytes(d) != bytes(c):
            print(f"FAIL {label}: packet {i}: decrypted {bytes(d).hex()}, wanted {bytes(c).hex()}")
            return 1
    # 2. scapy sends, B takes: reordered, replayed, forged, unknown, old
    back = clear_packets(40, GW["A"][1], GW["B"][1])
    seqs = list(range(REPLAY, REPLAY + len(back)))
    order = list(range(len(back)))
    for i in range(0, len(order) - 4, 5):
        j = i + rng.randint(1, 4)
        order[i], order[j] = order[j], order[i]
    stream, genuine = [], []
    expect = {"auth": {"bad-icv": 0}, "unencap": {"replay": 0}, "rt": {"unknown-spi": 0}}

    def enc(idx, s=None, spi=SPI):
        sa.spi = spi
        e = bytearray(bytes(sa.encrypt(back[idx], seq_num=seqs[idx] if s is None else s)))
        sa.spi = SPI
        return e

    for n, idx in enumerate(order):
        if n % 9 == 4:
            t = enc(idx)
            pos = len(t) - rng.randint(1, 24)
            t[pos] ^= 1 << rng.randint(0, 7)
            stream.append(t)
            expect["auth"]["bad-icv"] += 1
        stream.append(enc(idx))
        genuine.append(idx)
        if n % 7 == 3:
            stream.append(bytearray(stream[-1]))
            expect["unencap"]["replay"] += 1
    stream.append(enc(0, spi=SPI ^ 0x5a5a))
    expect["rt"]["unknown-spi"] += 1
    stream.append(enc(0, s=seqs[-1] - WINDOW - 3))
    expect["unencap"]["replay"] += 1
    write_raw(f"{tmp}/esp.pcap", [IP(bytes(b)) for b in stream])
    st = run(config("B", "rfc", key, akey, f"{tmp}/esp.pcap", tmp), tmp)
    got = rdpcap(f"{tmp}/inner-B.pcap")
    want = [bytes(back[i]) for i in genuine]
    # the inner packets as they left B: CheckIPHeader passed them, nothing rewritten
    if [bytes(g) for g in got] != want:
        print(f"FAIL {label}: B gave {len(got)} inner packets, wanted the {len(want)} genuine ones in order")
        return 1
    for el, want_d in expect.items():
        if drops(st, el) != want_d:
            print(f"FAIL {label}: drops of {el}: {drops(st, el)}, wanted {want_d}")
            return 1
    print(f"ok   {label}: scapy decrypts all {len(clear)} of A's packets (seq {REPLAY}..); B takes "
          f"{len(want)} genuine of {len(stream)}, drops {expect}")
    return 0


def click_order(tmp):
    label = "Click's order (authenticate, then encrypt)"
    key = bytes(rng.getrandbits(8) for _ in range(16))
    akey = bytes(rng.getrandbits(8) for _ in range(16))
    clear = clear_packets(30, GW["A"][1], GW["B"][1])
    write_raw(f"{tmp}/clear.pcap", clear)
    run(config("A", "click", key, akey, f"{tmp}/clear.pcap", tmp), tmp)
    wire = [bytearray(bytes(p)) for p in rdpcap(f"{tmp}/wire-A.pcap")]
    if len(wire) != len(clear):
        print(f"FAIL {label}: {len(wire)} ESP packets for {len(clear)}")
        return 1
    forged = bytearray(wire[5])
    forged[40] ^= 0x10  # in the ciphertext
    stream = wire[:7] + [forged, bytearray(wire[3])] + wire[7:]
    write_raw(f"{tmp}/esp.pcap", [IP(bytes(b)) for b in stream])
    st = run(config("B", "click", key, akey, f"{tmp}/esp.pcap", tmp), tmp)
    got = [bytes(p) for p in rdpcap(f"{tmp}/inner-B.pcap")]
    if got != [bytes(c) for c in clear]:
        print(f"FAIL {label}: B gave {len(got)} inner packets, not A's {len(clear)}")
        return 1
    want = {"auth": {"bad-icv": 1}, "unencap": {"replay": 1}}
    for el, d in want.items():
        if drops(st, el) != d:
            print(f"FAIL {label}: drops of {el}: {drops(st, el)}, wanted {d}")
            return 1
    st = run(config("B", "rfc", key, akey, f"{tmp}/esp.pcap", tmp), tmp)
    if drops(st, "auth").get("bad-icv") != len(stream):
        print(f"FAIL {label}: RFC 4303's inbound path took Click-order packets: {drops(st, 'auth')}")
        return 1
    print(f"ok   {label}: A -> B gives back all {len(clear)} packets; a forgery and a replay dropped; "
          f"RFC 4303's inbound path refuses all {len(stream)}")
    return 0


def bad_key(tmp):
    path = os.path.join(tmp, "bad.click")
    open(path, "w").write("Idle -> rt :: RadixIPsecLookup(10.2.0.0/16 192.0.2.2 1 234 ABCD "
                          "112233EE556677888877665544332211 300 64) -> Discard; rt[1] -> Discard;\n")
    r = subprocess.run([SHOAL, "check", path], capture_output=True, text=True)
    if r.returncode == 0 or "ENCRYPT_KEY" not in r.stderr or f"{path}:1:" not in r.stderr:
        print(f"FAIL a short key: shoal check exited {r.returncode}: {r.stderr}")
        return 1
    print("ok   a short key: " + r.stderr.splitlines()[0])
    return 0


def main():
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        fails += rfc_order(tmp, 16)
        fails += rfc_order(tmp, 32)
        fails += click_order(tmp)
        fails += bad_key(tmp)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
