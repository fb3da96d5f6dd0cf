#!/usr/bin/python3
"""ESP against an independent implementation: scapy's SecurityAssociation
(built on pyca/cryptography).

For each suite (AES-GCM-128/256, AES-CTR + HMAC-SHA1-96, AES-CBC + HMAC-SHA1-96
and + HMAC-SHA-256-128, null + HMAC-SHA1), each mode (tunnel, transport) and
each family (IPv4, IPv6), with and without ESN:
  1. Shoal's IPsecOutbound encrypts random packets (TCP, UDP, ICMP; payloads
     of 0 to 1400 bytes); scapy decrypts every one and must get the packet
     back byte for byte, with sequence numbers 1, 2, 3... and Shoal's padding.
  2. scapy encrypts the same packets, in an order shuffled within the replay
     window, with replays, tampered copies (a flipped bit in the ciphertext,
     the ICV or the sequence number), a packet below the window and one with
     an unknown SPI; Shoal's IPsecInbound must give back exactly the genuine
     packets, in arrival order, and count each bad packet under its reason.
AES-GCM-128 and AES-CBC + HMAC-SHA1-96 also run as ESP in UDP (RFC 3948, NAT
traversal, scapy's nat_t_header; tunnel mode, and transport mode over IPv4), with a NAT keepalive, an IKE packet (passes
in the clear) and plain ESP for the UDP SA (encap-mismatch) added inbound.
Every case runs with each crypto engine Shoal has (intel-ipsec-mb when
built in, and OpenSSL), and once more with IPsecOutbound offloaded
(OffloadBalancer(FRACTION 1), the host device backend): the device's ESP
kernels seal the GCM, CTR and CBC suites, as ESP in UDP too (counted in
device_sealed: all of the packets), the null cipher goes to the host's path
(host_sealed); and IPsecInbound
offloaded the same way (the device checks ICVs and decrypts, device_opened).
Usage: ipsec_oracle.py SHOAL [SEED]. Exit 77 when scapy is missing.
"""
import hashlib
import hmac
import json
import os
import random
import subprocess
import sys
import tempfile

try:
    from scapy.all import ICMP, IP, TCP, UDP, Raw, rdpcap, wrpcap, conf
    from scapy.layers.inet6 import IPv6, ICMPv6EchoRequest
    from scapy.layers.ipsec import ESP, SecurityAssociation
    from scapy.utils import PcapWriter
except Exception as e:  # pragma: no cover
    print("SKIP: scapy with cryptography is needed:", e)
    sys.exit(77)

SHOAL = os.path.realpath(sys.argv[1])
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 1
rng = random.Random(SEED)
conf.verb = 0

# name, xfrm algorithm words (with {k} {a} keys), scapy crypt/auth names, key lengths
SUITES = [
    ("gcm128", "aead 'rfc4106(gcm(aes))' 0x{k} 128", "AES-GCM", None, 16 + 4, 0),
    ("gcm256", "aead 'rfc4106(gcm(aes))' 0x{k} 128", "AES-GCM", None, 32 + 4, 0),
    ("ctr-sha1", "enc 'rfc3686(ctr(aes))' 0x{k} auth-trunc 'hmac(sha1)' 0x{a} 96", "AES-CTR", "HMAC-SHA1-96", 16 + 4, 20),
    ("cbc-sha1", "enc 'cbc(aes)' 0x{k} auth-trunc 'hmac(sha1)' 0x{a} 96", "AES-CBC", "HMAC-SHA1-96", 16, 20),
    ("cbc256-sha256", "enc 'cbc(aes)' 0x{k} auth-trunc 'hmac(sha256)' 0x{a} 128", "AES-CBC", "SHA2-256-128", 32, 32),
    ("null-sha1", "enc 'ecb(cipher_null)' '' auth hmac(sha1) 0x{a}", "NULL", "HMAC-SHA1-96", 0, 20),
]


def clear_packets(fam, n, src, dst):
    out = []
    for i in range(n):
        size = rng.choice([0, 1, 2, 3, 13, 14, 15, 16, 17, 64, 200, 511, 1000, 1400])
        data = bytes(rng.getrandbits(8) for _ in range(size))
        l4 = rng.choice(["tcp", "udp", "icmp"])
        ip = IP(src=src, dst=dst, ttl=rng.randint(2, 255), id=rng.randint(0, 65535), tos=rng.choice([0, 0x10, 0xb8])) \
            if fam == 4 else IPv6(src=src, dst=dst, hlim=rng.randint(2, 255), tc=rng.choice([0, 0xb8]))
        if l4 == "tcp":
            # ports no scapy dissector claims, so the random payload stays Raw
            p = ip / TCP(sport=rng.randint(47100, 47999), dport=47001, seq=rng.getrandbits(32), flags="PA") / Raw(data)
        elif l4 == "udp":
            p = ip / UDP(sport=rng.randint(47100, 47999), dport=47002) / Raw(data)
        else:
            p = ip / (ICMP() if fam == 4 else ICMPv6EchoRequest()) / Raw(data)
        out.append(fam == 4 and IP(bytes(p)) or IPv6(bytes(p)))
    return out


def run_shoal(cfg, tmp, args=()):
    path = os.path.join(tmp, "run.click")
    with open(path, "w") as f:
        f.write(cfg)
    stats = os.path.join(tmp, "stats.json")
    r = subprocess.run([SHOAL, "run", "-q", path, "--stats-out", stats, *args], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAIL: shoal exited {r.returncode}")
    return json.load(open(stats))


def drops_of(stats, element):
    return {r: int(n) for r, n in stats.get("drops", {}).get(element, {}).items()}


def write_raw(path, pkts):
    w = PcapWriter(path, linktype=101, sync=True)  # LINKTYPE_RAW: IP packets (scapy warns, rightly, of no mismatch)
    for i, p in enumerate(pkts):
        p.time = 1700000000 + i
        w.write(p)
    w.close()


def esn_icv(auth, akey, esp_without_icv, seq_hi):
    """RFC 4303 §2.2.1: with ESN the ICV also covers the sequence number's
    high half, appended after the trailer. scapy leaves it out for ESP, so
    the test computes it with Python's hmac."""
    md, n = {"HMAC-SHA1-96": (hashlib.sha1, 12), "SHA2-256-128": (hashlib.sha256, 16)}[auth]
    return hmac.new(akey, esp_without_icv + seq_hi.to_bytes(4, "big"), md).digest()[:n]


def engines():
    """The engines this shoal has: `shoal check` refuses CRYPTO ipsec-mb without it."""
    out = ["openssl"]
    with tempfile.TemporaryDirectory() as tmp:
        sad = os.path.join(tmp, "e.sad")
        open(sad, "w").close()
        cfg = os.path.join(tmp, "e.click")
        with open(cfg, "w") as f:
            f.write(f"InfiniteSource(LIMIT 1) -> IPsecOutbound(SAD {sad}, CRYPTO ipsec-mb) -> Discard;")
        if subprocess.run([SHOAL, "check", cfg], capture_output=True).returncode == 0:
            out.insert(0, "ipsec-mb")
    return out


def main():
    fails = 0
    cases = 0
    with tempfile.TemporaryDirectory() as tmp:
        for engine in engines() + ["device"]:
            for name, algo, crypt, auth, klen, alen in SUITES:
                for fam in (4, 6):
                    for mode in ("tunnel", "transport"):
                        for esn in (False, True):
                            cases += 1
                            fails += case(tmp, engine, name, algo, crypt, auth, klen, alen, fam, mode, esn)
                    if name in ("gcm128", "cbc-sha1"):  # ESP in UDP (RFC 3948)
                        # (not IPv6 in transport mode: scapy's decrypt keeps the UDP header there)
                        for mode in ("tunnel", "transport") if fam == 4 else ("tunnel",):
                            cases += 1
                            fails += case(tmp, engine, name, algo, crypt, auth, klen, alen, fam, mode, False, True)
    print(f"ipsec_oracle: {cases - fails} of {cases} cases agree with scapy (seed {SEED})")
    fails += workers()
    return 1 if fails else 0


def esp_seqs(path):
    """The ESP sequence numbers of a raw-IP pcap (IPv4 outer headers), read
    without scapy (tens of thousands of packets)."""
    import struct
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    off, seqs = 24, []
    while off + 16 <= len(data):
        incl = struct.unpack(order + "I", data[off + 8:off + 12])[0]
        pkt = data[off + 16:off + 16 + incl]
        hl = (pkt[0] & 15) * 4
        if pkt[9] == 50:
            seqs.append(struct.unpack(">I", pkt[hl + 4:hl + 8])[0])
        off += 16 + incl
    return seqs


def workers():
    """Two workers share one SA: every sequence number is used exactly once
    (1..N), and the inbound side, with two workers too and a window wider
    than the run, accepts them all (a repeat would be a replay drop)."""
    n = 20000
    with tempfile.TemporaryDirectory() as tmp:
        sad = os.path.join(tmp, "w.sad")
        with open(sad, "w") as f:
            # the window covers the whole run: two workers' writes to one capture interleave by whole
            # batches, more than 1,024 packets apart on a slow (sanitizer) build
            f.write("ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x4242 reqid 1 mode tunnel "
                    "replay-window 65536 aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128\n"
                    "ip xfrm policy add src 10.0.0.0/8 dst 10.0.0.0/8 dir out "
                    "tmpl src 192.0.2.1 dst 192.0.2.2 proto esp reqid 1 mode tunnel\n")
        esp = os.path.join(tmp, "esp.pcap")
        for cfg, name in ((f"FastUDPFlows(LENGTH 200, FLOWS 256, SRCIP 10.1.0.1, DSTIP 10.2.0.1, LIMIT {n}, STOP true) "
                           f"-> Strip(14) -> IPsecOutbound(SAD {sad}, VERBOSE false) -> ToDump({esp}, ENCAP IP);", "out"),
                          (f"FromDump({esp}, STOP true) -> i :: IPsecInbound(SAD {sad}, VERBOSE false) "
                           f"-> c :: Counter -> Discard;", "in")):
            path = os.path.join(tmp, name + ".click")
            open(path, "w").write(cfg)
            stats = os.path.join(tmp, name + ".json")
            r = subprocess.run([SHOAL, "run", "-q", path, "--threads", "2", "--stats-out", stats],
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                print(f"FAIL two workers ({name}): shoal exited {r.returncode}: {r.stderr[-500:]}")
                return 1
            if name == "out":
                seqs = esp_seqs(esp)
                if sorted(seqs) != list(range(1, n + 1)):
                    dup = len(seqs) - len(set(seqs))
                    print(f"FAIL two workers: {len(seqs)} ESP packets, {dup} repeated sequence numbers")
                    return 1
            else:
                j = json.load(open(stats))
                got = int(j["elements"]["c"]["count"])
                if got != n or drops_of(j, "i"):
                    print(f"FAIL two workers: inbound accepted {got} of {n}, drops {drops_of(j, 'i')}")
                    return 1
    print(f"ok   two workers on one SA: sequence numbers 1..{n} each used once, all {n} accepted inbound")
    return 0


def case(tmp, engine, name, algo, crypt, auth, klen, alen, fam, mode, esn, natt=False):
    label = f"{engine}: {name} IPv{fam} {mode}{' esn' if esn else ''}{' nat-t' if natt else ''}"
    key = bytes(rng.getrandbits(8) for _ in range(klen))
    akey = bytes(rng.getrandbits(8) for _ in range(alen))
    spi = rng.randint(0x1000, 0xffffffff)
    if fam == 4:
        hsrc, hdst, gsrc, gdst = "10.1.0.5", "10.2.0.9", "192.0.2.1", "192.0.2.2"
    else:
        hsrc, hdst, gsrc, gdst = "fd00:1::5", "fd00:2::9", "2001:db8::1", "2001:db8::2"
    # transport mode protects the hosts' own packets: the SA is between them
    ssrc, sdst = (gsrc, gdst) if mode == "tunnel" else (hsrc, hdst)
    words = algo.format(k=key.hex(), a=akey.hex())
    window = 64
    start = 0
    if esn:
        start = 0xfffffff0  # the low half wraps during the run: ESN's high half must be inferred
    sad = os.path.join(tmp, "gw.sad")
    with open(sad, "w") as f:
        f.write(f"# {label}\n")
        f.write(f"ip xfrm state add src {ssrc} dst {sdst} proto esp spi {spi:#x} reqid 7 mode {mode} \\\n")
        f.write(f"    replay-window {window}{' flag esn' if esn else ''} replay-oseq {start & 0xffffffff} {words}"
                f"{' encap espinudp 4500 4500 0.0.0.0' if natt else ''}\n")
        tsrc_dst = f"src {ssrc} dst {sdst} " if mode == "tunnel" else ""
        f.write(f"ip xfrm policy add src {hsrc} dst {hdst} dir out tmpl {tsrc_dst}proto esp reqid 7 mode {mode}\n")
        f.write(f"ip xfrm policy add src {hsrc} dst {hdst} dir in tmpl {tsrc_dst}proto esp reqid 7 mode {mode}\n")
    if fam == 4:
        th = IP(src=ssrc, dst=sdst)
    else:
        th = IPv6(src=ssrc, dst=sdst)
    sa = SecurityAssociation(ESP, spi=spi, crypt_algo=crypt, crypt_key=key if crypt != "NULL" else None,
                             auth_algo=auth, auth_key=akey if auth else None,
                             tunnel_header=th if mode == "tunnel" else None, esn_en=esn, esn=0,
                             nat_t_header=UDP(sport=4500, dport=4500) if natt else None)
    clear = clear_packets(fam, 40, hsrc, hdst)
    bad = 0

    # 1. Shoal encrypts, scapy decrypts.
    write_raw(os.path.join(tmp, "clear.pcap"), clear)
    encap = "IP"
    device = engine == "device"
    out_stats = run_shoal(f"""FromDump({tmp}/clear.pcap, STOP true) {'-> OffloadBalancer(FRACTION 1)' if device else ''}
                  -> o :: IPsecOutbound(SAD {sad}, VERBOSE false, CRYPTO {'openssl' if device else engine})
                  -> ToDump({tmp}/esp.pcap, ENCAP {encap});""", tmp, ["--device", "host"] if device else [])
    got = rdpcap(os.path.join(tmp, "esp.pcap"))
    if len(got) != len(clear):
        print(f"FAIL {label}: Shoal wrote {len(got)} ESP packets for {len(clear)}")
        return 1
    if device:
        o = out_stats["elements"]["o"]
        on_device = crypt in ("AES-GCM", "AES-CTR", "AES-CBC")  # (ESP in UDP too)
        sealed = (o.get("device_sealed"), o.get("host_sealed"))
        if sealed != ((len(clear), 0) if on_device else (0, len(clear))):
            print(f"FAIL {label}: sealed on the device and on the host: {sealed}")
            return 1
    for i, (c, e) in enumerate(zip(clear, got)):
        e = IP(bytes(e)) if fam == 4 else IPv6(bytes(e))
        esp = e[ESP]
        want_seq = (start + 1 + i) & 0xffffffff
        if esp.spi != spi or esp.seq != want_seq:
            print(f"FAIL {label}: packet {i}: spi {esp.spi:#x} seq {esp.seq}, wanted {spi:#x} {want_seq}")
            return 1
        if mode == "tunnel" and (e.src != ssrc or e.dst != sdst):
            print(f"FAIL {label}: packet {i}: outer {e.src} -> {e.dst}")
            return 1
        if fam == 4:
            again = e.copy()
            del again.chksum
            if IP(bytes(again)).chksum != e.chksum:
                print(f"FAIL {label}: packet {i}: IPv4 header checksum {e.chksum:#x}, wanted {IP(bytes(again)).chksum:#x}")
                return 1
        if natt:
            if not e.haslayer(UDP) or (e[UDP].sport, e[UDP].dport) != (4500, 4500) or \
                    e[UDP].len != len(e[UDP]):
                print(f"FAIL {label}: packet {i}: not ESP in UDP 4500 -> 4500: {e.summary()}")
                return 1
            again = e.copy()
            del again[UDP].chksum  # scapy computes it again
            want_sum = 0 if fam == 4 else (IPv6(bytes(again)))[UDP].chksum
            if e[UDP].chksum != want_sum:
                print(f"FAIL {label}: packet {i}: UDP checksum {e[UDP].chksum:#x}, wanted {want_sum:#x}")
                return 1
        try:
            sa.esn = (start + 1 + i) >> 32
            verify = True
            if esn and auth:
                raw_e = bytes(e)
                n = len(raw_e) - sa.auth_algo.icv_size
                hl = (20 if fam == 4 else 40) + (8 if natt else 0)
                if esn_icv(auth, akey, raw_e[hl:n], sa.esn) != raw_e[n:]:
                    raise ValueError("the ICV over ESP and the high sequence half does not match")
                verify = False
            d = sa.decrypt(e, verify=verify)
        except Exception as ex:
            print(f"FAIL {label}: packet {i}: scapy cannot decrypt Shoal's packet: {ex!r}")
            return 1
        if bytes(d) != bytes(c):
            print(f"FAIL {label}: packet {i}: decrypted\n  {bytes(d).hex()}\nwanted\n  {bytes(c).hex()}")
            return 1

    # 2. scapy encrypts, Shoal decrypts, with replays, reordering and forgeries.
    seqs = list(range(start + 1, start + 1 + len(clear)))
    order = list(range(len(clear)))
    for i in range(0, len(order) - 4, 5):  # reordered within the window
        j = i + rng.randint(1, 4)
        order[i], order[j] = order[j], order[i]
    stream, genuine, expect = [], [], {"replay": 0, "integrity": 0, "unknown-spi": 0}

    hl = (20 if fam == 4 else 40) + (8 if natt else 0)  # where ESP starts

    def enc(idx, spi_override=None, s=None):
        s = seqs[idx] if s is None else s
        sa.esn = s >> 32
        sa.spi = spi_override or spi
        sa.seq_num = s & 0xffffffff  # scapy reads seq_num=0 as "the SA's counter"
        e = bytearray(bytes(sa.encrypt(clear[idx], seq_num=s & 0xffffffff)))
        sa.spi = spi
        if esn and auth:  # scapy's ICV leaves out the high half
            n = len(e) - sa.auth_algo.icv_size
            e[n:] = esn_icv(auth, akey, bytes(e[hl:n]), s >> 32)
        return e

    for n, idx in enumerate(order):
        if n % 9 == 4:  # a forgery first: a bit flipped in the ciphertext or the ICV
            t = enc(idx)
            pos = len(t) - rng.randint(1, 24)
            t[pos] ^= 1 << rng.randint(0, 7)
            stream.append(t)
            expect["integrity"] += 1
        stream.append(enc(idx))
        genuine.append(idx)
        if n % 7 == 3:  # a replay of a packet already accepted (refused before its ICV is checked)
            stream.append(bytearray(stream[-1]))
            expect["replay"] += 1
    # a forged sequence number, far ahead: authenticated, so the integrity check refuses it
    f = enc(order[-1])
    f[hl + 4:hl + 8] = ((seqs[-1] + 5) & 0xffffffff).to_bytes(4, "big")
    stream.append(f)
    expect["integrity"] += 1
    # an unknown SPI
    stream.append(enc(0, spi_override=spi ^ 0x5a5a))
    expect["unknown-spi"] += 1
    if natt:
        # a NAT keepalive (dropped), plain ESP for an SA that wants UDP (dropped), and IKE (non-ESP marker:
        # passes in the clear, so it comes out last)
        outer = IP(src=ssrc, dst=sdst) if fam == 4 else IPv6(src=ssrc, dst=sdst)
        stream.append(bytearray(bytes(outer / UDP(sport=4500, dport=4500) / Raw(b"\xff"))))
        expect["natt-keepalive"] = 1
        plain = SecurityAssociation(ESP, spi=spi, crypt_algo=crypt, crypt_key=key if crypt != "NULL" else None,
                                    auth_algo=auth, auth_key=akey if auth else None, tunnel_header=th)
        stream.append(bytearray(bytes(plain.encrypt(clear[0], seq_num=seqs[-1] + 1))))
        expect["encap-mismatch"] = 1
    # a sequence number never used but below the window by now (only without
    # ESN: with ESN, a number that far back is read as one 2^32 ahead, and its
    # ICV then fails, which the forged case above covers)
    old_seq = seqs[-1] - window - 3
    if not esn and old_seq > start:
        stream.append(enc(0, s=old_seq))
        expect["replay"] += 1
    ike = None
    if natt and mode == "tunnel":  # (in transport mode the hosts' inbound policy would want it protected)
        ike = (IP(src=ssrc, dst=sdst) if fam == 4 else IPv6(src=ssrc, dst=sdst)) / \
            UDP(sport=4500, dport=4500) / Raw(b"\0\0\0\0" + bytes(range(28)))
        ike = IP(bytes(ike)) if fam == 4 else IPv6(bytes(ike))
        stream.append(bytearray(bytes(ike)))
    pkts = [IP(bytes(b)) if fam == 4 else IPv6(bytes(b)) for b in stream]
    write_raw(os.path.join(tmp, "in.pcap"), pkts)
    stats = run_shoal(f"""FromDump({tmp}/in.pcap, STOP true) {'-> OffloadBalancer(FRACTION 1)' if device else ''}
                          -> i :: IPsecInbound(SAD {sad}, VERBOSE false, CRYPTO {'openssl' if device else engine})
                          -> ToDump({tmp}/out.pcap, ENCAP IP);""", tmp, ["--device", "host"] if device else [])
    out = rdpcap(os.path.join(tmp, "out.pcap"))
    want = [bytes(clear[i]) for i in genuine] + ([bytes(ike)] if ike else [])
    got = [bytes(p) for p in out]
    if got != want:
        print(f"FAIL {label}: Shoal gave {len(got)} packets, wanted {len(want)}; drops {drops_of(stats, 'i')}")
        for k, (a, b) in enumerate(zip(got, want)):
            if a != b:
                print(f"  first difference at {k}:\n  {a.hex()}\n  {b.hex()}")
                break
        return 1
    d = drops_of(stats, "i")
    for reason, n in expect.items():
        if d.get(reason, 0) != n:
            print(f"FAIL {label}: {d.get(reason, 0)} '{reason}' drops, wanted {n} (all drops: {d})")
            return 1
    extra = {k: v for k, v in d.items() if k not in expect and v}
    if extra:
        print(f"FAIL {label}: unexpected drops {extra}")
        return 1
    if not stats["accounting"]["balanced"]:
        print(f"FAIL {label}: accounting does not balance: {stats['accounting']}")
        return 1
    if device:
        i = stats["elements"]["i"]
        # the device checked the ICVs of the GCM and CTR SAs' packets (the genuine ones, and replays that
        # passed the window before an earlier copy was accepted), the host the others'
        opened = (i.get("device_opened"), i.get("host_opened"))
        on_device = crypt in ("AES-GCM", "AES-CTR", "AES-CBC")  # (ESP in UDP too)
        if (on_device and (opened[0] < len(genuine) or opened[1] != 0)) or \
                (not on_device and (opened[0] != 0 or opened[1] < len(genuine))):
            print(f"FAIL {label}: opened on the device and on the host: {opened}")
            return 1
    print(f"ok   {label}: {len(clear)} packets each way; drops {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
