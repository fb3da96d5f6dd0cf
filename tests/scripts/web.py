#!/usr/bin/python3
"""`shoal run --web`: the live dashboard, its API and its page in a real browser.

Runs a graph with a source, a classifier, a queue that overflows (losses),
a discard (the configuration's drops) and a loop closed by a Switch, and
checks:
  - /api/graph: every element and connection of the configuration, placed
    sources left and sinks right (each connection that does not close the
    loop goes to a later column);
  - /api/stats: counts that grow while it runs, drops by reason, which
    reasons are losses;
  - /api/handlers: an element's handlers with their values and modes; an
    unknown element is a 404;
  - /api/write: refused (403) without --web-writes, and nothing written;
    with it, Counter's reset resets the count (done when the reply comes),
    a bad handler or a bad value (the worker's error) is a 400;
  - garbage requests (huge or malformed) get an error, the run goes on;
  - the page in headless Chromium (its DOM after the scripts ran): a box
    per element with live rates, the overflowing queue marked as losing
    packets, the Discard as discarding, the element named in the URL's
    fragment opened with its handlers, its write buttons disabled unless
    writes are on;
  - a bad or busy port is an error that says so; the run stops cleanly on
    SIGINT.
Usage: web.py SHOAL (exit 77 without Chromium).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

SHOAL = sys.argv[1]
CONFIG = """// the dashboard's test graph
src :: RatedSource(RATE 3000) -> c :: Counter -> cl :: Classifier(12/0800, -);
cl[1] -> q :: Queue(20) -> u :: RatedUnqueue(RATE 500) -> t :: Tee(2);
t[0] -> sink :: Counter -> Discard;
t[1] -> back :: Switch(-1) -> q;
cl[0] -> Discard;
"""
ELEMENTS = {"src", "c", "cl", "q", "u", "t", "sink", "back"}
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures += 1


def start(args, path):
    p = subprocess.Popen([SHOAL, "run", "-q", "--web", "0"] + args + [path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    m = re.search(r"dashboard at http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        p.kill()
        raise SystemExit("FAIL: no dashboard line: %r %s" % (line, p.stderr.read()))
    return p, "http://127.0.0.1:%s" % m.group(1)


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def post(url, fields):
    data = urllib.parse.urlencode(fields).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def dom(url, chromium, tmp):
    out = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--user-data-dir=" + os.path.join(tmp, "chromium"), "--virtual-time-budget=4000",
                          "--dump-dom", url], capture_output=True, text=True, timeout=90)
    return out.stdout


def boxes(html):
    """Each element's box: its classes and texts."""
    body = html[html.find("<body"):html.find("<script")]
    got = {}
    for m in re.finditer(r'<g class="([^"]*)" id="el-([^"]*)".*?</g>', body, re.S):
        got[m.group(2)] = (m.group(1).split(), re.findall(r"<text[^>]*>([^<]*)</text>", m.group(0)))
    return got


def main():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    tmp = tempfile.mkdtemp()
    try:
        path = os.path.join(tmp, "web.click")
        open(path, "w").write(CONFIG)
        p, base = start([], path)
        try:
            st, g = get(base + "/api/graph")
            names = {e["name"] for e in g["elements"]}
            check(st == 200 and ELEMENTS <= names and len(names) == len(ELEMENTS) + 2,
                  "graph: every element (%d)" % len(names))
            col = {e["name"]: e["column"] for e in g["elements"]}
            edges = {(c["from"], c["out"], c["to"], c["in"]) for c in g["connections"]}
            want = {("src", 0, "c", 0), ("c", 0, "cl", 0), ("cl", 1, "q", 0), ("q", 0, "u", 0), ("u", 0, "t", 0),
                    ("t", 0, "sink", 0), ("t", 1, "back", 0), ("back", 0, "q", 0)}
            check(want <= edges and len(edges) == len(want) + 2, "graph: every connection (%d)" % len(edges))
            forward = all(col[b] > col[a] for a, _, b, _ in edges if (a, b) != ("back", "q"))
            check(col["src"] == 0 and forward and col["back"] > col["q"],
                  "graph: sources left, each connection but the loop's to a later column")
            check(g["writes"] is False, "graph: writes off by default")

            st, s1 = get(base + "/api/stats")
            time.sleep(1.2)
            st2, s2 = get(base + "/api/stats")
            check(st == st2 == 200 and s2["elements"]["c"]["count"] > s1["elements"]["c"]["count"],
                  "stats: counts grow (%d -> %d)" % (s1["elements"]["c"]["count"], s2["elements"]["c"]["count"]))
            o1, o2 = s1.get("outputs", {}), s2.get("outputs", {})
            check(len(o2.get("cl", [])) == 2 and o2["cl"][1] > o1["cl"][1] and o2["cl"][0] == 0,
                  "stats: packets out by port grow, on the port they take (%s -> %s)" % (o1.get("cl"), o2.get("cl")))
            # q's output is pulled (by u), t's pushed; the Tee sends each packet both ways
            check(o2.get("q", [0])[0] > 0 and o2.get("t", [0, 0])[0] > 0 and o2.get("t", [0, 0])[1] > 0,
                  "stats: pulled and pushed outputs counted (q %s, t %s)" % (o2.get("q"), o2.get("t")))
            check(s2["drops"].get("q", {}).get("queue-full", 0) > 0 and "queue-full" in s2["loss_reasons"].get("q", [])
                  and s2["drops"].get("back", {}).get("switched-off", 0) > 0
                  and "switched-off" not in s2["loss_reasons"].get("back", []),
                  "stats: drops by reason, the queue's a loss, the switch's a discard")

            st, h = get(base + "/api/handlers?element=c")
            hs = {x["name"]: x for x in h.get("handlers", [])}
            check(st == 200 and hs["count"]["read"] and int(hs["count"]["value"]) > 0 and hs["reset"]["write"]
                  and not hs["reset"]["read"], "handlers: values and modes")
            st, h = get(base + "/api/handlers?element=c&numeric=1")
            hs = {x["name"]: x for x in h.get("handlers", [])}
            check(st == 200 and "value" in hs["count"] and "value" not in hs["ports"],
                  "handlers: numeric=1 reads the numbers only")
            st, h = get(base + "/api/handlers?element=" + urllib.parse.quote("no such <element>"))
            check(st == 404 and "no element" in h.get("error", ""), "handlers: an unknown element is a 404")

            before = get(base + "/api/stats")[1]["elements"]["c"]["count"]
            st, w = post(base + "/api/write", {"element": "c", "handler": "reset", "value": ""})
            after = get(base + "/api/stats")[1]["elements"]["c"]["count"]
            check(st == 403 and "--web-writes" in w.get("error", "") and after >= before,
                  "write: refused without --web-writes, nothing written")

            # garbage: a huge query, a malformed body, a bad method; the run goes on
            try:
                get(base + "/api/handlers?element=" + "x" * 100000)
            except Exception:  # the server may refuse the line: either way it stays up
                pass
            s = socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])))
            s.sendall(b"\x00\xff garbage \r\n\r\n")
            s.close()
            post(base + "/api/write", {"element": "\x00", "handler": "%%%"})
            st, _ = get(base + "/api/graph")
            check(st == 200 and p.poll() is None, "garbage requests: the dashboard and the run go on")

            if chromium:
                html = dom(base + "/#c", chromium, tmp)
                b = boxes(html)
                check(set(b) == names, "page: a box per element (%d)" % len(b))
                check(any("pps" in t for t in b.get("src", ([], []))[1]), "page: live rates (%s)" % (b.get("src"),))
                check(all(any("pps" in t for t in b.get(e, ([], []))[1]) for e in ("cl", "q", "u", "t")),
                      "page: rates of elements without counters (%s)" % ({e: b.get(e) for e in ("cl", "t")},))
                check("loss" in b.get("q", ([], []))[0] and any("queue-full" in t for t in b["q"][1]),
                      "page: the overflowing queue marked as losing packets (%s)" % (b.get("q"),))
                check("discards" in b.get("back", ([], []))[0], "page: the switch marked as discarding")
                check("sel" in b.get("c", ([], []))[0] and "c :: Counter" in html and "reset (w)" in html,
                      "page: #c opens the element with its handlers")
                check(re.search(r"<button[^>]*disabled[^>]*>write</button>", html) is not None,
                      "page: write buttons disabled without --web-writes")
                check(re.search(r"received [0-9.]+( k)? · sent", html) is not None, "page: the accounting line")
        finally:
            p.send_signal(signal.SIGINT)
            rc = p.wait(timeout=20)
            check(rc == 0, "SIGINT: shoal exited %d" % rc)

        p, base = start(["--web-writes"], path)
        try:
            time.sleep(0.5)
            before = get(base + "/api/stats")[1]["elements"]["c"]["count"]
            st, w = post(base + "/api/write", {"element": "c", "handler": "reset", "value": ""})
            after = get(base + "/api/stats")[1]["elements"]["c"]["count"]
            check(st == 200 and w.get("ok") and after < before, "write: reset with --web-writes (%d -> %d)" %
                  (before, after))
            st, w = post(base + "/api/write", {"element": "c", "handler": "nosuch", "value": "1"})
            check(st == 400 and "nosuch" in w.get("error", ""), "write: a bad handler is a 400 that says why")
            # the write runs on the worker that owns the element; its error comes back
            st, w = post(base + "/api/write", {"element": "u", "handler": "active", "value": "maybe"})
            check(st == 400 and "u.active" in w.get("error", ""), "write: a bad value is a 400: %s" % w.get("error"))
            if chromium:
                html = dom(base + "/#c", chromium, tmp)
                check(re.search(r"<button[^>]*>write</button>", html) is not None and
                      re.search(r"<button[^>]*disabled[^>]*>write</button>", html) is None,
                      "page: write buttons enabled with --web-writes")
        finally:
            p.send_signal(signal.SIGINT)
            p.wait(timeout=20)

        r = subprocess.run([SHOAL, "run", "-q", "--web", "99999", path], capture_output=True, text=True, timeout=20)
        check(r.returncode != 0 and "--web: bad port" in r.stderr, "a bad port: %s" % r.stderr.strip())
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        r = subprocess.run([SHOAL, "run", "-q", "--web", str(busy.getsockname()[1]), path], capture_output=True,
                           text=True, timeout=20)
        busy.close()
        check(r.returncode != 0 and "cannot listen" in r.stderr, "a busy port: %s" % r.stderr.strip())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("web: %d failures" % failures)
    if not chromium:
        print("skipped: chromium is not installed (the page was not checked)")
        return 77 if not failures else 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
