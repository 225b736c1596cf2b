#!/usr/bin/env python3
"""pg_dio read engine vs. the device's limit, side by side.

For each (read size, queue depth) configuration, alternate in one run:
  A: fio, O_DIRECT sequential reads through io_uring of the very segment files
     of pgbench_accounts, at that read size and depth;
  B: pg_dio_read('pgbench_accounts') with pg_dio.io_size / pg_dio.queue_depth
     set to the same values;
and report medians with min-max and the per-round ratio B/A.  Also the CPU
time the backend used per GB read (from /proc/self/stat inside the backend).

Needs: a running cluster (PGHOST/PGPORT/PGUSER in the environment), pg_dio
installed, PG_DIO_DATA pointing at its data directory, fio on PATH.
"""
import argparse
import atexit
import json
import mmap
import os
import platform
import re
import statistics
import subprocess
import sys
import time

MODES = {
    # scale: pgbench scale of the table; rounds: A/B pairs per configuration
    "quick": {"scale": 320, "rounds": 3,
              "configs": [(256, 32), (1024, 16), (128, 32)]},
    "full": {"scale": 640, "rounds": 5,
             "configs": [(256, 32), (1024, 16), (128, 32), (64, 64), (512, 8)]},
}
CLK_TCK = os.sysconf("SC_CLK_TCK")


# PG_DIO_BENCH_SCALE: the pgbench scale of pgbench_accounts instead of the
# mode's (320 quick, 640 full); the index-scan tables get as many rows in
# proportion (10.5M at 320).  A small scale makes a smoke run of the
# machinery, whose numbers mean nothing.
def bench_scale(mode):
    return int(os.environ.get("PG_DIO_BENCH_SCALE") or MODES[mode]["scale"])


# PG_DIO_BENCH_PRIMARY (test/bench/run.sh with PG_DIO_BENCH_STANDBY=1): the
# experiments run on a hot standby (PG_DIO_BENCH_CLUSTER) of this primary,
# which built the tables and stays running and idle
PRIMARY = os.environ.get("PG_DIO_BENCH_PRIMARY", "")
# the suffix of a report's file names: seqscan-standby.md, ...
REPORT_SUFFIX = "-standby" if PRIMARY else ""


def replay_lsn():
    """The standby's replay position."""
    return psql("SELECT pg_last_wal_replay_lsn()")


def standby_text(cluster, lsn0, lsn1):
    """The reports' sentence on where they ran (nothing on a primary)."""
    if not PRIMARY:
        return ""
    moved = int(float(psql(f"SELECT pg_wal_lsn_diff('{lsn1}', '{lsn0}')")))
    return (f"Run on a hot standby: the cluster {cluster}, a streaming replica "
            f"(pg_basebackup -R) of the primary {PRIMARY}, which built the tables and stayed "
            f"running and idle (the standby replayed {moved} bytes of WAL from it during the "
            f"experiment, {lsn0} to {lsn1}). Every query, restart, eviction, residency check "
            "and fio run was on the standby and its own copy of the data. ")


def reset_all_sql():
    """ALTER SYSTEM RESET ALL, and on a standby the replication settings
    pg_basebackup -R wrote to postgresql.auto.conf set again (without them
    the standby would stop streaming)."""
    sql = "ALTER SYSTEM RESET ALL;\n"
    if PRIMARY:
        keep = psql("SELECT string_agg(format('ALTER SYSTEM SET %I = %L;', name, setting), "
                    "E'\\n') FROM pg_settings WHERE name IN ('primary_conninfo', "
                    "'primary_slot_name') AND setting <> ''")
        if "primary_conninfo" not in keep:
            sys.exit("the standby has no primary_conninfo")
        sql += keep + "\n"
    return sql


def psql(sql, db="postgres"):
    out = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def table_tagged(table, tag):
    """Whether the table exists with the comment 'tag': the data set an
    experiment built on an earlier run, kept."""
    return psql(f"SELECT obj_description(oid, 'pg_class') FROM pg_class "
                f"WHERE relname = '{table}'") == tag


def psql_script(script, db="postgres"):
    out = subprocess.run(["psql", "-X", "-At", "-q", "-v", "ON_ERROR_STOP=1", "-d", db],
                         input=script, check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()


def ensure_table(scale):
    have = psql("SELECT count(*) FROM pg_class WHERE relname = 'pgbench_branches'")
    if have == "1" and psql("SELECT count(*) FROM pgbench_branches") == str(scale):
        return
    if PRIMARY:
        sys.exit(f"no pgbench_accounts at scale {scale} on the standby: "
                 "test/bench/prepare.py builds it on the primary first")
    print(f"building pgbench_accounts at scale {scale} ...", flush=True)
    subprocess.run(["pgbench", "-i", "-q", "-s", str(scale)], check=True,
                   capture_output=True)
    psql("VACUUM (ANALYZE) pgbench_accounts")
    psql("CHECKPOINT")


def segment_files(data):
    rel = psql("SELECT pg_relation_filepath('pgbench_accounts')")
    nblocks = int(psql("SELECT pg_relation_size('pgbench_accounts') / 8192"))
    files = []
    seg = 0
    while True:
        path = os.path.join(data, rel + (f".{seg}" if seg else ""))
        if not os.path.exists(path):
            break
        files.append(path)
        seg += 1
    return files, nblocks


def relation_segments(data, filepath):
    """The segment files of the relation at pg_relation_filepath filepath
    under the data directory data."""
    files = []
    while True:
        path = os.path.join(data, filepath + (f".{len(files)}" if files else ""))
        if not os.path.exists(path):
            return files
        files.append(path)


# fio's I/O buffers: "shmhuge" (huge pages, which run.sh reserves when it runs
# as root) or fio's default malloc'd 4 kB pages
FIO_MEM = os.environ.get("PG_DIO_FIO_MEM", "")


def fio_mem_args():
    return [f"--mem={FIO_MEM}"] if FIO_MEM else []


def reader_cpu():
    """The CPU that latency-bound readers (a backend, fio) are pinned to, or
    None: PG_DIO_BENCH_CPU, or with 'auto' (the default) the CPU that takes
    most of the block device's queue interrupts (virtio-blk, NVMe).  This
    VM's disk has one queue, its interrupts on one CPU: a reader there is
    woken where its I/O completes, one on the other CPU through a cross-CPU
    wakeup, and at depth 16 that moves fio and the scans alike by ~40%.
    Multi-queue devices complete on the submitting CPU, as the pinned reader
    here does."""
    v = os.environ.get("PG_DIO_BENCH_CPU", "auto")
    if v == "none":
        return None
    if v != "auto":
        return int(v)
    per_cpu = interrupts_per_cpu(r"virtio\d+-req|nvme\d+q[1-9]")
    if per_cpu is None or max(per_cpu) == 0:
        return None
    return per_cpu.index(max(per_cpu))


def interrupts_per_cpu(pattern):
    """Per CPU, the interrupts so far of the /proc/interrupts lines matching
    the regular expression; None if it cannot be read or none matches."""
    try:
        with open("/proc/interrupts") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    ncpu = len(lines[0].split())
    per_cpu, found = [0] * ncpu, False
    for line in lines[1:]:
        if re.search(pattern, line):
            found = True
            for i, x in enumerate(line.split()[1:1 + ncpu]):
                per_cpu[i] += int(x) if x.isdigit() else 0
    return per_cpu if found else None


_pinned = None                  # the CPU new backends are pinned to now


def _apply_pin():
    with open(os.path.join(os.environ["PG_DIO_DATA"], "postmaster.pid")) as f:
        pid = int(f.readline())
    os.sched_setaffinity(pid, {_pinned} if _pinned is not None else set(range(os.cpu_count())))


def pin_server(cpu):
    """Backends of the bench cluster forked from now on run on 'cpu' only
    (None: on every CPU): the postmaster's affinity, which they inherit; the
    processes it already has (I/O workers, checkpointer, ...) keep theirs.
    Also after each restart (server_started)."""
    global _pinned
    _pinned = cpu
    _apply_pin()


def server_started():
    """The bench cluster was (re)started: its postmaster gets the pinning in force."""
    _apply_pin()


def placement_text(cpu):
    return (f"cold runs and fio pinned to CPU {cpu}, which takes the disk's interrupts "
            "(new backends through the postmaster; PG_DIO_BENCH_CPU)"
            if cpu is not None else "readers not pinned to a CPU")


def fio_mem_text():
    return ("fio's buffers on huge pages" if FIO_MEM == "shmhuge"
            else "fio's buffers on 4 kB pages (no huge pages reserved: not root), below the device's limit")


def memory_text():
    """What the report says about huge pages (fio's and the server's)."""
    return (f"{fio_mem_text()}; the server's shared memory: huge_pages_status = "
            f"{psql('SHOW huge_pages_status')}.")


def run_fio(files, bs_kb, depth, cpu=None):
    cmd = ["fio", "--name=seq", "--rw=read", f"--bs={bs_kb}k", f"--iodepth={depth}",
           "--ioengine=io_uring", "--direct=1", "--fixedbufs=1",
           "--filename=" + ":".join(f.replace(":", "\\:") for f in files),
           "--file_service_type=sequential", "--output-format=json"] + fio_mem_args()
    if cpu is not None:
        cmd.append(f"--cpus_allowed={cpu}")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    job = json.loads(out.stdout)["jobs"][0]
    rd = job["read"]
    secs = rd["runtime"] / 1000.0
    return {"mib_s": rd["bw_bytes"] / 2**20, "bytes": rd["io_bytes"], "seconds": secs,
            "cpu_s": (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * secs}


def run_fio_random(files, depth, seconds=5, cpu=None):
    """Random 8 kB O_DIRECT reads over the segment files: the device's IOPS
    (fio on CPU 'cpu' only, if given)."""
    cmd = ["fio", "--name=rand", "--rw=randread", "--bs=8k", f"--iodepth={depth}",
           "--ioengine=io_uring", "--direct=1", "--time_based", f"--runtime={seconds}",
           "--filename=" + ":".join(f.replace(":", "\\:") for f in files),
           "--output-format=json"] + fio_mem_args()
    if cpu is not None:
        cmd.append(f"--cpus_allowed={cpu}")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["jobs"][0]["read"]["iops"]


def _reporting_interrupts():
    """Interrupts so far of the virtio-balloon free page reporting queue, or
    None without one."""
    per_cpu = interrupts_per_cpu(r"reporting_vq")
    return None if per_cpu is None else sum(per_cpu)


# PG_DIO_BENCH_MEMORY: the memory a cold run's OS page cache fills.
#   recycled (the default): memory the host already backs, as on a server
#     whose page cache makes room by evicting its own pages.  For the run,
#     free page reporting is off (page_reporting_order above the largest
#     order the kernel frees, restored at exit) and the guest's free memory
#     is written once, so what drop_caches frees stays backed.
#   returned: memory handed back to the host.  Freed pages are reported to
#     the host, which drops them; the next page the page cache takes there is
#     faulted in by the host again, in the reader's system time (here
#     `dd bs=1M` of lineitem's 903 MB, buffered: 1.7 s with 1.7 s system
#     time, against 0.31 s with 0.06 s recycled).  settle() waits until
#     the reports are done.
# Without free page reporting (no virtio-balloon, or not root) the two are
# the same: the kernel's own.
MEMORY = os.environ.get("PG_DIO_BENCH_MEMORY", "recycled")
REPORTING_ORDER = "/sys/module/page_reporting/parameters/page_reporting_order"
# SETTLE_QUIET_S after the last report; a report comes at most 2 s (the
# kernel's PAGE_REPORTING_DELAY) after pages were freed, and every 2 s while
# there are free pages left to report
SETTLE_QUIET_S = 2.5
SETTLE_MAX_S = 60.0
settle_waits = []
_memory = None                  # what memory_state() found and did


def _restore_reporting(order):
    with open(REPORTING_ORDER, "w") as f:
        f.write(order + "\n")


def _write_free_memory():
    """Write every page of the guest's free memory but 1 GiB once, then free
    it: with reporting off, the host backs all of it from now on."""
    with open("/proc/meminfo") as f:
        free_kb = int(next(x for x in f if x.startswith("MemFree:")).split()[1])
    size = max(0, free_kb * 1024 - (1 << 30)) & ~((64 << 20) - 1)
    if size == 0:
        return 0
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    block = b"\1" * (64 << 20)
    for _ in range(size // len(block)):
        m.write(block)
    m.close()
    return size


def memory_state():
    """Set the memory state PG_DIO_BENCH_MEMORY asks for, once; what it is."""
    global _memory
    if _memory is not None:
        return _memory
    if MEMORY not in ("recycled", "returned"):
        sys.exit(f"PG_DIO_BENCH_MEMORY: {MEMORY!r} is neither recycled nor returned")
    if _reporting_interrupts() is None or not os.path.exists(REPORTING_ORDER):
        _memory = {"state": "kernel", "reporting": False}
        return _memory
    with open(REPORTING_ORDER) as f:
        order = f.read().strip()
    _memory = {"state": "returned", "reporting": True, "order": order}
    if MEMORY == "recycled":
        if os.geteuid() != 0:
            return _memory
        # no free block is of order 11 or above (MAX_PAGE_ORDER is 10)
        with open(REPORTING_ORDER, "w") as f:
            f.write("11\n")
        atexit.register(_restore_reporting, order)
        _memory = {"state": "recycled", "reporting": True, "order": order,
                   "written_gib": _write_free_memory() / 2**30}
    return _memory


def settle():
    """Wait until the VM has finished handing the memory freed so far back to
    the host (PG_DIO_BENCH_MEMORY=returned).  Memory freed in the guest (as
    evicting a table from the OS page cache frees it) is reported to the host
    through the virtio-balloon's free page reporting, in batches every 2 s,
    for ~15 s after 4 GB; the host processes the reports with CPU time that
    also serves the virtual disk, which meanwhile reads ~20-25% slower (1 s
    fio runs: 4.2-4.7 against 5.5-5.7 GiB/s).  So a cold run that came right
    after one that filled the page cache was measured against a slower
    device.  Every cold run (and fio run beside them) waits here for
    SETTLE_QUIET_S without a report (PG_DIO_BENCH_SETTLE=off: not at all);
    with the memory recycled, or without the device, at once."""
    if memory_state()["state"] != "returned" or \
            os.environ.get("PG_DIO_BENCH_SETTLE", "on") == "off":
        return 0.0
    count = _reporting_interrupts()
    t0 = last = time.time()
    while True:
        time.sleep(0.25)
        now = time.time()
        n = _reporting_interrupts()
        if n != count:
            count, last = n, now
        elif now - last >= SETTLE_QUIET_S or now - t0 >= SETTLE_MAX_S:
            break
    waited = time.time() - t0
    settle_waits.append(waited)
    return waited


def memory_state_text():
    """The reports' sentence on the memory the page cache filled."""
    m = memory_state()
    if m["state"] == "kernel":
        return ("The OS page cache filled memory the kernel had free (no free page reporting "
                "to a host). ")
    if m["state"] == "recycled":
        return ("The OS page cache filled memory the host already backed, as on a server whose "
                "page cache recycles its own pages (PG_DIO_BENCH_MEMORY=recycled: the VM's free "
                f"page reporting off for the run and {m['written_gib']:.1f} GiB of free memory "
                "written once before it). ")
    return ("The OS page cache filled memory the VM had handed back to the host "
            "(PG_DIO_BENCH_MEMORY=returned: free page reporting on), which the host faults in "
            "again in the readers' system time. ")


def settle_text():
    """The reports' sentences on the memory state and settle()."""
    w = sorted(settle_waits)
    if not w:
        return memory_state_text()
    return memory_state_text() + (
        f"Before every cold run and every fio run beside them, the bench waited until the VM "
        f"had gone {SETTLE_QUIET_S} s without handing freed memory back to the host "
        f"(virtio-balloon free page reporting, which slows the virtual disk while it runs; "
        f"see settle() in test/bench/engine_vs_fio.py): {len(w)} waits, median "
        f"{statistics.median(w):.1f} s, longest {w[-1]:.1f} s. ")


def steal_seconds():
    """Hypervisor steal time of all CPUs so far (/proc/stat), in seconds."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


LOADS = ("idle", "other CPU busy", "all CPUs busy")


def fio_under_load(files, rounds):
    """fio pinned to the reader CPU (or unpinned), with nothing else running,
    with a busy loop on every other CPU, and with one on every CPU: sequential
    256 kB x 32 (GiB/s) and random 8 kB at depth 16 and 64 (IOPS), the loads
    alternated in each round, and the steal time during each run."""
    cpu = reader_cpu()
    ncpu = os.cpu_count()
    res = {load: {"seq_gib_s": [], "rand16_iops": [], "rand64_iops": [], "steal_s": []}
           for load in LOADS}
    for r in range(rounds):
        order = LOADS if r % 2 == 0 else LOADS[::-1]
        for load in order:
            busy = ([] if load == "idle" else
                    [c for c in range(ncpu) if load == "all CPUs busy" or c != cpu])
            spinners = [subprocess.Popen(["taskset", "-c", str(c), sys.executable, "-c",
                                          "while True: pass"]) for c in busy]
            try:
                time.sleep(0.2)
                st0 = steal_seconds()
                seq = run_fio(files, 256, 32, cpu=cpu)["mib_s"] / 1024.0
                r16 = run_fio_random(files, 16, seconds=3, cpu=cpu)
                r64 = run_fio_random(files, 64, seconds=3, cpu=cpu)
                st1 = steal_seconds()
            finally:
                for sp in spinners:
                    sp.kill()
                    sp.wait()
            d = res[load]
            d["seq_gib_s"].append(seq)
            d["rand16_iops"].append(r16)
            d["rand64_iops"].append(r64)
            d["steal_s"].append(st1 - st0)
            print(f"fio, {load}: {seq:.2f} GiB/s, {r16:.0f} / {r64:.0f} IOPS, "
                  f"steal {st1 - st0:.2f} s", flush=True)
    return {"cpu": cpu, "loads": {k: {m: summary(v) for m, v in d.items()} for k, d in res.items()}}


def under_load_text(u):
    """The report's paragraph on fio_under_load's result."""
    L = u["loads"]
    def med(load, m, fmt):
        return fmt.format(L[load][m]["median"])
    where = (f"fio pinned to CPU {u['cpu']}, which takes the disk's interrupts"
             if u["cpu"] is not None else "fio not pinned")
    return ("The device while the CPUs are busy (" + where + "; a busy loop on the other CPU, "
            "or on every CPU; loads alternated, median): sequential 256 kB × 32 " +
            " / ".join(med(l, "seq_gib_s", "{:.2f}") for l in LOADS) + " GiB/s, random 8 kB "
            "at depth 16 " + " / ".join(med(l, "rand16_iops", "{:.0f}") for l in LOADS) +
            " IOPS, at depth 64 " + " / ".join(med(l, "rand64_iops", "{:.0f}") for l in LOADS) +
            " IOPS (" + ", ".join(LOADS) + "); hypervisor steal during the runs " +
            " / ".join(med(l, "steal_s", "{:.1f}") for l in LOADS) + " s. The host serves this "
            "VM's disk with CPU time its vCPUs compete for: a reader that keeps a CPU busy with "
            "the rows it reads gets less from the device than fio, which keeps none busy.")


def proc_cpu(stat):
    # fields after the ')' of comm: utime is field 14, stime 15 (1-based)
    rest = stat.rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / CLK_TCK


def run_pg_dio(bs_kb, depth):
    lines = psql_script(f"""
SET pg_dio.io_size = '{bs_kb}kB';
SET pg_dio.queue_depth = {depth};
SELECT rtrim(pg_read_file('/proc/self/stat'), E'\n');
SELECT concat_ws('|', bytes, elapsed_ms, reads, avg_read_bytes, direct_blocks,
                 fallback_blocks, checksum_failures)
  FROM pg_dio_read('pgbench_accounts');
SELECT rtrim(pg_read_file('/proc/self/stat'), E'\n');
""")
    cpu0 = proc_cpu(lines[0])
    vals = lines[1].split("|")
    cpu1 = proc_cpu(lines[2])
    nbytes, ms = int(vals[0]), float(vals[1])
    return {"mib_s": nbytes / 2**20 / (ms / 1000.0), "bytes": nbytes, "seconds": ms / 1000.0,
            "reads": int(vals[2]), "avg_read_bytes": int(vals[3] or 0),
            "direct_blocks": int(vals[4]), "fallback_blocks": int(vals[5]),
            "checksum_failures": int(vals[6]), "cpu_s": cpu1 - cpu0}


def summary(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def write_report(out_dir, name, lines):
    """Write a markdown report (a list of lines) to out_dir/name and print it."""
    report = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, name), "w") as f:
        f.write(report)
    print()
    print(report)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="quick", choices=MODES)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    mode = MODES[args.mode]
    data = os.environ["PG_DIO_DATA"]

    psql("DROP EXTENSION IF EXISTS pg_dio CASCADE")
    psql("CREATE EXTENSION pg_dio")
    psql("SELECT pg_dio_stats_reset()")
    scale = bench_scale(args.mode)
    ensure_table(scale)
    files, nblocks = segment_files(data)
    table_bytes = nblocks * 8192

    results = {"mode": args.mode, "table": "pgbench_accounts", "scale": scale,
               "table_bytes": table_bytes, "segments": len(files),
               "machine": {"cpus": os.cpu_count(), "kernel": platform.release()},
               "postgres": psql("SELECT version()"),
               "started": time.strftime("%Y-%m-%d %H:%M:%S"), "configs": []}

    for bs_kb, depth in mode["configs"]:
        print(f"read size {bs_kb}kB, depth {depth}: ", end="", flush=True)
        rounds = []
        for _ in range(mode["rounds"]):
            a = run_fio(files, bs_kb, depth)
            b = run_pg_dio(bs_kb, depth)
            if b["fallback_blocks"] or b["checksum_failures"] or b["bytes"] != table_bytes:
                sys.exit(f"pg_dio_read did not read every block directly: {b}")
            rounds.append({"fio": a, "pg_dio": b, "ratio": b["mib_s"] / a["mib_s"]})
            print(f"{a['mib_s']:.0f}/{b['mib_s']:.0f} ", end="", flush=True)
        print()
        results["configs"].append({
            "io_size_kb": bs_kb, "depth": depth, "rounds": rounds,
            "fio_mib_s": summary([r["fio"]["mib_s"] for r in rounds]),
            "pg_dio_mib_s": summary([r["pg_dio"]["mib_s"] for r in rounds]),
            "ratio": summary([r["ratio"] for r in rounds]),
            "fio_cpu_s_per_gib": summary([r["fio"]["cpu_s"] / (r["fio"]["bytes"] / 2**30) for r in rounds]),
            "pg_dio_cpu_s_per_gib": summary([r["pg_dio"]["cpu_s"] / (r["pg_dio"]["bytes"] / 2**30) for r in rounds]),
        })

    # the read sizes pg_dio issued, from its own size histogram (cluster-wide)
    rows = psql("SELECT lower_bound || ' ' || count FROM pg_dio_histogram() "
                "WHERE pid IS NULL AND kind = 'size' ORDER BY bucket").splitlines()
    results["size_histogram"] = [
        {"label": f"{int(lo) // 1024}kB+", "count": int(c)}
        for lo, c in (row.split() for row in rows)]
    # the device's random-read limit, for the index-scan experiments
    results["fio_random_8k_iops"] = {}
    for depth in (1, 16, 64):
        iops = [run_fio_random(files, depth) for _ in range(mode["rounds"])]
        results["fio_random_8k_iops"][depth] = summary(iops)
        print(f"fio random 8kB, depth {depth}: {statistics.median(iops):.0f} IOPS", flush=True)

    # the device while the CPUs are busy: on this VM the host serves the
    # virtual disk with CPU that the guest's vCPUs compete for
    results["fio_under_load"] = fio_under_load(files, mode["rounds"])

    with open(os.path.join(args.out, "engine_vs_fio.json"), "w") as f:
        json.dump(results, f, indent=2)

    def mm(s, fmt="{:.0f}"):
        return (fmt + " (" + fmt + "–" + fmt + ")").format(s["median"], s["min"], s["max"])

    lines = [
        f"## pg_dio_read vs fio, O_DIRECT sequential reads ({args.mode} mode)",
        "",
        f"pgbench_accounts at scale {scale}: {table_bytes / 2**30:.2f} GiB in "
        f"{len(files)} segment file(s); {mode['rounds']} alternating fio/pg_dio rounds per row; "
        f"median (min–max); ratio = pg_dio/fio per round. {os.cpu_count()} CPUs, kernel "
        f"{platform.release()}. {memory_text()}",
        "",
        "| read size | depth | fio MiB/s | pg_dio_read MiB/s | pg_dio/fio | fio CPU s/GiB | pg_dio CPU s/GiB |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in results["configs"]:
        lines.append(f"| {c['io_size_kb']} kB | {c['depth']} | {mm(c['fio_mib_s'])} | "
                     f"{mm(c['pg_dio_mib_s'])} | {mm(c['ratio'], '{:.2f}')} | "
                     f"{mm(c['fio_cpu_s_per_gib'], '{:.3f}')} | {mm(c['pg_dio_cpu_s_per_gib'], '{:.3f}')} |")
    lines += ["", "fio random 8 kB O_DIRECT reads over the same files (IOPS, median (min–max)): " +
              ", ".join(f"depth {d}: {mm(v)}" for d, v in results["fio_random_8k_iops"].items()),
              "", under_load_text(results["fio_under_load"])]
    report = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(report)
    print()
    print(report)


def walk(plan):
    """An EXPLAIN (FORMAT JSON) plan's nodes, depth first."""
    yield plan
    for p in plan.get("Plans", []):
        yield from walk(p)


if __name__ == "__main__":
    main()
