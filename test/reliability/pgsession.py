"""A long-lived psql process fed through stdin: one backend for many commands.

Used by the reliability scripts (leaks.py, cancel_loops.py).  Each command is
followed by a marker (\\echo); send() returns at once, result() collects the
command's output lines (stdout and stderr, in order) up to the marker.  psql
runs with ON_ERROR_STOP off, so an ERROR leaves the session usable: callers
look at the returned lines (see is_error).
"""
import os
import queue
import subprocess
import threading
import time


class SessionGone(Exception):
    pass


class Session:
    def __init__(self, db, env=None):
        self.proc = subprocess.Popen(
            ["psql", "-X", "-At", "-q", "-v", "ON_ERROR_STOP=0", "-v", "VERBOSITY=terse",
             "-d", db],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1, env=env)
        self.lines = queue.Queue()
        self.count = 0
        self.pending = None
        threading.Thread(target=self._reader, daemon=True).start()
        self.pid = int(self.query("SELECT pg_backend_pid();")[0])

    def _reader(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def has_output(self):
        """Has anything come back since the last send (e.g. the end marker)?"""
        return not self.lines.empty()

    def send(self, sql):
        """Send SQL (every statement must end with ';' or a \\g)."""
        assert self.pending is None, "previous command not collected"
        self.count += 1
        self.pending = f"__pg_dio_done_{self.count}__"
        try:
            self.proc.stdin.write(f"{sql}\n\\echo {self.pending}\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise SessionGone(str(e))

    def result(self, timeout=60):
        """Output lines of the last command sent; SessionGone if psql ended."""
        out = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer within {timeout} s; so far: {out}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                self.pending = None
                raise SessionGone("\n".join(out))
            if line == self.pending:
                self.pending = None
                return out
            out.append(line)

    def query(self, sql, timeout=60):
        """Run SQL and return its output lines; raise on any error line."""
        self.send(sql)
        out = self.result(timeout)
        errors = [l for l in out if is_error(l)]
        if errors:
            raise RuntimeError(f"{errors[0]}\n--- SQL:\n{sql}")
        return out

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def psql_once(db, sql):
    """Run a script in a new psql; its output lines (raises on any error)."""
    r = subprocess.run(["psql", "-X", "-At", "-q", "-v", "ON_ERROR_STOP=1", "-d", db],
                       input=sql, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"psql failed: {r.stderr.strip()}\n--- SQL:\n{sql}")
    return r.stdout.strip().splitlines()


def fresh_database(db):
    """Drop and create database 'db' (a script's own, for its tables)."""
    psql_once("postgres", f"DROP DATABASE IF EXISTS {db};")
    psql_once("postgres", f"CREATE DATABASE {db};")


def is_error(line):
    """An error line of psql (with or without its "psql:<stdin>:N: " prefix)."""
    if line.startswith("psql:"):
        line = line.split(": ", 1)[-1]
    return line.startswith(("ERROR:", "FATAL:", "PANIC:"))


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


O_DIRECT = 0o40000         # x86-64, aarch64 differs: only used to label fds
RELFILE_DIRS = ("/base/", "/global/", "/pg_tblspc/")


def fd_table(pid):
    """{fd: (target, open flags)} of a process (as root or as its owner)."""
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                flags = next(int(l.split()[1], 8) for l in f if l.startswith("flags:"))
        except (OSError, StopIteration):
            continue
        out[int(fd)] = (target, flags)
    return out


def is_core_relfile(target, flags):
    """A relation segment file opened by core's md.c (read-write, buffered):
    kept open by the virtual file descriptor cache (bounded by
    max_files_per_process) while its relcache entry lives, closed when a
    relcache invalidation (autovacuum, ANALYZE, DDL anywhere in the database)
    closes the relation's smgr, reopened at the next access.  pg_dio's own
    relation fds are read-only (O_DIRECT for reads, plain for the cache
    tools)."""
    return (any(d in target for d in RELFILE_DIRS) and (flags & 3) == os.O_RDWR
            and not flags & O_DIRECT)


def fd_counts(pid):
    """(fds core's file cache may open and close at will, all other fds)."""
    t = fd_table(pid)
    core = sum(1 for target, flags in t.values() if is_core_relfile(target, flags))
    return core, len(t) - core


def server_log_path():
    """The throwaway cluster's log (test/cluster.sh: .../clusters/NAME/server.log)."""
    host = os.environ.get("PGHOST", "")
    if host.endswith("/sock"):
        return os.path.join(os.path.dirname(host), "server.log")
    return None


# what the postmaster logs when a process crashed (and the crash restart)
CRASH_PATTERNS = ("PANIC", "terminated by signal", "was terminated by exception",
                  "terminating any other active server processes",
                  "all server processes terminated; reinitializing")


def log_crashes(path, offset):
    """Lines of the server log after offset that show a crash."""
    if path is None or not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    return [l for l in text.splitlines() if any(p in l for p in CRASH_PATTERNS)]


def log_size(path):
    return os.path.getsize(path) if path and os.path.exists(path) else 0
