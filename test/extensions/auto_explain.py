#!/usr/bin/env python3
"""auto_explain beside pg_dio's scans (test/extensions/contrib.sh).

auto_explain has no pg_regress suite.  With it loaded in the session
(LOAD 'auto_explain', log_min_duration 0, log_analyze on, log_timing off),
a few queries run once with pg_dio's scans off and once forced on: a
sequential scan, an index scan, an index-only scan and a nested-loop join
over both.  Their plans are then read back from the server log, and for each
query:
  - the plan logged off has none of pg_dio's nodes, the plan logged on has
    the ones the query must use (DirectSeqScan, PrefetchIndexScan,
    PrefetchIndexOnlyScan);
  - the two plans, normalized as test/core_regress/normalize.py does (pg_dio's
    nodes take core's names, lines only pg_dio prints are dropped), are
    identical: the same shape and the same actual row counts of every node;
  - the query returned the same rows off and on (and some rows);
and the server log of the run has no ERROR.

usage: auto_explain.py --log SERVER_LOG --out DIR --off PGOPTIONS --on PGOPTIONS
Connects with PGHOST, PGPORT, PGUSER (a superuser).  Exit status 0 when all
checks hold.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "core_regress"))
from normalize import normalize  # noqa: E402

SETUP = """
DROP TABLE IF EXISTS ae_a, ae_b;
CREATE TABLE ae_a (id int PRIMARY KEY, grp int, v text);
INSERT INTO ae_a SELECT i, i % 100, md5(i::text) FROM generate_series(1, 20000) i;
CREATE TABLE ae_b (id int PRIMARY KEY, a_id int, w int);
INSERT INTO ae_b SELECT i, (i * 7) % 20000 + 1, i % 13 FROM generate_series(1, 2000) i;
VACUUM ANALYZE ae_a, ae_b;
"""

# tag, planner settings, query (one line), pg_dio's nodes the plan must show
NOSCAN = "enable_bitmapscan = off, enable_seqscan = off"
QUERIES = [
    ("seq", "", "SELECT grp, count(*), min(v) FROM ae_a WHERE v LIKE '%ab%' GROUP BY grp ORDER BY grp",
     ["DirectSeqScan"]),
    ("index", NOSCAN, "SELECT id, grp, v FROM ae_a WHERE id BETWEEN 500 AND 650 ORDER BY id",
     ["PrefetchIndexScan"]),
    ("indexonly", NOSCAN, "SELECT id FROM ae_a WHERE id < 300 ORDER BY id",
     ["PrefetchIndexOnlyScan"]),
    ("join", "enable_hashjoin = off, enable_mergejoin = off, enable_bitmapscan = off",
     "SELECT b.w, count(*), sum(a.grp), max(a.v) FROM ae_b b JOIN ae_a a ON a.id = b.a_id "
     "WHERE b.w < 5 GROUP BY b.w ORDER BY b.w",
     ["DirectSeqScan", "PrefetchIndexScan"]),
]

ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def psql(sql, pgoptions):
    env = dict(os.environ, PGOPTIONS=pgoptions)
    r = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", "postgres"],
                       input=sql, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        raise SystemExit("auto_explain: psql failed")
    return r.stdout


def run_mode(mode, pgoptions):
    """Run every query with auto_explain loaded; return {tag: result text}."""
    lines = ["LOAD 'auto_explain';",
             "SET auto_explain.log_min_duration = 0;",
             "SET auto_explain.log_analyze = on;",
             "SET auto_explain.log_timing = off;",
             "SET max_parallel_workers_per_gather = 0;"]
    for tag, settings, query, _ in QUERIES:
        lines.append("\\echo @@%s" % tag)
        sets = [x.strip() for x in settings.split(",") if x.strip()]
        lines += ["SET %s;" % x for x in sets]
        lines.append("/* ae:%s:%s */ %s;" % (mode, tag, query))
        lines += ["RESET %s;" % x.split("=")[0].strip() for x in sets]
    out = psql("\n".join(lines) + "\n", pgoptions)
    results = {}
    for part in out.split("@@")[1:]:
        tag, _, rows = part.partition("\n")
        results[tag.strip()] = rows
    return results


def logged_plans(text):
    """{(mode, tag): plan lines} of auto_explain's entries, and the ERROR lines."""
    entries, cur = [], []
    for line in text.splitlines(keepends=True):
        if ENTRY.match(line):
            if cur:
                entries.append(cur)
            cur = [line]
        elif cur:
            cur.append(line)
    if cur:
        entries.append(cur)
    plans, errors = {}, []
    for e in entries:
        if re.search(r"\b(ERROR|PANIC|FATAL):", e[0]) or "terminated by signal" in e[0]:
            errors.append("".join(e))
        if "plan:" not in e[0]:
            continue
        for i, line in enumerate(e):
            m = re.search(r"Query Text: /\* ae:(\w+):(\w+) \*/", line)
            if m:
                plans[(m.group(1), m.group(2))] = [l[1:] if l.startswith("\t") else l for l in e[i + 1:]]
                break
    return plans, errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--off", required=True)
    ap.add_argument("--on", required=True)
    a = ap.parse_args()

    psql(SETUP, a.off)
    start = os.path.getsize(a.log)
    results = {"off": run_mode("off", a.off), "on": run_mode("on", a.on)}
    time.sleep(0.5)
    with open(a.log, errors="replace") as f:
        f.seek(start)
        text = f.read()
    with open(os.path.join(a.out, "server.log"), "w") as f:
        f.write(text)
    plans, errors = logged_plans(text)

    ok = True
    for tag, _, query, nodes in QUERIES:
        problems = []
        off, on = plans.get(("off", tag)), plans.get(("on", tag))
        for mode in ("off", "on"):
            with open(os.path.join(a.out, "%s-%s.txt" % (tag, mode)), "w") as f:
                f.write("".join(plans.get((mode, tag)) or ["(no plan logged)\n"]))
                f.write("-- rows\n" + results[mode].get(tag, "(none)\n"))
        if off is None or on is None:
            problems.append("no plan logged %s" % ("off" if off is None else "on"))
        else:
            if any("Custom Scan" in l for l in off):
                problems.append("the plan logged off has a Custom Scan")
            for n in nodes:
                if not any("Custom Scan (%s)" % n in l for l in on):
                    problems.append("the plan logged on has no %s" % n)
            if not any("actual rows=" in l for l in on):
                problems.append("the plan logged on has no actual rows (log_analyze)")
            noff, non = normalize(off), normalize(on)
            if noff != non:
                problems.append("the plans differ after normalization:\n" + "".join(
                    difflib.unified_diff(noff, non, "off", "on", n=1)))
        roff, ron = results["off"].get(tag), results["on"].get(tag)
        if not roff or not roff.strip():
            problems.append("no rows off")
        if roff != ron:
            problems.append("the rows differ:\n" + "".join(difflib.unified_diff(
                (roff or "").splitlines(True), (ron or "").splitlines(True), "off", "on", n=1)))
        nrows = len((roff or "").splitlines())
        if problems:
            ok = False
            print("auto_explain %s: %s" % (tag, "; ".join(problems)))
        else:
            print("auto_explain %s: %s logged with actual rows, same plan and %d result rows as off"
                  % (tag, " and ".join(nodes), nrows))
    if errors:
        ok = False
        print("auto_explain: the server log has errors:\n" + "".join(errors))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
