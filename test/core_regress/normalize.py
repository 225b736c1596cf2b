#!/usr/bin/env python3
"""Compare two runs of one of PostgreSQL's suites, pg_dio's scans off and on.

EXPLAIN output is normalized first: pg_dio's nodes take core's names
(DirectSeqScan -> Seq Scan, PrefetchIndexScan -> Index Scan,
PrefetchIndexOnlyScan -> Index Only Scan) and lines only pg_dio prints are
dropped, in text, JSON, YAML and XML; query IDs (which hash OIDs each run
makes anew) are masked.  A ProbePrefetch node, which pg_dio
puts between a nested loop and its outer plan, is dropped with its own
lines in text format, its child moved up a level into its place.  Everything else, plan shapes included,
must match.  A test named in the allowed list (with its reason) may differ;
its difference is printed for information and does not fail.

usage: normalize.py --allowed FILE --suite S --io-method M OFF_RESULTS ON_RESULTS
Exit status 0 when only allowed tests differ.

usage: normalize.py --files OFF_FILE ON_FILE
Exit status 0 when the two result files match after normalization; their
difference is printed otherwise.
"""
import argparse
import difflib
import os
import re
import sys

NAMES = {"DirectSeqScan": "Seq Scan",
         "PrefetchIndexScan": "Index Scan",
         "PrefetchIndexOnlyScan": "Index Only Scan"}

# text format: node titles
TITLE = re.compile(r"(Parallel )?Custom Scan \((DirectSeqScan|PrefetchIndexScan|PrefetchIndexOnlyScan)\)")
# text format: lines only pg_dio prints (their worker groups included)
TEXT_ONLY = re.compile(r"^\s*(->\s+)?(Direct I/O: |Buffered: blocks=|Prefetch: avg=|"
                       r"Heap Blocks: requested=)")
# structured formats: the properties only pg_dio prints
PROPS = ["Custom Plan Provider", "Direct Blocks", "Direct Reads", "Direct Read Bytes",
         "Direct Read Waits", "Direct Reads In Progress", "Direct Read Wait Time",
         "Buffered Blocks", "Buffered Resident", "Buffered Not All-Visible",
         "Buffered Isolation", "Buffered Verification", "Buffered I/O Fallback",
         "Buffered OS-Cached", "OS-Cached Chunks", "Prefetch Average", "Prefetch Max",
         "Prefetch Capacity", "Prefetch Restarts", "Heap Blocks Requested",
         "Heap Blocks Read", "Heap Blocks OS-Cached", "Heap Blocks Advised",
         "Heap Blocks Combined", "Heap Blocks Direct", "Heap Blocks Direct Fallback",
         "Index TIDs", "I/O Waits", "I/O Wait Time"]
PROP_ALT = "|".join(re.escape(p) for p in PROPS)
PROP_JSON = re.compile(r'^\s*"(%s)": .*$' % PROP_ALT)
PROP_YAML = re.compile(r"^\s*(- )?\"?(%s)\"?: .*$" % PROP_ALT)
PROP_XML = re.compile(r"^\s*<(%s)>.*</\1>\s*$" % "|".join(
    re.escape(p.replace(" ", "-").replace("/", "-")) for p in PROPS))
# psql's aligned format pads a multi-line cell and marks its line ends "+"
NODE_JSON = re.compile(r'("Node Type": |Node Type: |<Node-Type>)"?Custom Scan"?')


FOOTER = re.compile(r"^\((\d+) rows?\)\s*$")
PROBE = re.compile(r"^(\s*)->  (?:Parallel )?Custom Scan \(ProbePrefetch\)")
CONT = re.compile(r"\s*\+\s*$")


def pg_dio_only(line):
    body = CONT.sub("", line)
    return bool(TEXT_ONLY.match(body) or PROP_JSON.match(body) or PROP_YAML.match(body)
                or PROP_XML.match(body))


def normalize(lines):
    """Core's names for pg_dio's nodes, pg_dio-only lines dropped (and the
    rows they were counted as in psql's "(N rows)" footers)."""
    out = []
    dropped = 0
    cuts = []           # [indent, child begun] of each ProbePrefetch being dropped
    for i, line in enumerate(lines):
        body = CONT.sub("", line).rstrip("\n")
        indent = len(body) - len(body.lstrip(" "))
        while cuts and body.strip() and indent <= cuts[-1][0]:
            cuts.pop()
        if cuts and not cuts[-1][1]:
            if not body.lstrip().startswith("->"):
                # the node's title and its own lines
                if i == 0 or not CONT.search(lines[i - 1]):
                    dropped += 1
                continue
            cuts[-1][1] = True
        probe = PROBE.match(body)
        if probe:
            cuts.append([len(probe.group(1)), False])
            if i == 0 or not CONT.search(lines[i - 1]):
                dropped += 1
            continue
        # its child and what is below it: a level up for each node dropped
        for _ in cuts:
            line = line[6:] if line.startswith(" " * 6) else line
        if pg_dio_only(line):
            # a line of its own is a row of its own: not a cell's continuation
            if i == 0 or not CONT.search(lines[i - 1]):
                dropped += 1
            continue
        f = FOOTER.match(line)
        if f:
            n = int(f.group(1)) - dropped
            line = "(%d row%s)\n" % (n, "" if n == 1 else "s")
            dropped = 0
        m = NODE_JSON.search(line)
        if m:
            provider = None
            for nxt in lines[i + 1:i + 4]:
                p = re.search(r"Custom.Plan.Provider\W+(\w+)", nxt)
                if p:
                    provider = p.group(1)
                    break
            if provider in NAMES:
                name = NAMES[provider]
                line = line[:m.start()] + m.group(1) + (
                    name if m.group(1).startswith("<") else
                    ('"%s"' % name if '"' in m.group(0) else name)) + line[m.end():]
        line = TITLE.sub(lambda t: (t.group(1) or "") + NAMES[t.group(2)], line)
        out.append(line)
    # drop a trailing comma left dangling by a dropped last JSON property
    fixed = []
    for line in out:
        if fixed and re.match(r"^\s*[}\]]", line) and CONT.sub("", fixed[-1]).rstrip().endswith(","):
            fixed[-1] = re.sub(r",(\s*\+?\s*)$", r"\1", fixed[-1].rstrip("\n")) + "\n"
        fixed.append(line)
    return [tidy(l) for l in fixed]


SEPARATOR = re.compile(r"^[-+]+$")
# EXPLAIN (VERBOSE)'s query IDs hash the OIDs of objects each run makes anew
QUERY_ID = re.compile(r'("?Query Identifier"?:\s*)-?\d+')


def tidy(line):
    """psql pads cells to the widest one, which a renamed node changes; query
    IDs differ from run to run."""
    line = QUERY_ID.sub(r"\1N", CONT.sub(" +", line.rstrip()))
    if SEPARATOR.match(line):
        return "---\n"
    if "|" in line:
        line = re.sub(r" *\| *", " | ", line)
    if re.match(r"^\s+\S", line) and re.match(r"^\s+(QUERY PLAN|[\w ]+)\s*$", line):
        line = line.strip()
    return line + "\n"


def read_allowed(path, suite, io_method):
    allowed = {}
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            key, _, reason = line.partition(":")
            parts = key.split()
            name = parts[0]
            conds = dict(p.split("=", 1) for p in parts[1:])
            s, _, test = name.partition("/")
            if s != suite:
                continue
            if "io_method" in conds and conds["io_method"] != io_method:
                continue
            allowed[test] = reason.strip()
    return allowed


def compare_files(off, on):
    texts = [normalize(open(p, errors="replace").readlines()) for p in (off, on)]
    if texts[0] == texts[1]:
        return 0
    sys.stdout.write("".join(difflib.unified_diff(texts[0], texts[1], off, on, n=2)))
    return 1


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--files":
        return compare_files(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser()
    ap.add_argument("--allowed", required=True)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--io-method", required=True)
    ap.add_argument("off")
    ap.add_argument("on")
    a = ap.parse_args()
    allowed = read_allowed(a.allowed, a.suite, a.io_method)
    names = sorted(set(os.listdir(a.off)) | set(os.listdir(a.on)))
    bad, ok_allowed, same = [], [], 0
    for name in names:
        if not name.endswith(".out"):
            continue
        test = name[:-4]
        texts = []
        for d in (a.off, a.on):
            p = os.path.join(d, name)
            texts.append(normalize(open(p, errors="replace").readlines()) if os.path.exists(p)
                         else ["(no output)\n"])
        if texts[0] == texts[1]:
            same += 1
            continue
        diff = "".join(difflib.unified_diff(texts[0], texts[1], "off/" + name, "on/" + name, n=2))
        if test in allowed:
            ok_allowed.append((test, diff))
        else:
            bad.append((test, diff))
    for test, diff in bad:
        print("=== %s: differs (not allowed)" % test)
        print(diff)
    for test, diff in ok_allowed:
        print("=== %s: differs, allowed: %s" % (test, allowed[test]))
    print("%s: %d tests compared, %d identical, %d differ (%d allowed, %d not)"
          % (a.suite, same + len(bad) + len(ok_allowed), same, len(bad) + len(ok_allowed),
             len(ok_allowed), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
