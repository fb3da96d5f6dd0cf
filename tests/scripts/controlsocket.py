#!/usr/bin/env python3
"""ControlSocket and `shoal ctl` against a running router: Click's protocol
(banner, READ, READDATA, WRITE, WRITEDATA, WRITEUNTIL, CHECKREAD, CHECKWRITE,
QUIT and the reply codes), private handlers hidden, READONLY, a UNIX socket's
permissions, and bad input (garbage, a line too long, a client that closes
mid-command) answered or dropped while the router goes on.

Usage: controlsocket.py SHOAL"""
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time

SHOAL = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


class Client:
    def __init__(self, path=None, port=None):
        if path:
            # (the socket's file exists from bind() on, before listen(): a
            # server still starting refuses for a moment)
            for attempt in range(100):
                self.s = socket.socket(socket.AF_UNIX)
                try:
                    self.s.connect(path)
                    break
                except (ConnectionRefusedError, FileNotFoundError):
                    self.s.close()
                    if attempt == 99:
                        raise
                    time.sleep(0.05)
        else:
            self.s = socket.create_connection(("127.0.0.1", port))
        self.s.settimeout(10)
        self.buf = b""
        self.banner = self.line()

    def line(self):
        while b"\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise EOFError("closed")
            self.buf += d
        l, self.buf = self.buf.split(b"\n", 1)
        return l.rstrip(b"\r").decode()

    def data(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            if not d:
                raise EOFError("closed")
            self.buf += d
        d, self.buf = self.buf[:n], self.buf[n:]
        return d.decode()

    def reply(self):
        lines = []
        while True:
            l = self.line()
            lines.append(l[4:])
            if l[3] == " ":
                return int(l[:3]), "\n".join(lines)

    def cmd(self, text):
        self.s.sendall(text.encode())
        return self.reply()

    def read(self, text):
        code, msg = self.cmd(text)
        if code != 200:
            return code, msg
        l = self.line()
        assert l.startswith("DATA "), l
        return code, self.data(int(l[5:]))


with tempfile.TemporaryDirectory() as tmp:
    sock = os.path.join(tmp, "ctl.sock")
    ro = os.path.join(tmp, "ro.sock")
    secret = os.path.join(tmp, "secret")
    with open(secret, "w") as f:
        f.write("do not show\n")
    conf = os.path.join(tmp, "c.click")
    with open(conf, "w") as f:
        f.write(f"""
src :: InfiniteSource(LIMIT 20, STOP false) -> c :: Counter -> sw :: Switch(0) -> Discard;
sw[1] -> d2 :: Discard;
s :: Script(TYPE PASSIVE, return $(add $1 $2));
ControlSocket(UNIX, {sock});
ControlSocket(UNIX, {ro}, READONLY true, MODE 0640, MAX_LINE 1000);
tcp :: ControlSocket(TCP, 47100+);
""")
    p = subprocess.Popen([SHOAL, "run", "-q", conf], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(100):
        if os.path.exists(sock) and os.path.exists(ro):
            break
        time.sleep(0.05)
    check(os.path.exists(sock), "the UNIX socket exists")
    check(stat.S_IMODE(os.stat(sock).st_mode) == 0o600, "a UNIX socket is 0600 by default")
    check(stat.S_IMODE(os.stat(ro).st_mode) == 0o640, "MODE 0640 is applied")

    c = Client(path=sock)
    check(c.banner == "Click::ControlSocket/1.3", f"banner: {c.banner!r}")
    check(c.read("READ c.count\n") == (200, "20"), "READ c.count gives 20")
    check(c.read("read s.run 40 2\n") == (200, "42"), "READ with parameters")
    check(c.read("READDATA s.run 5\n1 2 3") == (200, "3"), "READDATA: the parameters as data")
    check(c.cmd("WRITE sw.switch 1\n")[0] == 200, "WRITE sw.switch 1")
    check(c.read("READ sw.switch\n") == (200, "1"), "a write is seen by the next read")
    check(c.cmd("WRITEDATA c.reset_counts 0\n")[0] == 200, "WRITEDATA of zero bytes")
    check(c.read("READ c.count\n") == (200, "0"), "reset_counts took effect")
    check(c.cmd("WRITEUNTIL sw.switch EOF\n0\nEOF\n")[0] == 200, "WRITEUNTIL")
    check(c.read("READ sw.switch\n") == (200, "0"), "WRITEUNTIL's value was written")
    check(c.cmd("CHECKREAD c.count\n")[0] == 200, "CHECKREAD of a read handler")
    check(c.cmd("CHECKWRITE c.count\n")[0] == 511, "CHECKWRITE of a read-only handler: 511")
    check(c.cmd("READ nosuch.count\n") == (510, "No element named 'nosuch'"), "510 for an unknown element")
    check(c.cmd("READ c.nosuch\n") == (511, "No handler named 'c.nosuch'"), "511 for an unknown handler")
    check(c.cmd(f"READ s.cat {secret}\n") == (511, "No handler named 's.cat'"), "a private handler is hidden")
    code, msg = c.cmd("WRITE sw.switch banana\n")
    check(code == 520 and "sw.switch" in msg, f"520 for a write the handler refuses: {code} {msg!r}")
    check(c.cmd("FROB x\n")[0] == 501, "501 for an unknown command")
    check(c.cmd("LLRPC c#1\n")[0] == 501, "501 for LLRPC")
    check(c.cmd("READ\n")[0] == 500, "500 for a command without its handler")
    check(c.read("READ tcp.port\n")[1].isdigit(), "the TCP port is readable")
    port = int(c.read("READ tcp.port\n")[1])
    check(47100 <= port < 47165, f"PORT 47100+ takes a port from 47100: {port}")
    check(c.read("READ list\n")[1].split("\n")[0] == "9", "the global list handler")

    # the same through TCP and through shoal ctl
    t = Client(port=port)
    check(t.read("READ c.count\n")[0] == 200, "TCP client reads")
    out = subprocess.run([SHOAL, "ctl", "-p", str(port), "read", "s.run", "1", "2"], capture_output=True, text=True)
    check(out.returncode == 0 and out.stdout == "3\n", f"shoal ctl read: {out.returncode} {out.stdout!r}")
    out = subprocess.run([SHOAL, "ctl", "-u", sock, "write", "sw.switch", "1"], capture_output=True, text=True)
    check(out.returncode == 0, "shoal ctl write")
    out = subprocess.run([SHOAL, "ctl", "-u", sock, "read", "sw.switch"], capture_output=True, text=True)
    check(out.stdout == "1\n", f"shoal ctl reads its write: {out.stdout!r}")
    out = subprocess.run([SHOAL, "ctl", "-u", sock, "read", "c.nosuch"], capture_output=True, text=True)
    check(out.returncode == 1 and "511" in out.stderr, "shoal ctl: a refused command exits 1 with the reply")
    out = subprocess.run([SHOAL, "ctl", "-u", os.path.join(tmp, "none"), "list"], capture_output=True, text=True)
    check(out.returncode == 2, "shoal ctl: no router exits 2")

    # READONLY: reads pass, writes are refused
    r = Client(path=ro)
    check(r.read("READ c.count\n")[0] == 200, "READONLY socket reads")
    check(r.cmd("WRITE sw.switch 0\n")[0] == 530, "READONLY socket refuses writes (530)")
    check(r.cmd("WRITE stop\n")[0] == 530, "READONLY socket refuses global writes (530)")
    # bad input: a line longer than MAX_LINE is refused and the connection closed
    r.s.sendall(b"READ " + b"x" * 5000)
    code, _ = r.reply()
    check(code == 500, "a line too long: 500")
    try:
        r.line()
        check(False, "the connection is closed after a line too long")
    except (EOFError, ConnectionResetError):
        pass
    # garbage, binary bytes, and a client closing in the middle of WRITEDATA
    g = Client(path=sock)
    check(g.cmd("\x00\x01\x02\xff garbage\n")[0] == 501, "binary garbage: 501")
    g.s.sendall(b"WRITEDATA sw.switch 100\nonly a few bytes")
    g.s.close()
    # a client that half-closes after its commands gets every reply, then the
    # router closes the connection (recv times out, failing the test, if not)
    h = Client(path=sock)
    h.s.sendall(b"READ c.count\nREAD sw.switch\n")
    h.s.shutdown(socket.SHUT_WR)
    got = h.buf
    while True:
        d = h.s.recv(65536)
        if not d:
            break
        got += d
    check(b"200 Read handler 'c.count' OK" in got and b"200 Read handler 'sw.switch' OK" in got,
          f"a half-closed client gets its replies: {got!r}")
    many = [Client(path=sock) for _ in range(20)]
    for m in many:
        m.s.sendall(b"READ c.count\n")
    check(all(m.reply()[0] == 200 for m in many), "20 clients at once are all answered")
    check(p.poll() is None, "the router survives bad clients")
    check(c.read("READ sw.switch\n") == (200, "1"), "a half-sent WRITEDATA did not write")
    check(c.cmd("QUIT\n") == (200, "Goodbye!"), "QUIT says goodbye")
    out = subprocess.run([SHOAL, "ctl", "-u", sock, "stop"], capture_output=True, text=True)
    check(out.returncode == 0, "shoal ctl stop")
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, "the router stops when told to")
    check(p.returncode == 0, f"the router exits 0 (got {p.returncode}; {p.stderr.read()!r})")
    check(not os.path.exists(sock), "the UNIX socket is removed at exit")

    # a file that is not a socket is never replaced
    plain = os.path.join(tmp, "plain")
    open(plain, "w").write("keep me")
    out = subprocess.run([SHOAL, "run", "-q", "/dev/stdin"], input=f"ControlSocket(UNIX, {plain});",
                         capture_output=True, text=True, timeout=10)
    check(out.returncode != 0 and "not a socket" in out.stderr, f"refuses to replace a plain file: {out.stderr!r}")
    check(open(plain).read() == "keep me", "the plain file is intact")

    # hot swap (shoal click -R): a connection goes on across the swap, to the
    # new configuration; one that fails leaves the old, and the reply says why
    hs = os.path.join(tmp, "hs.sock")
    p = subprocess.Popen([SHOAL, "click", "-R", "-u", hs, "-e", "Idle -> s :: Switch(0) -> Idle; s[1] -> Idle;"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(100):
        if os.path.exists(hs):
            break
        time.sleep(0.05)
    k = Client(path=hs)
    check(k.read("READ s.config\n") == (200, "0"), "before the swap")
    code, msg = k.cmd("WRITE hotconfig Idle -> s :: Switch(1) -> c :: Counter -> Idle; s[1] -> Idle;\n")
    check(code == 200, f"hotconfig: {code} {msg!r}")
    check(k.read("READ s.config\n") == (200, "1"), "the same connection reads the new configuration")
    check(k.read("READ c.count\n") == (200, "0"), "the new configuration's own elements")
    code, msg = k.cmd("WRITE hotconfig Idle -> Print\n")
    check(code == 520 and "output 0 unused" in msg and msg.endswith("Router could not be initialized!"),
          f"a configuration that fails: {code} {msg!r}")
    code, msg = k.cmd("WRITE hotconfig Idle -> Nope -> Idle\n")
    check(code == 520 and "undeclared element 'Nope'" in msg, f"one that does not parse: {code} {msg!r}")
    check(k.read("READ s.config\n") == (200, "1"), "a failed swap leaves the running configuration")
    l = Client(path=hs)
    check(l.read("READ s.config\n") == (200, "1"), "a new connection after the swap")
    check(k.cmd("WRITE stop\n")[0] == 200, "stop")
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, "the swapped-in router stops when told to")
    check(p.returncode == 0, f"exits 0 after a swap (got {p.returncode}; {p.stderr.read()!r})")

print(f"controlsocket: {'FAIL ' + str(len(failures)) if failures else 'ok'}")
sys.exit(1 if failures else 0)
