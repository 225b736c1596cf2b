--
-- views: pg_stat_aios, pg_stat_aio_backends, pg_stat_aio_histogram, cluster
-- totals (including backends that exited), reset
--
\d pg_stat_aios
\d pg_stat_aio_backends
\d pg_stat_aio_histogram

-- nothing of ours is in flight between statements
SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio';

-- our backend is listed, with core's per-backend I/O beside our counters
SELECT backend_type, reads_completed >= 0 AS has_counters, core_reads IS NOT NULL AS has_core_io,
       reads_in_flight
  FROM pg_stat_aio_backends WHERE pid = pg_backend_pid();
-- every live backend core knows of is listed
SELECT count(*) = (SELECT count(*) FROM pg_stat_activity) AS all_backends FROM pg_stat_aio_backends;
SELECT count(*) FROM pg_dio_backend_stats(-1);
SELECT count(*) FROM pg_dio_backend_stats(0);

-- histogram shape: 25 latency buckets of log2 microseconds, 8 size buckets 8kB..1MB+
SELECT kind, count(*), min(lower_bound), max(lower_bound), count(*) FILTER (WHERE upper_bound IS NULL) AS open_ended
  FROM pg_stat_aio_histogram WHERE pid IS NULL GROUP BY kind ORDER BY kind;
SELECT bucket, lower_bound, upper_bound FROM pg_stat_aio_histogram
 WHERE pid IS NULL AND kind = 'size' ORDER BY bucket;

-- reset: everything reads zero, then counts again
SELECT pg_dio_stats_reset();
SELECT reads_submitted, reads_completed, bytes_read, blocks_direct, blocks_fallback, errors
  FROM pg_dio_cluster_stats();
SELECT reads_completed, blocks_direct FROM pg_dio_backend_stats(pg_backend_pid());
SELECT sum(count) FROM pg_dio_histogram() WHERE pid IS NULL;
SELECT stats_reset > now() - interval '1 minute' AS recent_reset FROM pg_dio_cluster_stats();

SELECT reads AS my_reads, blocks AS my_blocks FROM pg_dio_read('dio_t') \gset
SELECT reads_completed = :my_reads AS cluster_reads, blocks_direct = :my_blocks AS cluster_blocks
  FROM pg_dio_cluster_stats();
SELECT sum(count) = :my_reads AS cluster_hist FROM pg_dio_histogram() WHERE pid IS NULL AND kind = 'size';

-- a backend that exits leaves its counters in the cluster totals (another
-- session through dblink; without it this case says so and is skipped,
-- expected/views_1.out)
SELECT NOT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'dblink') AS no_dblink \gset
\if :no_dblink
\echo 'skipped: a backend that exits needs the contrib module dblink, which this PostgreSQL does not have'
\else
CREATE EXTENSION dblink;
SELECT dblink_connect('other', self_conninfo());
SELECT * FROM dblink('other', 'SELECT pg_backend_pid(), reads FROM pg_dio_read(''dio_t'')')
    AS t(pid int, reads bigint) \gset other_
SELECT reads_completed = :other_reads AS other_counted
  FROM pg_dio_backend_stats(:other_pid);
SELECT dblink_disconnect('other');
SELECT wait_for_exit(:other_pid);
SELECT count(*) FROM pg_dio_backend_stats(:other_pid);
SELECT reads_completed = :my_reads + :other_reads AS exited_folded FROM pg_dio_cluster_stats();
DROP EXTENSION dblink;
\endif

-- core's AIO target descriptions, taken apart for pg_stat_aios
SELECT d, t.* FROM (VALUES
    ('blocks 128..143 in file "base/5/16384"'),
    ('block 7 in file "base/5/16384_vm"'),
    ('block 0 in file "global/1262"'),
    ('blocks 1..2 in file "pg_tblspc/16500/PG_18_202506291/5/16501_fsm"'),
    ('block 3 in file "base/5/t3_16402"'),
    ('file "base/5/16384"'),
    ('')) AS v(d), pg_dio_aio_target(d) t;
-- and resolved to the relation, here with the path of a real table
SELECT pg_dio_relation(t.reltablespace, t.reldatabase, t.relfilenode) AS relation, t.fork, t.block
  FROM pg_dio_aio_target(format('blocks 32..47 in file "%s"', pg_relation_filepath('dio_t'))) t;
SELECT pg_dio_relation(t.reltablespace, t.reldatabase, t.relfilenode) AS relation, t.fork
  FROM pg_dio_aio_target(format('block 0 in file "%s_vm"', pg_relation_filepath('dio_t'))) t;
SELECT pg_dio_relation(t.reltablespace, t.reldatabase, t.relfilenode) AS relation
  FROM pg_dio_aio_target(format('block 0 in file "%s"', pg_relation_filepath('pg_database'))) t;

-- the same in the server's other languages (lc_messages): PostgreSQL 18's
-- translations of these messages change the words and the quotes, Swedish
-- has one word for block and blocks, Japanese names the file first; every
-- one must be taken apart as the English is
SELECT d, t.* FROM (VALUES
    ('Blöcke 128..143 in Datei »base/5/16384«'),
    ('Block 7 in Datei »base/5/16384_vm«'),
    ('Datei »base/5/16384«'),
    ('ファイル"base/5/16384"でブロック範囲 128...143'),
    ('ファイル"global/1262"のブロック0'),
    ('해당 블록: 1..2, 해당 파일: "pg_tblspc/16500/PG_18_202506291/5/16501_fsm"'),
    ('해당 블록: 3, 해당 파일: "base/5/t3_16402"'),
    ('блоки 128..143 в файле "base/5/16384"'),
    ('блок 7 у файлі "base/5/16384_vm"'),
    ('block 128..143 i fil "base/5/16384"'),
    ('block 128 i fil "base/5/16384"'),
    ('ბლოკები 128..143 ფაილში "base/5/16384"')) AS v(d), pg_dio_aio_target(d) t;
-- and what a translation could still do: name the range's last block first,
-- drop the quotes; a segment number is part of the path; three integers are
-- no block, a path inside a longer word no path
SELECT d, t.* FROM (VALUES
    ('blocks 143..128 in file "base/5/16384"'),
    ('block 9 in file base/5/16384.'),
    ('block 9 in file "base/5/16384.1"'),
    ('blocks 1..2..3 in file "base/5/16384"'),
    ('block 9 in file "database/5/16384"'),
    ('block 9 in file "base/5/16384x"')) AS v(d), pg_dio_aio_target(d) t;
-- resolved to the relation from a German and a Japanese description
SELECT pg_dio_relation(t.reltablespace, t.reldatabase, t.relfilenode) AS relation, t.fork, t.block
  FROM pg_dio_aio_target(format('Blöcke 32..47 in Datei »%s«', pg_relation_filepath('dio_t'))) t;
SELECT pg_dio_relation(t.reltablespace, t.reldatabase, t.relfilenode) AS relation, t.fork, t.block
  FROM pg_dio_aio_target(format('ファイル"%s_vm"のブロック0', pg_relation_filepath('dio_t'))) t;

-- base/ holds pg_default's files, also in a database whose default
-- tablespace is another (an in-place one here, under pg_tblspc/): a table
-- put in pg_default there is found, as one in the database's default is
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE dio_spc LOCATION '';
RESET allow_in_place_tablespaces;
CREATE DATABASE dio_spcdb TABLESPACE dio_spc;
\c dio_spcdb
CREATE EXTENSION pg_dio;
CREATE TABLE dio_in_spc (a int);
CREATE TABLE dio_in_default (a int) TABLESPACE pg_default;
SELECT c.relname, pg_relation_filepath(c.oid) LIKE 'pg_tblspc/%' AS under_pg_tblspc,
       pg_dio_relation(t.reltablespace, t.reldatabase, t.relfilenode) AS relation
  FROM pg_class c,
       pg_dio_aio_target(format('block 0 in file "%s"', pg_relation_filepath(c.oid))) t
 WHERE c.relname IN ('dio_in_spc', 'dio_in_default') ORDER BY 1;
\c contrib_regression
DROP DATABASE dio_spcdb;
DROP TABLESPACE dio_spc;
