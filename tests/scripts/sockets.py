#!/usr/bin/env python3
"""Socket against Python's own sockets: TCP, UDP, UNIX and UNIX_DGRAM
servers echoing what they get (pushed, and pulled through a Queue), a TCP
client delivering a byte stream whole, ALLOW and DENY, a refused connection
that stops the router with the reason, two workers, and a hot swap that
keeps the connection. Each router is stopped by SIGINT (or its ControlSocket)
and must exit 0 with balanced accounting.
Usage: sockets.py SHOAL"""
import json, os, random, signal, socket, subprocess, sys, tempfile, time

SHOAL = sys.argv[1]
tmp = tempfile.mkdtemp()
fails = 0


def check(name, ok, detail=""):
    global fails
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else "  " + detail))
    fails += 0 if ok else 1


def free_port(kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Router:
    def __init__(self, config, *args):
        n = random.randrange(1 << 30)
        self.stats, conf = os.path.join(tmp, "stats%d.json" % n), os.path.join(tmp, "r%d.click" % n)
        with open(conf, "w") as f:
            f.write(config + "\n")
        self.p = subprocess.Popen([SHOAL, "run", "-q", conf, "--stats-out", self.stats, *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        out, err = self.p.communicate(timeout=20)
        self.err = err
        acct = json.load(open(self.stats))["accounting"] if os.path.exists(self.stats) else {}
        return self.p.returncode, acct


def connect(family, addr, kind=socket.SOCK_STREAM):
    for _ in range(50):
        try:
            s = socket.socket(family, kind)
            s.settimeout(5)
            s.connect(addr)
            return s
        except OSError:
            s.close()
            time.sleep(0.1)
    raise RuntimeError("cannot connect to %s" % (addr,))


def stream_echo(family, addr, nbytes):
    s = connect(family, addr)
    data = os.urandom(nbytes)
    got = bytearray()
    sent = 0
    s.setblocking(False)
    deadline = time.time() + 20
    while len(got) < nbytes and time.time() < deadline:
        if sent < nbytes:
            try:
                sent += s.send(data[sent:sent + 65536])
            except BlockingIOError:
                pass
        try:
            b = s.recv(1 << 16)
            if not b:
                break
            got += b
        except BlockingIOError:
            time.sleep(0.001)
    s.close()
    return bytes(got) == data, "%d of %d bytes back" % (len(got), nbytes)


def dgram_echo(family, addr, local=None, n=200):
    s = socket.socket(family, socket.SOCK_DGRAM)
    if local:
        s.bind(local)
    s.settimeout(3)
    for _ in range(n):
        d = os.urandom(random.randint(1, 1400))
        s.sendto(d, addr)
        b, _ = s.recvfrom(4096)
        if b != d:
            return False, "a datagram came back changed"
    s.close()
    return True, ""


def served(name, config, run, *args):
    r = Router(config, *args)
    try:
        ok, detail = run()
    except Exception as e:  # noqa: BLE001 (reported as the check's failure)
        ok, detail = False, repr(e)
    rc, acct = r.stop()
    check(name, ok, detail)
    check(name + ": exit 0, balanced", rc == 0 and acct.get("balanced"), "rc %s %s %s" % (rc, acct, r.err))
    return r


# TCP echo servers: pushed back, then pulled through a Queue, then on two workers.
for how, wiring, extra in [("pushed", "s -> s", []), ("pulled through a Queue", "s -> Queue(64) -> s", []),
                           ("two workers", "s -> s", ["--threads", "2"])]:
    port = free_port()
    served("TCP echo server, %s: 4 MiB back intact" % how, "s :: Socket(TCP, 127.0.0.1, %d); %s;" % (port, wiring),
           lambda: stream_echo(socket.AF_INET, ("127.0.0.1", port), 4 << 20), *extra)

port = free_port(socket.SOCK_DGRAM)
served("UDP echo server: 200 datagrams back to their sender", "u :: Socket(UDP, 127.0.0.1, %d); u -> u;" % port,
       lambda: dgram_echo(socket.AF_INET, ("127.0.0.1", port)))

path = os.path.join(tmp, "s.sock")
served("UNIX stream echo server (pulled): 1 MiB back", "s :: Socket(UNIX, %s); s -> Queue -> s;" % path,
       lambda: stream_echo(socket.AF_UNIX, path, 1 << 20))
check("the UNIX socket file is removed at the end", not os.path.exists(path))

dpath, cpath = os.path.join(tmp, "d.sock"), os.path.join(tmp, "c.sock")
served("UNIX_DGRAM echo server", "s :: Socket(UNIX_DGRAM, %s); s -> s;" % dpath,
       lambda: dgram_echo(socket.AF_UNIX, dpath, local=cpath, n=50))

# A TCP client: 1000 numbered records, in order, nothing else.
lst = socket.socket()
lst.bind(("127.0.0.1", 0))
lst.listen(1)
lst.settimeout(10)
port = lst.getsockname()[1]
r = Router('InfiniteSource(DATA "12345678record\\n", LIMIT 1000, STOP true) -> NumberPacket(OFFSET 0, NET_ORDER true)'
           ' -> Socket(TCP, 127.0.0.1, %d, CLIENT true);' % port)
c, _ = lst.accept()
c.settimeout(10)
buf = b""
while True:
    b = c.recv(1 << 16)
    if not b:
        break
    buf += b
rc, acct = r.stop()
want = b"".join((i).to_bytes(8, "big") for i in range(1000))
got = b"".join(buf[i:i + 8] for i in range(0, len(buf), 15) if buf[i + 8:i + 15] == b"record\n")
check("TCP client: 1000 records delivered whole and in order", got == want, "%d bytes" % len(buf))
check("TCP client: exit 0, balanced", rc == 0 and acct.get("balanced"), "rc %s %s %s" % (rc, acct, r.err))
lst.close()

# A connection refused: the router does not start, and says why.
port = free_port()
p = subprocess.run([SHOAL, "click", "-e", "Idle -> Socket(TCP, 127.0.0.1, %d, CLIENT true)" % port],
                   capture_output=True, text=True, timeout=20)
check("a refused connection: no start, the reason given", p.returncode != 0 and "Connection refused" in p.stderr,
      p.stderr)

# DENY everyone but what ALLOW routes.
for allow, let_in in [("", False), ("127.0.0.0/8 0", True)]:
    port = free_port()
    conf = ("deny :: RadixIPLookup(0.0.0.0/0 0); allow :: RadixIPLookup(%s); Idle -> deny -> allow -> Discard;"
            " s :: Socket(TCP, 127.0.0.1, %d, DENY deny, ALLOW allow); s -> s;" % (allow, port))

    def run():
        return stream_echo(socket.AF_INET, ("127.0.0.1", port), 1000)
    if let_in:
        served("ALLOW routes 127.0.0.1: let in past DENY", conf, run)
    else:
        conf_file = os.path.join(tmp, "deny.click")
        with open(conf_file, "w") as f:
            f.write(conf)
        c = subprocess.Popen([SHOAL, "click", conf_file, "-h", "s.refused"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        try:
            ok, _ = stream_echo(socket.AF_INET, ("127.0.0.1", port), 1000)
        except OSError:  # reset: closed by the router
            ok = False
        c.send_signal(signal.SIGINT)
        out, err = c.communicate(timeout=20)
        check("DENY 0.0.0.0/0: the connection is closed unanswered", not ok and c.returncode == 0,
              "rc %s %s" % (c.returncode, err))
        check("DENY: counted by s.refused", out.strip().endswith("1"), out + err)

# A hot swap to the same Socket keeps the socket and its connection.
port = free_port()
ctl = os.path.join(tmp, "ctl.sock")
r = Router("ControlSocket(unix, %s); s :: Socket(TCP, 127.0.0.1, %d); s -> s;" % (ctl, port))
try:
    c = connect(socket.AF_INET, ("127.0.0.1", port))
    c.sendall(b"before")
    got = c.recv(100)
    swap = subprocess.run([SHOAL, "ctl", "-u", ctl, "reload"], capture_output=True, text=True, timeout=20)
    c.sendall(b"after")
    got += c.recv(100)
    ok, detail = got == b"beforeafter" and swap.returncode == 0, (got, swap.stderr)
except OSError as e:
    ok, detail = False, repr(e)
rc, acct = r.stop()
check("hot swap: the connection kept, still echoed", ok, detail)
check("hot swap: exit 0, balanced", rc == 0 and acct.get("balanced"), "rc %s %s %s" % (rc, acct, r.err))

sys.exit(1 if fails else 0)
