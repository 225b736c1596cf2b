#!/usr/bin/env python3
"""pg_dio's metrics through the programs that read them: end to end.

With the real programs of Debian's prometheus-postgres-exporter and
prometheus packages (test/setup.sh unpacks them), against the running test
cluster:

  1. postgres_exporter with --extend.query-path=monitoring/postgres_exporter.yml,
     connected as a role in pg_monitor over the Unix socket, after direct reads;
     /metrics is scraped and every pg_dio metric is checked against the value
     its view or function shows (nothing reads directly in between), and
     promtool check metrics passes on the pg_dio metrics;
  2. monitoring/pg_exporter.yml (pgsty pg_exporter's format; the program is not
     packaged here): every collector's query runs, returns the columns its
     metrics name, and yields the same series and values as the scrape;
  3. Prometheus scrapes the exporter every second while a workload reads
     directly; every PromQL expression of monitoring/grafana-pg_dio.json's
     panels, evaluated through Prometheus' HTTP API, returns data with a
     finite value.

Needs: PGHOST/PGPORT/PGUSER of a cluster with pg_dio preloaded (superuser),
psql on PATH, PG_DIO_PROMETHEUS_ROOT (the unpacked packages' root).
"""
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from decimal import Decimal

import yaml

sys.dont_write_bytecode = True     # no __pycache__ in the checkout
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "reliability"))
from pgsession import fresh_database, psql_once  # noqa: E402

DB = "pg_dio_monitoring"
ROLE = "dio_monitor"
PROM_ROOT = os.environ.get("PG_DIO_PROMETHEUS_ROOT", "")
EXPORTER = os.path.join(PROM_ROOT, "usr/bin/prometheus-postgres-exporter")
PROMETHEUS = os.path.join(PROM_ROOT, "usr/bin/prometheus")
PROMTOOL = os.path.join(PROM_ROOT, "usr/bin/promtool")
MON = os.path.join(ROOT, "monitoring")

failures = []


def check(ok, what):
    print(("ok      " if ok else "FAILED  ") + what)
    if not ok:
        failures.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_for(what, fn, seconds=30):
    deadline = time.time() + seconds
    while True:
        try:
            v = fn()
            if v:
                return v
        except OSError:
            pass
        if time.time() > deadline:
            raise SystemExit(f"gave up waiting for {what}")
        time.sleep(0.3)


def query(sql):
    """Rows of a query as lists of strings (psql -At)."""
    return [line.split("|") for line in psql_once(DB, sql) if line]


def parse_metrics(text):
    """{(name, frozenset(labels)): value} of the pg_dio series in an exposition."""
    series = {}
    for line in text.splitlines():
        if not line.startswith("pg_dio"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        labels.pop("server", None)
        series[(m.group(1), frozenset(labels.items()))] = float(m.group(4))
    return series


def same(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def le_text(v):
    """An le label as Prometheus' Go client prints a float64 (%g, shortest)."""
    if v == math.inf:
        return "+Inf"
    if v == 0:
        return "0"
    d = Decimal(repr(float(v))).normalize()
    t = d.as_tuple()
    digits = "".join(map(str, t.digits))
    point = len(digits) + t.exponent        # digits before the decimal point
    x = point - 1                           # the decimal exponent
    eprec = 6
    if eprec > len(digits) and len(digits) >= point:
        eprec = len(digits)
    if x < -4 or x >= eprec:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{'-' if t.sign else ''}{mant}e{'+' if x >= 0 else '-'}{abs(x):02d}"
    return format(d, "f")


def expected_series():
    """What the exporter should show: {(name, labels): value}, from the views."""
    exp = {}
    cols = ("reads_submitted reads_completed bytes_read blocks_direct errors short_reads "
            "submit_calls wait_calls wait_time_ms reads_in_flight max_inflight "
            "fallback_io_error fallback_no_uring fallback_no_odirect fallback_no_fd "
            "fallback_verify fallback_no_memory read_latency_ms bytes_requested").split()
    row = dict(zip(cols, map(float, query(f"SELECT {', '.join(cols)} FROM pg_dio_cluster_stats()")[0])))
    for name, col, scale in [("reads_submitted_total", "reads_submitted", 1),
                             ("reads_completed_total", "reads_completed", 1),
                             ("read_bytes_total", "bytes_read", 1),
                             ("blocks_direct_total", "blocks_direct", 1),
                             ("read_errors_total", "errors", 1),
                             ("short_reads_total", "short_reads", 1),
                             ("submit_calls_total", "submit_calls", 1),
                             ("wait_calls_total", "wait_calls", 1),
                             ("wait_seconds_total", "wait_time_ms", 1e-3),
                             ("reads_in_flight", "reads_in_flight", 1),
                             ("max_reads_in_flight", "max_inflight", 1)]:
        exp[("pg_dio_" + name, frozenset())] = row[col] * scale
    exp[("pg_dio_stats_reset_timestamp_seconds", frozenset())] = float(
        query("SELECT extract(epoch FROM stats_reset) FROM pg_dio_cluster_stats()")[0][0])
    for reason in ("io_error", "no_uring", "no_odirect", "no_fd", "verify", "no_memory"):
        exp[("pg_dio_fallback_blocks_total", frozenset({("reason", reason)}))] = row["fallback_" + reason]
    for bt, n, inflight, mem in query(
            "SELECT backend_type, count(*) FILTER (WHERE reads_submitted > 0), "
            "coalesce(sum(reads_in_flight), 0), coalesce(sum(io_memory), 0) "
            "FROM pg_dio_backend_stats() GROUP BY backend_type"):
        lab = frozenset({("backend_type", bt)})
        exp[("pg_dio_backends_using_direct_io", lab)] = float(n)
        exp[("pg_dio_backends_reads_in_flight", lab)] = float(inflight)
        exp[("pg_dio_backends_io_memory_bytes", lab)] = float(mem)
    # nothing is in flight here but what the counters say
    exp[("pg_dio_aios_ios", frozenset({("source", "pg_dio"), ("state", "SUBMITTED")}))] = \
        float(query("SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio'")[0][0])
    stmt_cols = ("calls_total direct_blocks_total direct_read_bytes_total buffered_blocks_total "
                 "prefetch_blocks_requested_total prefetch_blocks_read_total wait_seconds_total "
                 "read_latency_seconds_total").split()
    conf = yaml.safe_load(open(os.path.join(MON, "postgres_exporter.yml")))
    for st in query(conf["pg_dio_statements"]["query"].strip()):
        lab = frozenset(zip(("queryid", "datname", "usename", "toplevel"), st[:4]))
        for col, val in zip(stmt_cols, st[4:]):
            exp[("pg_dio_statements_" + col, lab)] = float(val)
    for kind, unit, scale, sumcol in (("latency", "seconds", 1e-6, "read_latency_ms"),
                                      ("size", "bytes", 1, "bytes_requested")):
        name = f"pg_dio_read_{kind}_{unit}"
        total = 0
        for upper, cum in query(
                "SELECT upper_bound, sum(count) OVER (ORDER BY bucket) FROM pg_stat_aio_histogram "
                f"WHERE pid IS NULL AND kind = '{kind}' ORDER BY bucket"):
            total = float(cum)
            if upper == "":
                continue
            le = int(upper) * scale if kind == "latency" else int(upper) - 1
            exp[(name + "_bucket", frozenset({("le", le_text(le))}))] = float(cum)
        exp[(name + "_bucket", frozenset({("le", "+Inf")}))] = total
        exp[(name + "_count", frozenset())] = total
        exp[(name + "_sum", frozenset())] = row[sumcol] * (1e-3 if kind == "latency" else 1)
    return exp


def pg_exporter_file_results(scraped):
    """pg_exporter.yml: its queries run and give the scrape's series and values;
    a list of (ok, what) for check()."""
    results = []

    def check(ok, what):
        results.append((ok, what))

    conf = yaml.safe_load(open(os.path.join(MON, "pg_exporter.yml")))
    names = set()
    for branch, c in conf.items():
        metrics = [next(iter(m.items())) for m in c["metrics"]]
        r = subprocess.run(["psql", "-X", "-A", "-F", "|", "-P", "footer=off", "-d", DB, "-c", c["query"]],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"pg_exporter.yml {branch}: the query runs ({r.stderr.strip()})")
        if r.returncode != 0:
            continue
        lines = r.stdout.splitlines()
        header = lines[0].split("|")
        check(header == [k for k, _ in metrics],
              f"pg_exporter.yml {branch}: its columns {header} are its metrics")
        labels = [k for k, v in metrics if v["usage"] == "LABEL"]
        for line in lines[1:]:
            row = dict(zip(header, line.split("|")))
            lab = frozenset((k, row[k]) for k in labels)
            for k, v in metrics:
                if v["usage"] in ("LABEL", "DISCARD"):
                    continue
                name = f"{c['name']}_{k}"
                names.add(name)
                key = (name, lab)
                if "le" in labels:
                    le = row["le"]
                    key = (name, frozenset({("le", "+Inf" if le == "+Inf" else le_text(float(le)))}))
                want = scraped.get(key)
                check(want is not None and same(float(row[k] or 0), want),
                      f"pg_exporter.yml {name}{dict(key[1])}: {row[k]} as the exporter shows ({want})")
    scraped_names = {n for n, _ in scraped}
    check(names == scraped_names,
          "pg_exporter.yml names the same series as postgres_exporter: "
          f"only there {sorted(names - scraped_names)}, only in the scrape {sorted(scraped_names - names)}")
    return results


def workload(stop_after):
    """Direct reads for about stop_after seconds, in a background psql."""
    sql = ("DO $$ DECLARE t timestamptz := clock_timestamp(); BEGIN "
           f"WHILE clock_timestamp() < t + interval '{stop_after} s' LOOP "
           "PERFORM pg_dio_read('mon_t'); END LOOP; END $$;")
    return subprocess.Popen(["psql", "-X", "-q", "-d", DB, "-c", sql],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def main():
    for prog in (EXPORTER, PROMETHEUS, PROMTOOL):
        if not os.access(prog, os.X_OK):
            raise SystemExit(f"{prog} not found: run test/setup.sh (PG_DIO_PROMETHEUS_ROOT)")
    fresh_database(DB)
    psql_once(DB, f"""
        CREATE EXTENSION pg_dio;
        CREATE TABLE mon_t AS SELECT g, repeat('m', 200) AS pad FROM generate_series(1, 50000) g;
        DO $$ BEGIN
            IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN
                CREATE ROLE {ROLE} LOGIN IN ROLE pg_monitor;
            END IF;
        END $$;
        SELECT direct_blocks FROM pg_dio_read('mon_t');""")
    major = int(query("SELECT current_setting('server_version_num')::int / 10000")[0][0])
    work = tempfile.mkdtemp(prefix="pg_dio-monitoring-")
    procs = []
    try:
        eport = free_port()
        env = dict(os.environ, DATA_SOURCE_NAME=(
            f"host={os.environ['PGHOST']} port={os.environ['PGPORT']} user={ROLE} "
            f"dbname={DB} sslmode=disable"))
        args = [EXPORTER, f"--extend.query-path={os.path.join(MON, 'postgres_exporter.yml')}",
                f"--web.listen-address=127.0.0.1:{eport}"]
        if major >= 17:
            args.append("--no-collector.bgwriter")   # pg_stat_bgwriter lost its columns in 17
        elog = open(os.path.join(work, "exporter.log"), "w")
        procs.append(subprocess.Popen(args, env=env, stdout=elog, stderr=subprocess.STDOUT))
        murl = f"http://127.0.0.1:{eport}/metrics"
        text = wait_for("the exporter", lambda: (t := http_get(murl)) and "pg_dio_reads_submitted_total" in t and t)

        # 1. the scrape against the views.  A backend of an earlier suite may
        #    still flush its statement statistics (at exit, or when idle)
        #    between the scrape and the views' reading: then both are read
        #    again, up to 5 times, and the last pair is checked
        for _ in range(5):
            expected = expected_series()
            scraped = parse_metrics(text)
            if all(scraped.get(k) is not None and same(scraped[k], v) for k, v in expected.items()) \
                    and all(k in expected for k in scraped if not k[0].startswith("pg_dio_aios_")):
                break
            time.sleep(1)
            text = http_get(murl)
        for key, want in sorted(expected.items(), key=lambda kv: (kv[0][0], sorted(kv[0][1]))):
            have = scraped.get(key)
            check(have is not None and same(have, want),
                  f"{key[0]}{dict(key[1])} = {want} as the view shows (exporter: {have})")
        for key in scraped:
            if key[0].startswith("pg_dio_aios_") and key not in expected:
                check(scraped[key] == 0 or key[0] == "pg_dio_aios_bytes",
                      f"{key[0]}{dict(key[1])}: core has nothing in flight here")
        check(expected[("pg_dio_read_latency_seconds_count", frozenset())] > 0,
              "the latency histogram has reads to show")
        check(any(k[0] == "pg_dio_statements_direct_blocks_total" and v > 0
                  for k, v in expected.items()), "a statement that read directly is shown")
        for key in scraped:
            if not key[0].startswith("pg_dio_aios_"):
                check(key in expected, f"{key[0]}{dict(key[1])}: in the scrape, and expected")
        pg_lines = "\n".join(l for l in text.splitlines()
                             if l.startswith("pg_dio") or re.match(r"# (HELP|TYPE) pg_dio", l)) + "\n"
        r = subprocess.run([PROMTOOL, "check", "metrics"], input=pg_lines, capture_output=True, text=True)
        check(r.returncode == 0, f"promtool check metrics on pg_dio's metrics: {(r.stdout + r.stderr).strip() or 'clean'}")
        for t in ("counter", "gauge", "histogram"):
            check(re.search(rf"# TYPE pg_dio\S* {t}\n", pg_lines) is not None, f"the scrape has pg_dio {t}s")
        check(all(not re.match(r"# TYPE (\S+) counter", l) or l.split()[2].endswith("_total")
                  for l in pg_lines.splitlines()), "every pg_dio counter's name ends in _total")

        # 2. pg_exporter.yml's queries against a scrape: a backend that comes
        #    and goes by itself (an autovacuum worker) may show in one and not
        #    the other, so a scrape and the queries are taken again, up to 5
        #    times, and the last pair is checked
        for _ in range(5):
            results = pg_exporter_file_results(scraped)
            if all(ok for ok, _ in results):
                break
            time.sleep(1)
            scraped = parse_metrics(http_get(murl))
        for ok, what in results:
            check(ok, what)

        # 3. Prometheus, and the dashboard's expressions
        pport = free_port()
        with open(os.path.join(work, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: pg_dio\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{eport}']\n")
        plog = open(os.path.join(work, "prometheus.log"), "w")
        procs.append(subprocess.Popen([PROMETHEUS, f"--config.file={work}/prometheus.yml",
                                       f"--storage.tsdb.path={work}/data",
                                       f"--web.listen-address=127.0.0.1:{pport}"],
                                      stdout=plog, stderr=subprocess.STDOUT))
        api = f"http://127.0.0.1:{pport}/api/v1/query?query="

        def promql(expr):
            return json.loads(http_get(api + urllib.parse.quote(expr)))

        wait_for("Prometheus to scrape the exporter",
                 lambda: any(s["value"][1] == "1" for s in promql('up{job="pg_dio"}')["data"]["result"]), 60)
        load = workload(12)
        time.sleep(10)
        dash = json.load(open(os.path.join(MON, "grafana-pg_dio.json")))
        n = 0
        for panel in dash["panels"]:
            for t in panel["targets"]:
                expr = t["expr"].replace("$__rate_interval", "8s")
                res = promql(expr)
                vals = [float(s["value"][1]) for s in res["data"]["result"]]
                n += 1
                check(res["status"] == "success" and any(math.isfinite(v) for v in vals),
                      f"panel '{panel['title']}': {t['expr']} returns data ({vals[:4]})")
        check(n > 0, f"the dashboard has {n} expressions")
        load.wait(timeout=60)
        check(load.returncode == 0, f"the workload ran ({load.stderr.read().strip()})")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        if failures:
            for log in ("exporter.log", "prometheus.log"):
                path = os.path.join(work, log)
                if os.path.exists(path):
                    print(f"--- {log} (last lines)")
                    print("".join(open(path).readlines()[-15:]))
        shutil.rmtree(work, ignore_errors=True)
    print(f"monitoring: {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
