--
-- direct_scan: DirectSeqScan replaces SeqScan where it may, returns exactly
-- what core's SeqScan returns, and reads directly only what is safe.  Uses
-- pg_buffercache and dblink: without them the suite says so and stops
-- (expected/direct_scan_1.out).
--
SELECT count(*) < 2 AS no_contrib FROM pg_available_extensions WHERE name IN ('pg_buffercache', 'dblink') \gset
\if :no_contrib
\echo 'skipped: needs the contrib modules pg_buffercache and dblink, which this PostgreSQL does not have'
\quit
\endif
CREATE EXTENSION pg_buffercache;
SET max_parallel_workers_per_gather = 0;
SET pg_dio.direct_scan_threshold = 0;	-- test tables are small
-- pg_buffercache_evict_relation leaves pages in the OS page cache; this test
-- wants them read directly anyway (the OS-cache path is tested at the end)
SET pg_dio.os_cache_check = off;

-- The blocks of a relation's main fork that are in shared buffers, as
-- pg_buffercache sees them (not pg_dio).
CREATE FUNCTION ds_resident(rel regclass) RETURNS int[]
LANGUAGE sql AS $$
    SELECT coalesce(array_agg(relblocknumber::int ORDER BY relblocknumber), '{}')
      FROM pg_buffercache
     WHERE relfilenode = pg_relation_filenode(rel) AND relforknumber = 0
       AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
$$;
-- Evict a relation from shared buffers; whether none of its main fork's
-- blocks is left there, which is what the tests after an eviction rely on.
-- pg_buffercache_evict_relation skips a buffer someone has pinned (the
-- checkpointer or bgwriter writing it out): evict again while some are left
-- (wait_for: up to 10 s).
CREATE FUNCTION ds_evict(rel regclass) RETURNS boolean
LANGUAGE sql AS $$
    SELECT wait_for(format('SELECT ds_resident(%L) = ''{}'' FROM pg_buffercache_evict_relation(%L)', rel, rel))
$$;

-- a table of many shapes: NULLs, TOAST, a dropped column, a column added
-- with a default after the fact (missing attributes), HOT chains, deleted rows
CREATE TABLE ds (id int, a text, b int, c text, d numeric)
    WITH (autovacuum_enabled = off, fillfactor = 80);
ALTER TABLE ds ALTER COLUMN c SET STORAGE EXTERNAL;
INSERT INTO ds
SELECT g,
       CASE WHEN g % 7 = 0 THEN NULL ELSE 'a' || g END,
       g % 13,
       CASE WHEN g % 500 = 0 THEN repeat(md5(g::text), 100) ELSE md5(g::text) END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g / 3.0 END
  FROM generate_series(1, 40000) g;
ALTER TABLE ds DROP COLUMN b;
ALTER TABLE ds ADD COLUMN e int DEFAULT 42;
UPDATE ds SET d = d + 1 WHERE id % 50 = 0;		-- HOT, mostly
DELETE FROM ds WHERE id % 97 = 0;
VACUUM (FREEZE, ANALYZE) ds;
SELECT pg_relation_size('ds') / current_setting('block_size')::int AS ds_blocks \gset
SELECT :ds_blocks - 1 AS ds_last \gset
-- nothing of it in shared buffers: every block can be read directly
SELECT ds_evict('ds') AS evicted;

-- plan
SELECT dio_plan('SELECT * FROM ds');
SELECT dio_plan('SELECT id, e FROM ds WHERE id % 3 = 0 LIMIT 5');

-- all blocks all-visible and not resident: every block read directly
SELECT nodes, direct_blocks = :ds_blocks AS all_direct, buffered
  FROM dio_scan_stats('SELECT count(*) FROM ds');
SELECT ds_evict('ds') AS evicted;

-- same rows as core, in the same order
SELECT dio_compare('SELECT * FROM ds', true);
SELECT dio_compare('SELECT ctid, tableoid::regclass, xmin, xmax, cmin, * FROM ds', true);
SELECT dio_compare('SELECT id, length(c), e FROM ds WHERE c IS NOT NULL AND id % 2 = 1', true);
SELECT dio_compare('SELECT count(*), sum(id), count(a), count(d), sum(e), sum(length(c)) FROM ds');
SELECT dio_compare('SELECT id FROM ds WHERE a IS NULL OR d IS NULL', true);
-- no column wanted but the quals': the scan tuple is the quals' columns only
SELECT dio_compare('SELECT count(*) FROM ds WHERE length(c) > 1000 OR d IS NULL OR e <> 42');
SELECT dio_compare('SELECT * FROM ds LIMIT 17', true);
SELECT dio_compare('SELECT * FROM ds OFFSET 39000', true);

-- the scan tuple holds just the columns the plan needs: leading fixed-width
-- columns are fetched at fixed offsets, unless the row has NULLs or lacks
-- the column (added later); other rows are deformed in full
CREATE TABLE ds_fixed (i int, b bigint, f float8, t text, s smallint, c char(3))
    WITH (autovacuum_enabled = off);
INSERT INTO ds_fixed
SELECT g, CASE WHEN g % 9 = 0 THEN NULL ELSE g * 1000 END, g / 7.0, 't' || g,
       (g % 100)::smallint, 'c'
  FROM generate_series(1, 30000) g;
ALTER TABLE ds_fixed ADD COLUMN x int DEFAULT 7;
INSERT INTO ds_fixed SELECT g, g, g, NULL, 1, NULL, g FROM generate_series(30001, 31000) g;
VACUUM (FREEZE) ds_fixed;
SELECT ds_evict('ds_fixed') AS evicted;
EXPLAIN (VERBOSE, COSTS OFF) SELECT sum(b) FROM ds_fixed WHERE s > 3;
SELECT dio_compare('SELECT sum(b), sum(f), count(*), count(b) FROM ds_fixed');
SELECT dio_compare('SELECT f, i FROM ds_fixed WHERE s < 10', true);
SELECT dio_compare('SELECT sum(x), sum(s), count(*) FROM ds_fixed WHERE b IS NULL OR x <> 7');
SELECT dio_compare('SELECT count(*) FROM ds_fixed WHERE b IS NULL OR x <> 7 OR c <> ''c''');
SELECT dio_compare('SELECT i + s, t, c FROM ds_fixed WHERE i % 3 = 0', true);
SELECT dio_compare('SELECT i FROM ds_fixed ORDER BY f * -1, i LIMIT 20', true);
SELECT dio_compare('SELECT DISTINCT s FROM ds_fixed ORDER BY s', true);
SELECT dio_compare('SELECT count(*) FROM ds WHERE id IN (SELECT b / 1000 FROM ds_fixed)');
SELECT dio_compare('SELECT ds_fixed::text FROM ds_fixed WHERE i % 1000 = 0', true);
SELECT dio_compare('SELECT ctid, x, i FROM ds_fixed WHERE i % 1000 = 0', true);
-- plan shapes above a narrow scan tuple: sort keys, merge and hash joins,
-- window functions, sorted grouping on expressions, UNION ALL children
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT dio_compare('SELECT ds.id, f.f, f.c FROM ds JOIN ds_fixed f ON f.i = ds.id + 1 WHERE f.s < 50');
RESET enable_nestloop;
RESET enable_hashjoin;
SET enable_mergejoin = off;
SELECT dio_compare('SELECT ds.a, f.b FROM ds JOIN ds_fixed f ON f.i = ds.id AND f.x = ds.e - 35');
RESET enable_mergejoin;
SET enable_hashagg = off;
SELECT dio_compare('SELECT i % 10, sum(f), max(t) FROM ds_fixed GROUP BY 1 ORDER BY 1', true);
RESET enable_hashagg;
SELECT dio_compare('SELECT s, i, row_number() OVER (PARTITION BY s ORDER BY b DESC NULLS FIRST, i) FROM ds_fixed');
SELECT dio_compare('SELECT i FROM ds_fixed WHERE s = 3 UNION ALL SELECT id FROM ds WHERE id % 1000 = 3');
SELECT dio_compare('SELECT DISTINCT ON (s) s, i, f FROM ds_fixed ORDER BY s, f DESC', true);
-- only fixed-width columns, one added later: rows older than it lack it
CREATE TABLE ds_fixed2 (i int, j bigint) WITH (autovacuum_enabled = off);
INSERT INTO ds_fixed2 SELECT g, g * 2 FROM generate_series(1, 20000) g;
ALTER TABLE ds_fixed2 ADD COLUMN k int DEFAULT 5;
INSERT INTO ds_fixed2 SELECT g, g * 2, 6 FROM generate_series(20001, 30000) g;
ALTER TABLE ds_fixed2 DROP COLUMN i;
VACUUM (FREEZE) ds_fixed2;
SELECT ds_evict('ds_fixed2') AS evicted;
SELECT dio_compare('SELECT sum(k), count(*) FILTER (WHERE k = 5), sum(j) FROM ds_fixed2');
SELECT dio_compare('SELECT k, j FROM ds_fixed2 WHERE j % 1000 = 0', true);
DROP TABLE ds_fixed2;
-- a varlena right after fixed-width columns: at their end (1-byte header,
-- TOAST pointer) or aligned (4-byte header, compressed or not)
CREATE TABLE ds_var (s smallint, t text, u int) WITH (autovacuum_enabled = off);
INSERT INTO ds_var
SELECT g % 1000,
       CASE g % 4 WHEN 0 THEN 'short' || g
                  WHEN 1 THEN repeat('x', 200) || g
                  WHEN 2 THEN repeat(md5(g::text), 150)
                  ELSE (SELECT string_agg(md5(g::text || i), '') FROM generate_series(1, 300) i) END,
       g
  FROM generate_series(1, 4000) g;
VACUUM (FREEZE) ds_var;
SELECT ds_evict('ds_var') AS evicted;
SELECT dio_compare('SELECT s, md5(t), length(t) FROM ds_var', true);
SELECT dio_compare('SELECT md5(string_agg(t, '','' ORDER BY u)) FROM ds_var');
DROP TABLE ds_var;
-- no column at all: rows are counted off a page without being stored
SELECT dio_compare('SELECT count(*) FROM ds_fixed');
SELECT dio_compare('SELECT count(*) FROM ds');

-- resident blocks are read through the buffer manager
SELECT count(*) FROM ds WHERE id < 5000;	-- makes the first blocks resident (no strategy: small table)
SELECT nodes, direct_blocks + buffered = :ds_blocks AS accounted, resident > 0 AS some_resident
  FROM dio_scan_stats('SELECT count(*) FROM ds');

-- which blocks are resident: a lookup per block, or one sweep over the buffer
-- descriptors (pg_dio.resident_sweep: on sweeps at the scan's start, auto
-- once the scan has looked up shared_buffers / 32 blocks, off never).  Each
-- way exactly the blocks a TID scan made resident go through the buffer
-- manager, and a chunk whose first blocks are resident goes that way as a
-- whole.  (load_three: ds evicted, then blocks 3, 100 and the last read
-- into shared buffers, and only those there, as pg_buffercache sees it.)
\set load_three 'SELECT ds_evict(''ds'') AS evicted; SELECT count(*) > 0 AS loaded FROM ds WHERE ctid = ANY (ARRAY[''(3,1)'', ''(100,1)'', ''(' :ds_last ',1)'']::tid[]); SELECT ds_resident(''ds'') = ARRAY[3, 100, ' :ds_last '] AS just_those_resident;'
:load_three
SET pg_dio.resident_sweep = on;
SELECT nodes, direct_blocks = :ds_blocks - 3 AS others_direct, resident
  FROM dio_scan_stats('SELECT count(*) FROM ds');
SELECT dio_compare('SELECT * FROM ds', true);
:load_three
SET pg_dio.resident_sweep = off;
SELECT nodes, direct_blocks = :ds_blocks - 3 AS others_direct, resident
  FROM dio_scan_stats('SELECT count(*) FROM ds');
:load_three
SET pg_dio.resident_sweep = auto;
SELECT nodes, direct_blocks = :ds_blocks - 3 AS others_direct, resident
  FROM dio_scan_stats('SELECT count(*) FROM ds');
-- auto makes its lookups first, then the sweep: a table of one row a block,
-- sized from this server's shared_buffers so that its last resident block
-- comes after the sweep (shared_buffers / 32 + 64 blocks: 4.5 MB with the
-- default 128MB)
SELECT setting::bigint / 32 AS sweep_after FROM pg_settings WHERE name = 'shared_buffers' \gset
CREATE TABLE ds_sweep (id int, pad text) WITH (autovacuum_enabled = off, fillfactor = 10);
INSERT INTO ds_sweep SELECT g, repeat('s', current_setting('block_size')::int / 8)
  FROM generate_series(1, :sweep_after + 64) g;
VACUUM (FREEZE) ds_sweep;
SELECT pg_relation_size('ds_sweep') / current_setting('block_size')::int AS sweep_blocks \gset
SELECT :sweep_blocks = :sweep_after + 64 AS one_row_a_block, ds_evict('ds_sweep') AS evicted;
SELECT count(*) AS loaded FROM ds_sweep
 WHERE ctid = ANY (ARRAY['(3,1)', format('(%s,1)', :sweep_after / 2 + 4),
                         format('(%s,1)', :sweep_blocks - 1)]::tid[]);
SELECT ds_resident('ds_sweep') = ARRAY[3, :sweep_after / 2 + 4, :sweep_blocks - 1] AS just_those_resident;
SELECT nodes, direct_blocks = :sweep_blocks - 3 AS others_direct, resident
  FROM dio_scan_stats('SELECT count(*) FROM ds_sweep');
DROP TABLE ds_sweep;
:load_three
SELECT count(*) > 0 AS loaded FROM ds
 WHERE ctid = ANY (ARRAY(SELECT format('(%s,1)', g)::tid FROM generate_series(0, 15) g));
SELECT ds_resident('ds') = ARRAY(SELECT generate_series(0, 15)) || ARRAY[100, :ds_last] AS those_resident;
SET pg_dio.resident_sweep = on;
SELECT nodes, direct_blocks, resident = :ds_blocks AS chunk_resident
  FROM dio_scan_stats('SELECT count(*) FROM ds');
RESET pg_dio.resident_sweep;

-- blocks not all-visible (and the transaction's own uncommitted changes)
BEGIN;
UPDATE ds SET a = 'changed' WHERE id % 1000 = 1;
INSERT INTO ds (id, a) VALUES (-1, 'mine');
DELETE FROM ds WHERE id BETWEEN 20000 AND 20100;
SELECT dio_compare('SELECT * FROM ds', true);
SELECT dio_compare('SELECT id, a FROM ds WHERE a = ''changed'' OR id < 0', true);
-- (the changed blocks are in shared buffers: a chunk mostly resident is
-- read buffered as a whole, counted as resident)
SELECT nodes, direct_blocks < :ds_blocks AS not_all_direct,
       not_all_visible + resident > 0 AS changed_blocks_buffered
  FROM dio_scan_stats('SELECT * FROM ds');
ROLLBACK;
SELECT dio_compare('SELECT count(*), sum(id) FROM ds');

-- a table never vacuumed: nothing all-visible, all buffered, same rows
CREATE TABLE ds_fresh WITH (autovacuum_enabled = off) AS SELECT * FROM ds;
SELECT ds_evict('ds_fresh') AS evicted;
SELECT nodes, direct_blocks, not_all_visible > 0 AS all_buffered FROM dio_scan_stats('SELECT * FROM ds_fresh');
SELECT dio_compare('SELECT * FROM ds_fresh', true);
-- partly vacuumed: the vacuumed part direct, the rest buffered
VACUUM ds_fresh;
UPDATE ds_fresh SET e = 1 WHERE id > 35000;
SELECT ds_evict('ds_fresh') AS evicted;
SELECT nodes, direct_blocks > 0 AS some_direct, not_all_visible > 0 AS some_buffered
  FROM dio_scan_stats('SELECT * FROM ds_fresh');
SELECT dio_compare('SELECT * FROM ds_fresh', true);

-- unlogged tables
CREATE UNLOGGED TABLE ds_unlogged AS SELECT * FROM ds;
VACUUM ds_unlogged;
SELECT ds_evict('ds_unlogged') AS evicted;
SELECT dio_compare('SELECT * FROM ds_unlogged', true);

-- partitions and inheritance children
CREATE TABLE ds_parted (id int, a text) PARTITION BY RANGE (id);
CREATE TABLE ds_p1 PARTITION OF ds_parted FOR VALUES FROM (0) TO (20000) WITH (autovacuum_enabled = off);
CREATE TABLE ds_p2 PARTITION OF ds_parted FOR VALUES FROM (20000) TO (50000) WITH (autovacuum_enabled = off);
INSERT INTO ds_parted SELECT id, a FROM ds;
VACUUM ds_p1, ds_p2;
SELECT dio_plan('SELECT * FROM ds_parted');
SELECT dio_compare('SELECT tableoid::regclass, * FROM ds_parted');
-- a partition whose columns lie in another order: narrow scan tuples of each
CREATE TABLE ds_p3 (a text, x int, id int) WITH (autovacuum_enabled = off);
ALTER TABLE ds_p3 DROP COLUMN x;
INSERT INTO ds_p3 SELECT 'p3 ' || g, g FROM generate_series(50000, 59999) g;
ALTER TABLE ds_parted ATTACH PARTITION ds_p3 FOR VALUES FROM (50000) TO (60000);
VACUUM ds_p3;
SELECT dio_compare('SELECT id, a FROM ds_parted WHERE id % 7 = 0');
SELECT dio_compare('SELECT sum(id), count(a), max(a) FROM ds_parted');
-- many partitions: each scan holds an engine stream only while it reads
CREATE TABLE ds_many (id int, a text) PARTITION BY HASH (id);
DO $$
BEGIN
    FOR i IN 0..79 LOOP
        EXECUTE format('CREATE TABLE ds_many_%s PARTITION OF ds_many FOR VALUES WITH (MODULUS 80, REMAINDER %s)', i, i);
    END LOOP;
END $$;
INSERT INTO ds_many SELECT id, a FROM ds;
VACUUM ds_many;
SELECT count(*) AS partitions, bool_and(ds_evict(c.oid)) AS evicted
  FROM pg_class c WHERE c.relname LIKE 'ds\_many\_%';
SELECT count(*) FROM dio_plan('SELECT * FROM ds_many') p WHERE p LIKE '%DirectSeqScan%';
SELECT nodes, direct_blocks > 0 AS some_direct, io_fallback FROM dio_scan_stats('SELECT * FROM ds_many');
SELECT dio_compare('SELECT tableoid::regclass, * FROM ds_many');
DROP TABLE ds_many;
CREATE TABLE ds_parent (id int, a text) WITH (autovacuum_enabled = off);
CREATE TABLE ds_child () INHERITS (ds_parent) WITH (autovacuum_enabled = off);
INSERT INTO ds_parent SELECT id, a FROM ds WHERE id < 10000;
INSERT INTO ds_child SELECT id, a FROM ds WHERE id >= 10000;
VACUUM ds_parent, ds_child;
SELECT dio_plan('SELECT * FROM ds_parent');
SELECT dio_compare('SELECT tableoid::regclass, * FROM ds_parent');

-- a materialized view
CREATE MATERIALIZED VIEW ds_mv AS SELECT id, a FROM ds;
VACUUM ds_mv;
SELECT dio_compare('SELECT * FROM ds_mv', true);

-- rescans: a correlated subquery scans ds again for every outer row
CREATE TABLE ds_small AS SELECT g AS id FROM generate_series(1, 5) g;
SELECT dio_plan('SELECT s.id, (SELECT count(*) FROM ds WHERE ds.id % 5 = s.id - 1) FROM ds_small s');
SELECT ds_evict('ds') AS evicted;
SELECT dio_compare('SELECT s.id, (SELECT count(*) FROM ds WHERE ds.id % 5 = s.id - 1), (SELECT sum(id) FROM ds WHERE ds.id % 5 = s.id - 1 AND id > 30000) FROM ds_small s', true);

-- cursors: a scrollable one keeps core's Seq Scan (DirectSeqScan runs forward
-- only); NO SCROLL gets DirectSeqScan
BEGIN;
SELECT dio_plan('SELECT id FROM ds') LIMIT 1;
DECLARE cur SCROLL CURSOR FOR SELECT id FROM ds;
FETCH 3 FROM cur;
FETCH BACKWARD 2 FROM cur;
FETCH ABSOLUTE 1000 FROM cur;
FETCH BACKWARD 1 FROM cur;
MOVE LAST IN cur;
FETCH BACKWARD 2 FROM cur;
COMMIT;
EXPLAIN (COSTS OFF) DECLARE cur2 SCROLL CURSOR FOR SELECT id FROM ds;
EXPLAIN (COSTS OFF) DECLARE cur2 CURSOR FOR SELECT id FROM ds;
EXPLAIN (COSTS OFF) DECLARE cur2 NO SCROLL CURSOR FOR SELECT id FROM ds;

-- where it must not be used
SELECT dio_plan('SELECT * FROM ds FOR UPDATE');
SELECT dio_plan('SELECT * FROM ds FOR SHARE');
EXPLAIN (COSTS OFF) UPDATE ds_small SET id = ds_small.id FROM ds WHERE ds.id = ds_small.id;
EXPLAIN (COSTS OFF) DELETE FROM ds_small USING ds WHERE ds.id = ds_small.id;
EXPLAIN (COSTS OFF) MERGE INTO ds_small t USING ds s ON t.id = s.id
    WHEN MATCHED THEN UPDATE SET id = s.id;
EXPLAIN (COSTS OFF) INSERT INTO ds_small SELECT id FROM ds;
EXPLAIN (COSTS OFF) WITH u AS (UPDATE ds_small SET id = id RETURNING id) SELECT count(*) FROM ds, u;
CREATE TEMP TABLE ds_temp AS SELECT * FROM ds;
SELECT dio_plan('SELECT * FROM ds_temp');
SET pg_dio.enable_direct_scan = off;
SELECT dio_plan('SELECT * FROM ds');
RESET pg_dio.enable_direct_scan;
-- the settings a statement is planned under decide its plan, not those of a
-- statement planned while it is (a function folded to a constant, which
-- sets its own): the settings are read where core finishes planning
CREATE FUNCTION ds_nested_count() RETURNS bigint
LANGUAGE plpgsql IMMUTABLE SET pg_dio.enable_direct_scan = off AS $$
BEGIN
    RETURN (SELECT count(*) FROM ds_small);
END $$;
SELECT dio_plan('SELECT * FROM ds WHERE id > ds_nested_count()');
RESET pg_dio.direct_scan_threshold;		-- default: 2048 blocks (16 MB)
SELECT dio_plan('SELECT * FROM ds');
-- under a Limit, what counts is the part of the table the planner expects
-- the Limit to read: core's Seq Scan where it stops early, the whole table's
-- DirectSeqScan where it reads on to an OFFSET or finds few matches
SELECT set_config('pg_dio.direct_scan_threshold', (:ds_blocks / 4)::text, false) IS NOT NULL AS quarter_of_ds;
SELECT dio_plan('SELECT * FROM ds LIMIT 5');
SELECT dio_plan('SELECT * FROM ds OFFSET 30000 LIMIT 5');
SELECT dio_plan('SELECT * FROM ds WHERE id = 7 LIMIT 5');
SELECT dio_plan('SELECT count(*) FROM (SELECT id FROM ds LIMIT 35000) s');
SELECT dio_plan('SELECT count(*) FROM (SELECT id FROM ds LIMIT 5000) s');
SET pg_dio.direct_scan_threshold = 0;
SET enable_seqscan = off;				-- a disabled SeqScan stays disabled
EXPLAIN (COSTS OFF) SELECT * FROM ds;
RESET enable_seqscan;

-- SERIALIZABLE: core's relation predicate lock, every block buffered
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT nodes, direct_blocks, isolation = :ds_blocks AS all_isolation FROM dio_scan_stats('SELECT count(*) FROM ds');
SELECT locktype, mode, relation::regclass FROM pg_locks
 WHERE pid = pg_backend_pid() AND mode = 'SIReadLock' AND relation = 'ds'::regclass;
SELECT dio_compare('SELECT * FROM ds', true);
COMMIT;
-- (the rolled-back changes above cleared the all-visible bits of some blocks)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT ds_evict('ds') AS evicted;
SELECT nodes, direct_blocks > 0 AS direct, isolation, direct_blocks + not_all_visible = :ds_blocks AS accounted
  FROM dio_scan_stats('SELECT count(*) FROM ds');
COMMIT;

-- parallel
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT dio_plan('SELECT count(*), sum(id) FROM ds');
SELECT ds_evict('ds') AS evicted;
SELECT nodes, direct_blocks + buffered = :ds_blocks AS every_block_once, direct_blocks > 0 AS some_direct
  FROM dio_scan_stats('SELECT count(*) FROM ds');
-- EXPLAIN (VERBOSE) shows the workers' figures, which add up to the total
CREATE FUNCTION dio_explain_json(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || q INTO j;
    RETURN j;
END $$;
SELECT ds_evict('ds') AS evicted;
WITH n AS (
    SELECT n FROM jsonb_path_query(dio_explain_json('SELECT count(*) FROM ds'),
                                   'strict $.**?(@."Custom Plan Provider" == "DirectSeqScan")') n
)
SELECT (n->>'Direct Blocks')::bigint + (n->>'Buffered Blocks')::bigint = :ds_blocks AS total,
       (n->'Worker 0'->>'Direct Blocks')::bigint + (n->'Worker 0'->>'Buffered Blocks')::bigint +
       (n->'Worker 1'->>'Direct Blocks')::bigint + (n->'Worker 1'->>'Buffered Blocks')::bigint
           = :ds_blocks AS workers_add_up,
       (n->'Worker 0'->>'Direct Blocks')::bigint > 0 OR (n->'Worker 1'->>'Direct Blocks')::bigint > 0
           AS workers_read_directly
  FROM n;
-- inprogress: the average number of the scan's reads in flight when one was
-- submitted, itself included (1 .. pg_dio.queue_depth), per worker and
-- over all of them
SELECT ds_evict('ds') AS evicted;
WITH n AS (
    SELECT n FROM jsonb_path_query(dio_explain_json('SELECT count(*) FROM ds'),
                                   'strict $.**?(@."Custom Plan Provider" == "DirectSeqScan")') n
), w AS (
    SELECT (n->>'Direct Reads In Progress')::float8 AS total,
           ARRAY[n->'Worker 0', n->'Worker 1'] AS workers
      FROM n
)
SELECT total BETWEEN 1 AND current_setting('pg_dio.queue_depth')::int AS total_in_range,
       bool_and(CASE WHEN (wk->>'Direct Reads')::bigint > 0
                     THEN (wk->>'Direct Reads In Progress')::float8
                          BETWEEN 1 AND current_setting('pg_dio.queue_depth')::int
                     ELSE (wk->>'Direct Reads In Progress')::float8 = 0 END) AS workers_in_range,
       total BETWEEN min((wk->>'Direct Reads In Progress')::float8)
                          FILTER (WHERE (wk->>'Direct Reads')::bigint > 0)
                 AND max((wk->>'Direct Reads In Progress')::float8) AS total_is_average
  FROM w, unnest(workers) wk
 GROUP BY total;
-- the processes of a parallel scan share pg_dio.queue_depth (each keeping at
-- least 4): 16 shared by 2 workers (the leader not participating) is at most
-- 8 reads in flight each, by 3 processes (the leader taking part) 6 each; a
-- serial scan has all 16.  Seen while the reads are held in flight (delay
-- injection, 30 s): another session (dblink) runs a cold count(*) with
-- one-block reads; once each of its processes has its share in
-- pg_stat_aios (waited for up to 10 s) this session reads how many each
-- has, cancels the scan and sees all of its reads gone.
CREATE EXTENSION dblink;
CREATE FUNCTION ds_held(leader text, workers int, share int,
    OUT processes int, OUT in_flight int[], OUT canceled boolean, OUT drained boolean)
LANGUAGE plpgsql AS $$
DECLARE
    victim int;
    procs text;
    pids int[];
BEGIN
    PERFORM set_config('client_min_messages', 'warning', true);	-- dblink's NOTICE of the remote error
    PERFORM dblink_connect('held', self_conninfo());
    SELECT p INTO victim FROM dblink('held', 'SELECT pg_backend_pid()') AS t(p int);
    PERFORM dblink_exec('held', format(
        'SET pg_dio.direct_scan_threshold = 0; SET pg_dio.os_cache_check = off; '
        'SET pg_dio.queue_depth = 16; SET pg_dio.io_size = %L; '
        'SET pg_dio.inject_fault = delay; SET pg_dio.inject_delay = %L; '
        'SET max_parallel_workers_per_gather = %s; SET max_parallel_workers = 8; '
        'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; '
        'SET min_parallel_table_scan_size = 0; SET parallel_leader_participation = %s',
        current_setting('block_size')::int / 1024 || 'kB', '30s', workers, leader));
    PERFORM ds_evict('ds');
    PERFORM dblink_send_query('held', 'SELECT count(*) FROM ds');
    procs := format('SELECT pid FROM pg_stat_activity WHERE pid = %s OR leader_pid = %s', victim, victim);
    PERFORM wait_for(format(
        'SELECT count(*) = %s AND min(n) >= %s FROM (SELECT count(*) AS n FROM pg_stat_aios '
        'WHERE source = %L AND pid IN (%s) GROUP BY pid) s',
        CASE WHEN workers = 0 OR leader = 'on' THEN workers + 1 ELSE workers END, share, 'pg_dio', procs));
    EXECUTE format('SELECT array_agg(n ORDER BY n) FROM (SELECT count(*)::int AS n FROM pg_stat_aios '
                   'WHERE source = %L AND pid IN (%s) GROUP BY pid) s', 'pg_dio', procs)
       INTO in_flight;
    processes := coalesce(cardinality(in_flight), 0);
    EXECUTE format('SELECT array_agg(pid) FROM (%s) s', procs) INTO pids;
    PERFORM pg_cancel_backend(victim);
    PERFORM * FROM dblink_get_result('held', false) AS t(n bigint);
    canceled := dblink_error_message('held') LIKE '%canceling statement due to user request%';
    PERFORM * FROM dblink_get_result('held', false) AS t(n bigint);
    drained := wait_for(format('SELECT NOT EXISTS (SELECT FROM pg_stat_aios WHERE source = %L AND pid = ANY (%L::int[]))',
                               'pg_dio', pids));
    PERFORM dblink_disconnect('held');
END $$;
SELECT * FROM ds_held('off', 2, 8);
SELECT * FROM ds_held('on', 2, 6);
SELECT * FROM ds_held('off', 0, 16);
DROP FUNCTION ds_held;
DROP EXTENSION dblink;
SET parallel_leader_participation = off;
SET max_parallel_workers_per_gather = 0;
-- serial; and the text line (numbers masked)
SELECT ds_evict('ds') AS evicted;
SELECT (n->>'Direct Reads')::bigint > 0 AS read_directly,
       (n->>'Direct Reads In Progress')::float8
           BETWEEN 1 AND current_setting('pg_dio.queue_depth')::int AS in_range
  FROM jsonb_path_query(dio_explain_json('SELECT count(*) FROM ds'),
                        'strict $.**?(@."Custom Plan Provider" == "DirectSeqScan")') n;
CREATE FUNCTION dio_explain_direct_line(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, BUFFERS OFF) ' || q LOOP
        IF l LIKE '%Direct I/O:%' THEN
            RETURN NEXT regexp_replace(l, '\d+(\.\d+)?', 'N', 'g');
        END IF;
    END LOOP;
END $$;
SELECT ds_evict('ds') AS evicted;
SELECT dio_explain_direct_line('SELECT count(*) FROM ds');
DROP FUNCTION dio_explain_direct_line;
SET max_parallel_workers_per_gather = 2;
DROP FUNCTION dio_explain_json;
SELECT dio_compare('SELECT count(*), sum(id), sum(length(c)), count(a) FROM ds');
SELECT dio_compare('SELECT * FROM ds');
SELECT dio_compare('SELECT a, count(*) FROM ds GROUP BY a');
SELECT dio_compare('SELECT c, id FROM ds WHERE id % 3 = 0');	-- narrow scan tuples through Gather
RESET parallel_leader_participation;
SELECT dio_compare('SELECT * FROM ds');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- direct reads are in pg_stat_io and pg_stat_user_tables: in the context
-- core's heap scan of the table would count its reads in (bulkread where it
-- would read through a bulk-read ring: more than shared_buffers / 4)
SET max_parallel_workers_per_gather = 0;
SELECT CASE WHEN pg_relation_size('ds') / current_setting('block_size')::int >
                 (SELECT setting::bigint / 4 FROM pg_settings WHERE name = 'shared_buffers')
            THEN 'bulkread' ELSE 'normal' END AS io_context \gset
SELECT ds_evict('ds') AS evicted;
SELECT pg_stat_force_next_flush();
SELECT sum(reads) AS io_reads_before FROM pg_stat_io
 WHERE backend_type = 'client backend' AND object = 'relation' AND context = :'io_context' \gset
SELECT seq_scan AS seq_before, seq_tup_read AS tup_before FROM pg_stat_user_tables WHERE relname = 'ds' \gset
SELECT direct_reads AS reads FROM dio_scan_stats('SELECT count(*) FROM ds') \gset
SELECT pg_stat_force_next_flush();
SELECT :reads > 0 AS read_directly, sum(reads) - :io_reads_before >= :reads AS io_counted FROM pg_stat_io
 WHERE backend_type = 'client backend' AND object = 'relation' AND context = :'io_context';
SELECT seq_scan - :seq_before AS seq_scans, seq_tup_read - :tup_before = (SELECT count(*) FROM ds) AS tuples_counted
  FROM pg_stat_user_tables WHERE relname = 'ds';

-- faults during DirectSeqScan, serial and parallel: same rows, fallbacks counted
CREATE TABLE ds_f WITH (autovacuum_enabled = off) AS SELECT * FROM ds;
VACUUM (FREEZE) ds_f;
-- a bulk-loaded table ends in empty pages, which are not all-visible
SELECT ds_evict('ds_f') AS evicted;
SELECT direct_blocks AS f_blocks, not_all_visible AS f_empty FROM dio_scan_stats('SELECT * FROM ds_f') \gset
SELECT count(*) = :f_empty AS the_rest_not_all_visible
  FROM generate_series(:f_blocks, pg_relation_size('ds_f') / current_setting('block_size')::int - 1) b;
-- ds_fault evicts every buffer of ds_f, waiting for pinned ones (ds_evict
-- repeats the eviction): pg_buffercache_evict_relation skips a buffer someone
-- has pinned (the checkpointer or bgwriter writing it out), and the scan then
-- reads that block as resident, not as the fault would have it.  In a
-- parallel scan the blocks one process reads through the buffer manager
-- after a failed direct read can make another find their chunk in shared
-- buffers and read its own blocks of it as resident (which, depends on
-- timing; make test once showed eio, parallel: all_io_fallback f): there the
-- I/O fallbacks and the resident blocks together are the candidates.
CREATE FUNCTION ds_fault(fault text, parallel boolean,
    OUT direct bigint, OUT buffered_io bigint, OUT resident bigint, OUT parallel_nodes int,
    OUT compare text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('pg_dio.inject_fault', fault, true);
    PERFORM set_config('pg_dio.inject_delay', '1ms', true);
    PERFORM set_config('max_parallel_workers_per_gather', CASE WHEN parallel THEN '2' ELSE '0' END, true);
    PERFORM set_config('parallel_setup_cost', '0', true);
    PERFORM set_config('min_parallel_table_scan_size', '0', true);
    PERFORM ds_evict('ds_f');
    SELECT s.direct_blocks, s.io_fallback, s.resident, s.parallel_nodes
      INTO direct, buffered_io, resident, parallel_nodes
      FROM dio_scan_stats('SELECT count(*) FROM ds_f') s;
    PERFORM ds_evict('ds_f');
    compare := dio_compare('SELECT * FROM ds_f', NOT parallel);
END
$$;
SELECT f.fault, p.parallel, r.parallel_nodes, r.direct = :f_blocks AS all_direct,
       r.buffered_io > 0 AND r.buffered_io + r.resident = :f_blocks AS all_io_fallback,
       r.resident = 0 OR p.parallel AS resident_only_in_parallel, r.compare
  FROM (VALUES ('none'), ('eio'), ('short_read'), ('ring_setup'), ('odirect_einval'), ('delay')) f(fault),
       (VALUES (false), (true)) p(parallel),
       LATERAL ds_fault(f.fault, p.parallel) r
 ORDER BY p.parallel, f.fault;
SELECT reads_submitted = reads_completed AS all_reaped, reads_in_flight
  FROM pg_dio_backend_stats(pg_backend_pid());

-- chunks in the OS page cache go through the buffer manager
RESET pg_dio.os_cache_check;
SELECT count(*) FROM ds_f;			-- read through shared buffers, so the OS caches it
SELECT ds_evict('ds_f') AS evicted;
SELECT nodes, direct_blocks, os_cached = :f_blocks AS all_os_cached
  FROM dio_scan_stats('SELECT count(*) FROM ds_f');
SELECT dio_compare('SELECT * FROM ds_f', true);
SET pg_dio.os_cache_check = off;
SELECT ds_evict('ds_f') AS evicted;
SELECT nodes, direct_blocks = :f_blocks AS all_direct, os_cached
  FROM dio_scan_stats('SELECT count(*) FROM ds_f');

DROP FUNCTION ds_fault;
DROP TABLE ds_f, ds_fresh, ds_unlogged, ds_parted, ds_parent, ds_child, ds_small, ds_temp;
DROP MATERIALIZED VIEW ds_mv;
