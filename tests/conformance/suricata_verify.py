#!/usr/bin/env python3
"""Suricata's verification suite through `shoal ids`.

Runs each test of ../shared/conformance/suricata-verify (the tests listed in
its TESTS.txt) the way Suricata-verify's run.py does: the test's capture,
rules, suricata.yaml and arguments given to `shoal ids`, then every check of
its test.yaml over the EVE output (filters, with their match operators,
shell checks, and files compared with the expected ones). Suricata 8 is the reference version.

Each test ends as
  pass  every check holds;
  fail  a check does not hold, or shoal ids failed;
  crash shoal ids died of a signal or a sanitizer report: the run fails;
  n/a   it cannot apply: a requirement Shoal does not meet (a version,
        a feature, a command of its own, an argument with no equivalent), a
        rule Shoal refused (the reason is the first refusal), or a failed
        check on an event type Shoal does not write.
A summary line counts them. With --baseline FILE, the run fails when a test
named in FILE (one per line) does not pass; --update-baseline rewrites FILE
with the tests that passed.
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:  # the project's install-deps.sh installs python3-yaml
    print("suricata_verify.py: needs python3-yaml", file=sys.stderr)
    sys.exit(2)

REFERENCE = (8, 0, 7)  # Suricata 8: the behaviour the tests are read against
# Event types `shoal ids` writes.
PRODUCED = {"alert", "flow", "drop", "http", "fileinfo", "dns", "tls", "stats", "sip", "ssh", "anomaly", "ftp", "smtp", "netflow", "metadata"}
# Suricata features Shoal has (test.yaml `features:`).
FEATURES = {"HAVE_JA3", "HAVE_JA4"}


def version(v):
    parts = [int(x) for x in re.findall(r"\d+", str(v))]
    return tuple(parts)


def version_ok(req):
    """None when the Suricata version requirements hold for REFERENCE, else why not."""
    if "min-version" in req:
        mv = version(req["min-version"])
        if REFERENCE[: len(mv)] < mv:
            return f"needs Suricata >= {req['min-version']}"
    if "lt-version" in req:
        lv = version(req["lt-version"])
        if REFERENCE[: len(lv)] >= lv:
            return f"for Suricata < {req['lt-version']}"
    if "gt-version" in req:
        gv = version(req["gt-version"])
        if REFERENCE[: len(gv)] <= gv:
            return f"needs Suricata > {req['gt-version']}"
    if "version" in req:
        v = version(req["version"])
        if REFERENCE[: len(v)] != v:
            return f"for Suricata {req['version']}"
    return None


def requirements(req):
    """None when a requires: block holds, else why not."""
    if not req:
        return None
    why = version_ok(req)
    if why:
        return why
    for f in req.get("features", []) or []:
        if f not in FEATURES:
            return f"needs Suricata feature {f}"
    if req.get("script"):
        return "needs a script of its own"
    if req.get("files"):
        return "needs files of Suricata's source tree"
    os_ = req.get("os")
    if os_ and os_ != "linux":
        return f"for {os_}"
    return None


def find_value(name, obj):
    """The value a dotted check path names in an EVE record (run.py's rules)."""
    for part in name.split("."):
        if part == "__len":
            try:
                return len(obj)
            except TypeError:
                return -1
        if part in ("__find", "__startswith", "__endswith", "__contains", "__gt", "__gte", "__lt", "__lte"):
            break
        m = re.match(r"^(.*)\[(\d+)\]$", part)
        key, index = (m.group(1), int(m.group(2))) if m else (part, None)
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
        if index is not None:
            try:
                obj = obj[index]
            except (IndexError, KeyError, TypeError):
                return None
    return obj


def record_matches(match, rec):
    for key, expected in match.items():
        if key in ("has-key", "not-has-key"):  # a key, or a list of them
            for k in expected if isinstance(expected, list) else [expected]:
                if (find_value(k, rec) is None) == (key == "has-key"):
                    return False
            continue
        val = find_value(key, rec)
        op = key.rsplit(".", 1)[-1] if "." in key else ""
        if op == "__find":
            if val is None or str(expected) not in str(val):
                return False
        elif op == "__startswith":
            if val is None or not str(val).startswith(str(expected)):
                return False
        elif op == "__endswith":
            if val is None or not str(val).endswith(str(expected)):
                return False
        elif op == "__contains":
            if not isinstance(val, list) or expected not in val:
                return False
        elif op in ("__gt", "__gte", "__lt", "__lte"):
            if not isinstance(val, (int, float)):
                return False
            ok = {"__gt": val > expected, "__gte": val >= expected, "__lt": val < expected, "__lte": val <= expected}
            if not ok[op]:
                return False
        elif val != expected and str(val) != str(expected):
            return False
    return True


def check_filter(f, outdir):
    """None when a filter check holds, else why not."""
    path = os.path.join(outdir, f.get("filename", "eve.json"))
    recs = []
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                line = line.strip()
                if line:
                    try:
                        recs.append(json.loads(line))
                    except json.JSONDecodeError:
                        return f"{os.path.basename(path)}: a line is not JSON: {line[:80]}"
    match = f.get("match") or {}
    n = sum(1 for r in recs if record_matches(match, r))
    if "count" in f:
        if n != f["count"]:
            return f"{short(match)}: expected {f['count']}, got {n}"
        return None
    return None if n > 0 else f"{short(match)}: no match"


def check_stats(expect, outdir):
    """A stats check (run.py's StatsCheck): each counter of the last stats record as expected."""
    last = None
    path = os.path.join(outdir, "eve.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if r.get("event_type") == "stats":
                    last = r
    if last is None:
        return "no stats record"
    for key, want in expect.items():
        got = find_value("stats." + key, last)
        if got != want:
            return f"stats.{key}: expected {want}, got {got}"
    return None


def short(match):
    """A check's match fields, long values cut, for the report."""
    return json.dumps({k: (v[:40] + "..." if isinstance(v, str) and len(v) > 43 else v) for k, v in match.items()},
                      sort_keys=True)


def check_shell(s, outdir, env):
    r = subprocess.run(s["args"], shell=True, cwd=outdir, env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return f"shell '{s['args']}' exited {r.returncode}"
    if "expect" in s and r.stdout.strip() != str(s["expect"]).strip():
        return f"shell '{s['args']}': expected {s['expect']!r}, got {r.stdout.strip()!r}"
    return None


# Suricata command-line arguments and what shoal ids takes for them.
def translate_args(args, tdir, outdir):
    out = []
    words = []
    for a in args or []:
        a = a.replace("${TEST_DIR}", tdir).replace("${OUTPUT_DIR}", outdir)
        words += shlex.split(a)
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-k" and i + 1 < len(words):
            out += ["-k", words[i + 1]]
            i += 2
            continue
        if w == "--set" and i + 1 < len(words):
            out += ["--set", words[i + 1]]
            i += 2
            continue
        if w == "--simulate-ips":
            out.append("--ips")
        elif w.startswith("--data-dir="):
            out.append(w)
        elif w == "--data-dir" and i + 1 < len(words):
            out += ["--data-dir", words[i + 1]]
            i += 1
        elif w.startswith("--runmode"):
            if w == "--runmode":
                i += 1
        else:
            return None, f"argument {w} has no equivalent"
        i += 1
    return out, None


def eve_records(path):
    """eve.json's records, sorted, less what differs from run to run: stats
    records, flow ids, and the wall-clock times of packets that carry none
    (today's or yesterday's date)."""
    import datetime
    today = datetime.datetime.now(datetime.timezone.utc).date()
    days = "|".join(str(today - datetime.timedelta(days=d)) for d in (0, 1))
    wall = re.compile(r'"(%s)T[0-9:.]+[+-][0-9]{4}"' % days)
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as fh:
        return sorted(wall.sub('"WALL"', re.sub(r'"flow_id":\d+,?', "", l.strip()))
                      for l in fh if '"event_type":"stats"' not in l)


def run_test(name, suite, shoal, work, extra=()):
    tdir = os.path.join(suite, "tests", name)
    with open(os.path.join(tdir, "test.yaml")) as fh:
        y = yaml.safe_load(fh) or {}
    why = requirements(y.get("requires"))
    if why:
        return name, "n/a", why
    if y.get("command"):
        return name, "n/a", "runs a command of its own"
    pcap = y.get("pcap")
    if pcap is False or (pcap is None and "pcap" in y):
        return name, "n/a", "no capture"
    if not pcap:
        caps = [f for f in os.listdir(tdir) if f.endswith(".pcap") or f.endswith(".pcapng")]
        if len(caps) != 1:
            return name, "n/a", f"{len(caps)} captures in the directory"
        pcap = caps[0]
    pcap = os.path.normpath(os.path.join(tdir, pcap))
    if "rules" in y:
        rules = os.path.join(tdir, y["rules"])
    else:  # test.rules, else the directory's one .rules file
        found = sorted(f for f in os.listdir(tdir) if f.endswith(".rules"))
        rules = os.path.join(tdir, "test.rules" if "test.rules" in found else found[0] if len(found) == 1 else "")
    if not os.path.isfile(rules):
        return name, "n/a", "no rules file"
    outdir = os.path.join(work, name.replace("/", "__"))
    shutil.rmtree(outdir, ignore_errors=True)  # EVE is appended to: each run starts empty
    os.makedirs(outdir)
    args, why = translate_args(y.get("args"), tdir, outdir)
    if why:
        return name, "n/a", why
    cmd = [shoal, "ids", "-q", "-r", pcap, "-S", rules, "-l", outdir] + args + list(extra)
    if "ips" in os.path.basename(name) and "--ips" not in cmd:
        cmd.append("--ips")
    cfg = os.path.join(tdir, "suricata.yaml")
    if os.path.exists(cfg):
        cmd += ["-c", cfg]
    env = dict(os.environ)
    for k, v in (y.get("env") or {}).items() if isinstance(y.get("env"), dict) else []:
        env[k] = str(v)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        return name, "fail", "shoal ids ran over 120 s"
    with open(os.path.join(outdir, "shoal.log"), "w") as fh:
        fh.write(" ".join(shlex.quote(c) for c in cmd) + "\n" + r.stdout + r.stderr)
    # a crash or a sanitizer report fails the whole run, whatever the baseline says
    if r.returncode < 0 or re.search(r"ERROR: (Address|Leak|Thread)Sanitizer|runtime error:", r.stderr):
        return name, "crash", f"shoal ids crashed (status {r.returncode}); see {outdir}/shoal.log"
    want_rc = y.get("exit-code", 0)
    if r.returncode != want_rc:
        tail = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
        return name, "fail", f"shoal ids exited {r.returncode}: {tail}"
    refused = None
    m = re.search(r"; (\d+) skipped", r.stderr)
    if m and int(m.group(1)) > 0:
        lines = r.stderr.splitlines()
        for k, line in enumerate(lines):
            if "skipped" in line and k + 1 < len(lines):
                refused = lines[k + 1].strip()
                break
        refused = refused or f"{m.group(1)} rules refused"
    failures = []
    for c in y.get("checks") or []:
        kind, body = next(iter(c.items()))
        body = body or {}
        if isinstance(body, dict) and requirements(body.get("requires")):
            continue  # a check for another version or feature set: skipped, as run.py does
        if kind == "filter":
            why = check_filter(body, outdir)
            if why:
                ev = (body.get("match") or {}).get("event_type")
                failures.append((why, ev))
        elif kind == "shell":
            why = check_shell(body, outdir, env)
            if why:
                failures.append((why, None))
        elif kind == "file-compare":  # a file written to the output directory, byte for byte
            got, want = os.path.join(outdir, body.get("filename", "")), os.path.join(tdir, body.get("expected", ""))
            if not os.path.isfile(got):
                failures.append((f"file-compare: {body.get('filename')} was not written", None))
            elif open(got, "rb").read() != open(want, "rb").read():
                failures.append((f"file-compare: {body.get('filename')} differs from {body.get('expected')}", None))
        elif kind == "stats":
            why = check_stats(body, outdir)
            if why:
                failures.append((why, "stats"))
        else:
            failures.append((f"a {kind} check", kind))
    if not failures:
        return name, "pass", ""
    if refused:
        return name, "n/a", f"rule refused: {refused}"
    for why, ev in failures:
        if ev is not None and ev not in PRODUCED:
            return name, "n/a", f"event_type {ev} is not written ({why})"
    return name, "fail", failures[0][0]


def summary_markdown(names, results):
    """The tables of docs/suricata-conformance.md: counts, n/a reasons, failures."""
    import collections

    c = collections.Counter(v[0] for v in results.values())
    na = collections.Counter()
    for n in names:
        st, why = results[n]
        if st != "n/a":
            continue
        w = re.sub(r"rule refused: [^:]*:\d+: (sid \d+: )?", "rule refused: ", why)
        w = re.sub(r"\(\{.*", "", w).strip()
        w = re.sub(r"protocol '([^']*)'.*", r"protocol '\1'", w)
        w = re.sub(r"option '([^']*)'.*", r"option '\1'", w)
        w = re.sub(r"'([^']*)' needs an application-layer buffer.*", r"buffer '\1'", w)
        na[w] += 1
    out = ["| | tests |", "|---|---|"] + [f"| {k} | {c[k]} |" for k in ("pass", "fail", "n/a")]
    out += ["", "### Not applicable, by reason", "", "| reason | tests |", "|---|---|"]
    out += [f"| {k.replace('|', '/')} | {v} |" for k, v in na.most_common(30)]
    out += ["", "### Failing", "", "| test | first failed check |", "|---|---|"]
    out += [f"| {n} | {results[n][1][:150].replace('|', '/')} |" for n in names if results[n][0] == "fail"]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shoal", required=True, help="the shoal binary")
    ap.add_argument("--suite", required=True, help="the suricata-verify directory")
    ap.add_argument("--work", help="output directory (default: a temporary one)")
    ap.add_argument("--baseline", help="tests that must pass, one per line")
    ap.add_argument("--update-baseline", action="store_true", help="write the passing tests to --baseline")
    ap.add_argument("--report", help="write per-test results here (TSV)")
    ap.add_argument("--markdown", help="write the summary tables (docs/suricata-conformance.md's) here")
    ap.add_argument("--same-as-burst", type=int, metavar="N",
                    help="run the tests again reading N packets a batch (shoal.burst) and fail where their EVE "
                         "records differ: where batches begin must not change what is detected or logged")
    ap.add_argument("--same-as-threads", type=int, metavar="N",
                    help="the same with N worker threads (-t N): flows spread over workers must not change them")
    ap.add_argument("--may-differ", metavar="FILE",
                    help="tests whose records may differ in --same-as-* runs, one per line with the reason "
                         "in a comment above it (listed tests that were alike this time are named)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--shard", metavar="K/N",
                    help="run the tests whose place in the list is K modulo N (the sanitizer build runs half)")
    ap.add_argument("tests", nargs="*", help="test names (default: all of TESTS.txt)")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.suite, "tests")):
        print(f"skipped: suricata-verify is not at {a.suite}")
        return 77
    names = a.tests or open(os.path.join(a.suite, "TESTS.txt")).read().split()
    if a.shard:
        k, n = (int(x) for x in a.shard.split("/"))
        names = [t for i, t in enumerate(names) if i % n == k]
        print(f"shard {k}/{n}: {len(names)} tests")
    work = a.work or tempfile.mkdtemp(prefix="shoal-sv-")
    os.makedirs(work, exist_ok=True)
    results = {}
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for name, status, why in ex.map(lambda n: run_test(n, a.suite, a.shoal, work), names):
            results[name] = (status, why)
            print(f"{status:4}  {name}{'  ' + why if why else ''}", flush=True)
    counts = {s: sum(1 for v in results.values() if v[0] == s) for s in ("pass", "fail", "n/a", "crash")}
    print(f"suricata-verify: {counts['pass']} pass, {counts['fail']} fail, {counts['n/a']} n/a, of {len(results)}"
          + (f"; {counts['crash']} CRASHED" if counts["crash"] else ""))
    if a.report:
        with open(a.report, "w") as fh:
            for n in names:
                fh.write(f"{n}\t{results[n][0]}\t{results[n][1]}\n")
    if a.markdown:
        with open(a.markdown, "w") as fh:
            fh.write(summary_markdown(names, results))
    rc = 1 if counts["crash"] else 0
    if a.baseline and not a.update_baseline and os.path.exists(a.baseline):
        want = [l.strip() for l in open(a.baseline) if l.strip() and not l.startswith("#")]
        lost = [n for n in want if n in results and results[n][0] != "pass"]
        for n in lost:
            print(f"REGRESSION: {n} passed before: {results[n][0]} {results[n][1]}")
        if lost:
            rc = 1
        else:
            ran = sum(1 for n in want if n in results)
            print(f"baseline: all {ran} tests that passed before{' (of ' + str(len(want)) + ', this shard)' if ran < len(want) else ''} still pass")
    may_differ = set()
    if a.may_differ:
        with open(a.may_differ) as fh:
            may_differ = set(l.strip() for l in fh if l.strip() and not l.startswith("#"))
    again_with = []
    if a.same_as_burst:
        again_with.append(("burst %d" % a.same_as_burst, ["--set", "shoal.burst=%d" % a.same_as_burst]))
    if a.same_as_threads:
        again_with.append(("%d threads" % a.same_as_threads, ["-t", str(a.same_as_threads)]))
    for what, extra in again_with:
        ran = [n for n in names if results[n][0] in ("pass", "fail")]
        work2 = os.path.join(work, what.replace(" ", ""))
        with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            again = dict((n, st) for n, st, _ in ex.map(lambda n: run_test(n, a.suite, a.shoal, work2, extra), ran))
        differ = []
        for n in ran:
            d = n.replace("/", "__")
            x = eve_records(os.path.join(work, d, "eve.json"))
            y = eve_records(os.path.join(work2, d, "eve.json"))
            if again[n] == "crash" or x != y:
                differ.append(n)
                only1, only2 = sorted(set(x) - set(y)), sorted(set(y) - set(x))
                print(f"DIFFERS with {what}: {n}: {again[n]}; {len(only1)} EVE records only without, "
                      f"{len(only2)} only with")
                for l in only1[:1] + only2[:1]:
                    print("   " + l[:400])
        known = [n for n in differ if n in may_differ]
        print(f"{what}: {len(ran) - len(differ)} of {len(ran)} tests give the same EVE records"
              + (f" ({len(known)} more may differ: {', '.join(known)})" if known else ""))
        alike = sorted(n for n in may_differ if n in again and n not in differ)
        if alike:
            print(f"{what}: listed as may differ, alike this time: {', '.join(alike)}")
        if len(differ) > len(known):
            rc = 1
    if a.baseline and a.update_baseline:
        with open(a.baseline, "w") as fh:
            fh.write("# suricata-verify tests that pass (tests/conformance/suricata_verify.py --update-baseline)\n")
            for n in sorted(n for n, v in results.items() if v[0] == "pass"):
                fh.write(n + "\n")
    if a.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
