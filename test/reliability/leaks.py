#!/usr/bin/env python3
"""Leak check: one backend runs pg_dio's read paths under every injected fault
many times; its memory and its file descriptors must not grow.

ONE long-lived psql session (so ONE backend) runs, round-robin, each mode

    pg_dio_read              SELECT ... FROM pg_dio_read(t)
    seqscan                  DirectSeqScan, serial (rows digested in scan order)
    parallel                 Parallel DirectSeqScan, 2 workers
    indexscan                PrefetchIndexScan (index order digest)
    probe                    a nested loop whose ProbePrefetch reads the heap
                             chunks ahead of forward probes directly for the
                             inner PrefetchIndexScan (scan_feed.c)

under each fault of pg_dio.inject_fault (none, eio, short_read, ring_setup,
odirect_einval, delay with inject_delay = 1ms, corrupt), alternating two engine
configurations (io_size/queue_depth 256kB/32 and 64kB/8: the engine rebuilds
its registered buffer pool when they change).  The table is evicted from
shared buffers before each scan so that DirectSeqScan reads directly (and the
index scan's read stream does I/O); the probed table from the OS page cache
too, as ProbePrefetch reads only chunks the page cache does not have.

Every result must equal core's (computed first in another session with
pg_dio.enable_direct_scan and pg_dio.enable_index_prefetch off); every
pg_dio_read must report every block, read directly or counted as a fallback
for the fault's reason.  In the warm-up, EXPLAIN ANALYZE checks that each
mode really is the pg_dio plan and that the scans' direct/fallback figures
match the fault.

After the warm-up (every (mode, fault, configuration) combination twice, so
that relcache, catcache, plan and GUC state are built, and the sampling
queries once), these are sampled every --sample-every runs:

  memory      sum(total_bytes) of pg_backend_memory_contexts (what the
              contexts hold from malloc) and sum(total_bytes - free_bytes)
              (what is in use: a leak into free space of an existing block
              shows here first)
  fds         /proc/<pid>/fd, not counting relation files core's md.c has open
              (read-write, not O_DIRECT): the virtual file descriptor cache
              keeps those open while the relation's relcache entry lives and
              closes them when a relcache invalidation (autovacuum, ANALYZE,
              DDL in the database) closes its smgr -- they come and go (5 to 8
              here) without a leak.  pg_dio's own fds (O_DIRECT segment files,
              the io_uring ring, the cache tools' read-only opens) and every
              socket, pipe, eventfd are counted.
  mappings    lines of /proc/<pid>/maps: the engine's buffers are anonymous
              mmaps, invisible to memory contexts

Fail if, from the first sample to the last, either memory figure grows by
more than --tolerance bytes (default 64 kB), or the fd count or the mapping
count grows at all.

Why 64 kB: after the warm-up nothing should be allocated for good.  What can
still move is a relcache entry rebuilt after an invalidation (its index info,
a few kB) and allocator slack: AllocSet blocks are allocated in doubling
sizes (8 kB ... 1 MB), so the total moves in steps.  Measured over 1000 runs:
total flat to the byte, in use within 10 kB.  64 kB over ~900 measured runs
catches any leak of more than ~75 bytes per run.

--self-test: the same loop (shorter: pass --runs 300) with an artificial leak
that must be caught; it exits 0 only if both checks fire: a memory-only leak
(a custom GUC placeholder with a 300-byte value, SET selftest.leak_N, per
run: ~0.6 kB) must fail the memory
check, and an fd leak (three dblink connections left open after the warm-up:
three sockets) must fail the fd check.

Needs a running cluster with pg_dio preloaded (PGHOST/PGPORT/PGUSER as
superuser, psql on PATH) and must run on the server's machine as root or as
the server's user (to read /proc/<pid>/).
Usage: leaks.py [--runs N] [--db NAME] [--sample-every N] [--self-test] [--verbose]
"""
import argparse
import json
import os
import sys
import time

sys.dont_write_bytecode = True     # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgsession import fresh_database, Session, psql_once, is_error, fd_counts, fd_table, is_core_relfile, server_log_path, log_size, log_crashes  # noqa: E402

MODES = ("pg_dio_read", "seqscan", "parallel", "indexscan", "probe")
FAULTS = ("none", "eio", "short_read", "ring_setup", "odirect_einval", "delay", "corrupt")
CONFIGS = (("256kB", 32), ("64kB", 8))
CYCLE = len(MODES) * len(FAULTS) * len(CONFIGS)
TABLE = "leak_t"
PROBED = "leak_p"
ROWS = 20000
LO, HI = 1000, 6000

# fallback reason pg_dio_read must report for every block under each fault
READ_REASON = {"eio": "io_error", "ring_setup": "no_uring", "odirect_einval": "no_odirect",
               "corrupt": "verify"}
# EXPLAIN (FORMAT JSON) property of a DirectSeqScan that must count every block
SCAN_PROPERTY = {"none": "Direct Blocks", "short_read": "Direct Blocks", "delay": "Direct Blocks",
                 "eio": "Buffered I/O Fallback", "ring_setup": "Buffered I/O Fallback",
                 "odirect_einval": "Buffered I/O Fallback", "corrupt": "Buffered Verification"}

SERIAL = ("SET max_parallel_workers_per_gather = 0; SET enable_seqscan = on; "
          "SET enable_bitmapscan = on; SET enable_indexscan = on; SET pg_dio.os_cache_check = off;")
PARALLEL = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
            "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; "
            "SET enable_seqscan = on; SET pg_dio.os_cache_check = off;")
INDEX = ("SET max_parallel_workers_per_gather = 0; SET enable_seqscan = off; "
         "SET enable_bitmapscan = off; SET enable_indexscan = on; SET pg_dio.os_cache_check = off;")
# the feed reads only chunks it finds out of the OS page cache: the check on
PROBE = ("SET max_parallel_workers_per_gather = 0; SET enable_seqscan = on; "
         "SET enable_bitmapscan = off; SET enable_indexscan = on; SET enable_hashjoin = off; "
         "SET enable_mergejoin = off; SET enable_memoize = off; SET pg_dio.os_cache_check = on;")

QUERIES = {
    "seqscan": (SERIAL, f"SELECT count(*), sum(hashtext(pad)::bigint), "
                        f"md5(string_agg(ctid::text || id, ',')) FROM {TABLE}"),
    "parallel": (PARALLEL, f"SELECT count(*), sum(hashtext(pad)::bigint), sum(id) FROM {TABLE}"),
    "indexscan": (INDEX, f"SELECT count(*), sum(hashtext(pad)::bigint), "
                         f"md5(string_agg(id::text, ',')) FROM {TABLE} "
                         f"WHERE id BETWEEN {LO} AND {HI}"),
    "probe": (PROBE, f"SELECT count(*), sum(hashtext(p.pad)::bigint), md5(string_agg(p.id::text, ',')) "
                     f"FROM (SELECT id FROM {TABLE} WHERE id % 3 = 0 ORDER BY id) o "
                     f"JOIN {PROBED} p ON p.id = o.id"),
}
PLAN_NODE = {"seqscan": "DirectSeqScan", "parallel": "DirectSeqScan",
             "indexscan": "PrefetchIndexScan", "probe": "ProbePrefetch"}
# the faults under which the feed's images are used, not read buffered
PROBE_IMAGES_USED = ("none", "short_read", "delay")


def setup(db):
    fresh_database(db)
    # heap order shuffled against id: the index scan jumps between blocks
    psql_once(db, f"""
CREATE EXTENSION pg_dio;
CREATE TABLE {TABLE} (id int, grp int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO {TABLE} SELECT g, g % 97, md5(g::text) || repeat('x', g % 200)
  FROM generate_series(1, {ROWS}) g ORDER BY hashint4(g);
CREATE INDEX {TABLE}_id ON {TABLE} (id);
VACUUM (FREEZE, ANALYZE) {TABLE};
CREATE TABLE {PROBED} (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO {PROBED} SELECT g, md5(g::text) || repeat('y', 300) FROM generate_series(1, {ROWS}) g;
CREATE UNIQUE INDEX {PROBED}_id ON {PROBED} (id);
VACUUM (FREEZE, ANALYZE) {PROBED};""")
    # vacuum and analyze the catalogs now, so that autovacuum does not: every
    # relcache invalidation it causes closes and later reopens catalog files
    psql_once(db, "VACUUM (ANALYZE);")
    nblocks = int(psql_once(db, f"SELECT pg_relation_size('{TABLE}') / 8192;")[0])
    checksums = psql_once(db, "SHOW data_checksums;")[0] == "on"
    # core's answers: pg_dio's plans off
    ref = {}
    off = ("SET pg_dio.enable_direct_scan = off; SET pg_dio.enable_index_prefetch = off; "
           "SET pg_dio.enable_probe_prefetch = off;")
    for mode, (settings, q) in QUERIES.items():
        ref[mode] = psql_once(db, f"{off} {settings} {q};")
    return nblocks, checksums, ref


class Failure(Exception):
    pass


SELF_CONNINFO = ("'host=' || split_part(current_setting('unix_socket_directories'), ',', 1) "
                 "|| ' port=' || current_setting('port') || ' dbname=' || current_database() "
                 "|| ' user=' || current_user")


def run_sql(mode, fault, config, leak, i, args):
    io_size, depth = config
    sql = [f"SET pg_dio.inject_fault = '{fault}';",
           f"SET pg_dio.io_size = '{io_size}'; SET pg_dio.queue_depth = {depth};"]
    if leak == "memory":
        # a custom GUC placeholder that is never removed: ~0.6 kB per run
        sql.append(f"SET selftest.leak_{i} = '{'x' * 300}';")
    elif leak == "fd" and i > args.warmup and (i - args.warmup) % args.sample_every == 1 \
            and i < args.warmup + 3 * args.sample_every:
        # a dblink connection left open: one socket, at most three times
        sql.append(f"SELECT dblink_connect('selftest_leak_{i}', {SELF_CONNINFO}) \\g /dev/null")
    if mode == "pg_dio_read":
        sql.append(f"SELECT blocks, direct_blocks, fallback_blocks, fallback_reasons, "
                   f"checksum_failures FROM pg_dio_read('{TABLE}');")
    else:
        settings, q = QUERIES[mode]
        sql.append(f"SELECT pg_dio_evict('{TABLE}', false) \\g /dev/null")
        if mode == "probe":
            sql.append(f"SELECT pg_dio_evict('{PROBED}') \\g /dev/null")
        sql.append(f"{settings} {q};")
    return "\n".join(sql)


def check_read(out, fault, nblocks, checksums):
    blocks, direct, fallback, reasons, csf = out[0].split("|")
    blocks, direct, fallback, csf = int(blocks), int(direct), int(fallback), int(csf)
    reasons = json.loads(reasons)
    if fault == "corrupt" and not checksums:
        want_reason = None          # without checksums the damage may go unnoticed
    else:
        want_reason = READ_REASON.get(fault)
    ok = blocks == nblocks and direct + fallback == blocks
    if want_reason is None and fault != "corrupt":
        ok = ok and direct == blocks and fallback == 0 and reasons == {}
    elif want_reason is not None:
        ok = ok and direct == 0 and reasons == {want_reason: blocks}
        if fault == "corrupt":
            ok = ok and csf == blocks
    if not ok:
        raise Failure(f"pg_dio_read under {fault}: {out[0]} ({nblocks} blocks)")


def plan_nodes(plan):
    yield plan
    for p in plan.get("Plans", []):
        yield from plan_nodes(p)


def check_plan(sess, mode, fault, config, nblocks, checksums):
    """EXPLAIN ANALYZE: the pg_dio node is there and its figures match the fault."""
    settings, q = QUERIES[mode]
    io_size, depth = config
    out = sess.query(f"SET pg_dio.inject_fault = '{fault}'; SET pg_dio.io_size = '{io_size}'; "
                     f"SET pg_dio.queue_depth = {depth}; {settings}\n"
                     f"SELECT pg_dio_evict('{TABLE}', false) \\g /dev/null\n"
                     f"SELECT pg_dio_evict('{PROBED}') \\g /dev/null\n"
                     f"EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) {q};")
    plan = json.loads("\n".join(out))[0]["Plan"]
    nodes = [n for n in plan_nodes(plan) if n.get("Custom Plan Provider") == PLAN_NODE[mode]]
    if len(nodes) != 1:
        raise Failure(f"{mode}: no {PLAN_NODE[mode]} in the plan:\n{json.dumps(plan, indent=1)}")
    node = nodes[0]
    if mode == "parallel":
        gathers = [n for n in plan_nodes(plan) if n["Node Type"] == "Gather"]
        if not gathers or gathers[0].get("Workers Launched") != 2 or \
                not node.get("Parallel Aware"):
            raise Failure(f"parallel: not a Parallel DirectSeqScan with 2 workers launched:\n"
                          f"{json.dumps(plan, indent=1)}")
    if mode == "probe":
        # the feed needs cachestat(2): Linux 6.5 and later
        if node.get("Direct Chunks") is None:
            if tuple(int(x) for x in os.uname().release.split(".")[:2]) >= (6, 5):
                raise Failure(f"probe: no direct reads planned:\n{json.dumps(plan, indent=1)}")
            return
        used, unusable = node["Direct Blocks Used"], node["Direct Blocks Unusable"]
        if int(io_size.rstrip("kB")) < 128:
            # a 128 kB chunk is one read, larger than pg_dio.io_size: advised instead
            ok = node["Direct Chunks"] == 0
        elif fault == "corrupt" and not checksums:
            ok = node["Direct Chunks"] > 0
        elif fault in PROBE_IMAGES_USED:
            ok = node["Direct Chunks"] > 0 and used > 0 and unusable == 0
        elif fault == "ring_setup":
            # no ring: the page-cache probe cannot tell, so nothing is read directly
            ok = used == 0
        else:
            ok = node["Direct Chunks"] > 0 and used == 0 and unusable > 0
        if not ok:
            raise Failure(f"probe under {fault}: chunks {node['Direct Chunks']}, used {used}, "
                          f"unusable {unusable}:\n{json.dumps(node, indent=1)}")
    if mode == "indexscan" and not node.get("Heap Blocks Read", 0) > 0:
        raise Failure(f"indexscan: the read stream read nothing after the eviction:\n"
                      f"{json.dumps(node, indent=1)}")
    if mode in ("seqscan", "parallel"):
        prop = SCAN_PROPERTY[fault]
        if fault == "corrupt" and not checksums:
            return
        got = node.get(prop)
        if mode == "parallel" and prop != "Direct Blocks":
            # a process that starts late may find the first blocks of the
            # 8 MB chunk already read (through the buffer manager, after the
            # fault) by another one, and then reads the rest of the chunk as
            # resident: the blocks are all there, some under 'resident'
            ok = (node.get("Direct Blocks") == 0 and got > 0 and
                  got + node.get("Buffered Resident") == nblocks)
        else:
            ok = got == nblocks
        if not ok:
            raise Failure(f"{mode} under {fault}: {prop} = {node.get(prop)}, want {nblocks}:\n"
                          f"{json.dumps(node, indent=1)}")


def memory(sess):
    """(total bytes the backend's memory contexts hold, bytes in use in them)"""
    out = sess.query("SELECT sum(total_bytes), sum(total_bytes - free_bytes) "
                     "FROM pg_backend_memory_contexts;")
    total, used = out[0].split("|")
    return int(total), int(used)


def contexts(sess):
    out = sess.query("SELECT name, sum(total_bytes) FROM pg_backend_memory_contexts "
                     "GROUP BY name;")
    return {l.rsplit("|", 1)[0]: int(l.rsplit("|", 1)[1]) for l in out}


def mappings(pid):
    with open(f"/proc/{pid}/maps") as f:
        return sum(1 for _ in f)


def sample(sess, run):
    core_fds, fds = fd_counts(sess.pid)
    total, used = memory(sess)
    return dict(run=run, memory=total, used=used, fds=fds, core_fds=core_fds,
                mappings=mappings(sess.pid))


def backend_stats(sess):
    out = sess.query("SELECT row_to_json(s) FROM pg_dio_backend_stats(pg_backend_pid()) s;")
    return json.loads(out[0])


def loop(db, args, nblocks, checksums, ref, leak=None):
    """Run the loop in one backend; return a dict of samples and findings."""
    sess = Session(db)
    pid = sess.pid
    sess.query(f"SET pg_dio.direct_scan_threshold = 0; SET pg_dio.os_cache_check = off; "
               f"SET pg_dio.inject_delay = '{args.delay_ms}ms';")
    stats0 = backend_stats(sess)
    # the sampling queries' own first-time allocations (catalog caches) go
    # into the warm-up too
    sample(sess, 0)
    contexts(sess)
    samples = []
    ctx_first = None
    fds_first = {}
    runs_per = {}
    started = time.monotonic()
    try:
        for i in range(args.runs):
            mode = MODES[i % len(MODES)]
            fault = FAULTS[(i // len(MODES)) % len(FAULTS)]
            config = CONFIGS[(i // (len(MODES) * len(FAULTS))) % len(CONFIGS)]
            if i < CYCLE and mode != "pg_dio_read" and not leak:
                check_plan(sess, mode, fault, config, nblocks, checksums)
            sess.send(run_sql(mode, fault, config, leak, i, args))
            out = sess.result(timeout=60)
            errors = [l for l in out if is_error(l)]
            if errors:
                raise Failure(f"run {i} ({mode}, {fault}, {config}): {errors[0]}")
            if mode == "pg_dio_read":
                check_read(out, fault, nblocks, checksums)
            elif out != ref[mode]:
                raise Failure(f"run {i} ({mode}, {fault}, {config}): result {out} "
                              f"differs from core's {ref[mode]}")
            runs_per[(mode, fault)] = runs_per.get((mode, fault), 0) + 1
            done = i + 1
            if done >= args.warmup and (done - args.warmup) % args.sample_every == 0:
                samples.append(sample(sess, done))
                if ctx_first is None:
                    ctx_first = contexts(sess)
                    fds_first = fd_table(pid)
        elapsed = time.monotonic() - started
        if len(samples) < 2 or samples[-1]["run"] != args.runs:
            samples.append(sample(sess, args.runs))
        ctx_last = contexts(sess)
        fds_last = fd_table(pid)
        stats1 = backend_stats(sess)
        inflight = int(sess.query("SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio';")[0])
    finally:
        sess.close()
    return dict(pid=pid, samples=samples, elapsed=elapsed, ctx_first=ctx_first,
                ctx_last=ctx_last, fds_first=fds_first, fds_last=fds_last, stats0=stats0, stats1=stats1, inflight=inflight,
                runs_per=runs_per)


def judge(res, args):
    """List of (kind, message) findings: memory, fd, mappings (empty = no leak)."""
    s = res["samples"]
    first, last = s[0], s[-1]
    findings = []
    grown = last["memory"] - first["memory"]
    used = last["used"] - first["used"]
    if grown > args.tolerance or used > args.tolerance:
        grew = sorted(((res["ctx_last"].get(k, 0) - res["ctx_first"].get(k, 0), k)
                       for k in set(res["ctx_last"]) | set(res["ctx_first"])), reverse=True)
        top = ", ".join(f"{k} +{d}" for d, k in grew[:5] if d > 0)
        findings.append(("memory", f"memory grew by {grown} bytes, bytes in use by {used} "
                                   f"(tolerance {args.tolerance}) "
                                   f"from run {first['run']} to run {last['run']}; "
                                   f"contexts that grew: {top}"))
    if last["fds"] > first["fds"]:
        new = sorted(f"{fd} -> {t} (flags {fl:o})" for fd, (t, fl) in res["fds_last"].items()
                     if res["fds_first"].get(fd) != (t, fl) and not is_core_relfile(t, fl))
        findings.append(("fd", f"fd count grew from {first['fds']} to {last['fds']} "
                               f"(not counting core's cached relation files); new: "
                               f"{', '.join(new[:5])}"))
    if last["mappings"] > first["mappings"]:
        findings.append(("mappings", f"memory mappings grew from {first['mappings']} to "
                                     f"{last['mappings']}"))
    return findings


def summary(res, label, verbose):
    s = res["samples"]
    if verbose:
        for x in s:
            print(f"  {x}")
        for which, fds in (("first", res["fds_first"]), ("last", res["fds_last"])):
            print(f"  core's cached relation files, {which} sample: " + ", ".join(
                sorted(os.path.basename(t) for t, fl in fds.values() if is_core_relfile(t, fl))))
        for k in sorted(set(res["ctx_last"]) | set(res["ctx_first"])):
            d = res["ctx_last"].get(k, 0) - res["ctx_first"].get(k, 0)
            if d:
                print(f"  context {k}: {d:+d}")
    first, last = s[0], s[-1]
    print(f"{label}: backend {res['pid']}, {last['run']} runs in {res['elapsed']:.1f} s; "
          f"memory first/last {first['memory']}/{last['memory']} bytes (runs "
          f"{first['run']}/{last['run']}, min {min(x['memory'] for x in s)}, max "
          f"{max(x['memory'] for x in s)}; in use first/last {first['used']}/{last['used']}); fds first/last {first['fds']}/{last['fds']} "
          f"(+ core's cached relation files {first['core_fds']}/{last['core_fds']}); "
          f"memory mappings first/last {first['mappings']}/{last['mappings']}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000, help="runs in the one backend (default 1000)")
    ap.add_argument("--warmup", type=int, default=2 * CYCLE,
                    help=f"runs before the first sample (default {2 * CYCLE}: every combination twice)")
    ap.add_argument("--sample-every", type=int, default=50)
    ap.add_argument("--tolerance", type=int, default=64 * 1024,
                    help="bytes memory may grow from the first to the last sample")
    ap.add_argument("--delay-ms", type=int, default=1, help="pg_dio.inject_delay under 'delay'")
    ap.add_argument("--db", default="pg_dio_leaks")
    ap.add_argument("--verbose", action="store_true", help="print every sample")
    ap.add_argument("--self-test", action="store_true",
                    help="plant a memory leak and an fd leak; exit 0 only if both are caught")
    args = ap.parse_args()
    if args.runs < args.warmup + 2 * args.sample_every:
        ap.error(f"--runs must be at least --warmup + 2 * --sample-every "
                 f"({args.warmup + 2 * args.sample_every})")

    log = server_log_path()
    log_start = log_size(log)
    nblocks, checksums, ref = setup(args.db)
    print(f"leaks: {TABLE} {nblocks} blocks, data checksums {'on' if checksums else 'off'}, "
          f"{args.runs} runs per backend, warm-up {args.warmup}, sample every "
          f"{args.sample_every}, memory tolerance {args.tolerance} bytes", flush=True)

    failed = False
    try:
        if args.self_test:
            psql_once(args.db, "CREATE EXTENSION IF NOT EXISTS dblink;")
            for leak, check in (("memory", "memory"), ("fd", "fd")):
                res = loop(args.db, args, nblocks, checksums, ref, leak=leak)
                summary(res, f"self-test, planted {leak} leak", args.verbose)
                found = judge(res, args)
                for kind, msg in found:
                    print(f"  caught: {msg}")
                if not any(kind == check for kind, _ in found):
                    print(f"self-test FAILED: the planted {leak} leak was not caught", file=sys.stderr)
                    failed = True
        else:
            res = loop(args.db, args, nblocks, checksums, ref)
            summary(res, "leaks", args.verbose)
            a, b = res["stats0"], res["stats1"]
            delta = {k: b[k] - a[k] for k in a if isinstance(a[k], (int, float)) and k != "pid"}
            print(f"  engine: {delta['reads_submitted']} reads, {delta['blocks_direct']} blocks "
                  f"direct, fallbacks io_error {delta['fallback_io_error']}, no_uring "
                  f"{delta['fallback_no_uring']}, no_odirect {delta['fallback_no_odirect']}, "
                  f"verify {delta['fallback_verify']}; short reads {delta['short_reads']}; "
                  f"{res['inflight']} left in flight", flush=True)
            for kind, msg in judge(res, args):
                print(f"leaks FAILED: {msg}", file=sys.stderr)
                failed = True
            # every fallback was counted: the pg_dio_read runs alone account for
            # this much (the scans' own fallbacks come on top)
            nread = {f: res["runs_per"].get(("pg_dio_read", f), 0) for f in FAULTS}
            want = {"fallback_io_error": nread["eio"], "fallback_no_uring": nread["ring_setup"],
                    "fallback_no_odirect": nread["odirect_einval"]}
            if checksums:
                want["fallback_verify"] = nread["corrupt"]
            for k, n in want.items():
                if delta[k] < n * nblocks:
                    print(f"leaks FAILED: {k} moved by {delta[k]}, want at least {n * nblocks}",
                          file=sys.stderr)
                    failed = True
            if b["reads_submitted"] != b["reads_completed"] or b["reads_in_flight"] or res["inflight"]:
                print(f"leaks FAILED: reads left in flight: {b}", file=sys.stderr)
                failed = True
    except Failure as e:
        print(f"leaks{' self-test' if args.self_test else ''} FAILED: {e}", file=sys.stderr)
        failed = True

    crashes = log_crashes(log, log_start)
    if crashes:
        print(f"leaks{' self-test' if args.self_test else ''} FAILED: the server log shows a crash:\n" + "\n".join(crashes[:5]),
              file=sys.stderr)
        failed = True
    if not failed:
        print("self-test ok: both planted leaks were caught" if args.self_test else "leaks ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
