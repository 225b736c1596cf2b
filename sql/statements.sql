--
-- statements: pg_stat_dio_statements, what pg_dio read for each statement.
-- A statement's figures equal its EXPLAIN ANALYZE's (parallel workers
-- included), and over a mixed workload the statements' sums equal the
-- change of the cluster counters.  Nothing else may use pg_dio meanwhile
-- (pg_regress runs these suites one at a time).
--
SET pg_dio.direct_scan_threshold = 0;	-- test tables are small
SET pg_dio.os_cache_check = off;		-- read directly what the OS caches too
SET pg_dio.index_prefetch_min_rows = 0;	-- index ranges in the table's order

CREATE TABLE st_t (g int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO st_t SELECT g, repeat(md5(g::text), 6) FROM generate_series(1, 60000) g;
CREATE INDEX st_t_g ON st_t (g);
VACUUM (FREEZE, ANALYZE) st_t;
SELECT pg_relation_size('st_t') / current_setting('block_size')::int AS st_blocks \gset

-- EXPLAIN ANALYZE (VERBOSE, FORMAT JSON) of q, with the settings
-- {name, value, ...} for the transaction: the figures of its pg_dio scan
-- (the first DirectSeqScan or PrefetchIndexScan node), its query ID and how
-- many workers its Gather launched.
CREATE FUNCTION st_explain(q text, settings text[] DEFAULT '{}',
    OUT queryid bigint, OUT workers int, OUT scan jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    FOR i IN 1 .. coalesce(array_length(settings, 1), 0) / 2 LOOP
        PERFORM set_config(settings[2 * i - 1], settings[2 * i], true);
    END LOOP;
    PERFORM set_config('compute_query_id', 'on', true);	-- not 'regress': show it
    EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q INTO j;
    queryid := (j -> 0 ->> 'Query Identifier')::bigint;
    workers := coalesce((jsonb_path_query_first(j, 'strict $.**."Workers Launched"'))::int, 0);
    scan := jsonb_path_query_first(j, 'strict $.** ? (@."Custom Plan Provider" == "DirectSeqScan" || @."Custom Plan Provider" == "PrefetchIndexScan")');
END
$$;

-- The entry of the statement EXPLAINed inside st_explain(): with
-- pg_dio.track = all it is nested (toplevel false) and holds exactly that
-- one execution.
CREATE FUNCTION st_entry(qid bigint) RETURNS pg_stat_dio_statements
LANGUAGE sql AS $$
    SELECT * FROM pg_stat_dio_statements WHERE queryid = qid AND NOT toplevel
$$;

-- An entry's blocks, direct and buffered.
CREATE FUNCTION st_blocks(e pg_stat_dio_statements) RETURNS bigint
LANGUAGE sql AS $$
    SELECT e.direct_blocks + e.buffered_resident + e.buffered_not_all_visible + e.buffered_isolation
           + e.buffered_verification + e.buffered_io_fallback + e.buffered_os_cached
$$;

-- ---------------------------------------------------------------------------
-- One statement's figures are its EXPLAIN's
-- ---------------------------------------------------------------------------
SET pg_dio.track = 'all';
SELECT pg_dio_statements_reset() IS NOT NULL AS reset;

-- DirectSeqScan, serial
SELECT 1 FROM pg_dio_evict('st_t');
CREATE TEMP TABLE st_x1 AS SELECT * FROM st_explain('SELECT count(pad) FROM st_t');
-- PrefetchIndexScan
SELECT 1 FROM pg_dio_evict('st_t');
CREATE TEMP TABLE st_x2 AS
    SELECT * FROM st_explain('SELECT sum(length(pad)) FROM st_t WHERE g BETWEEN 1000 AND 30000',
                             '{enable_seqscan, off, enable_bitmapscan, off, enable_indexonlyscan, off}');
-- DirectSeqScan in parallel workers only: the leader reads nothing itself
SELECT 1 FROM pg_dio_evict('st_t');
CREATE TEMP TABLE st_x3 AS
    SELECT * FROM st_explain('SELECT count(pad) FROM st_t WHERE g > 0',
                             '{max_parallel_workers_per_gather, 2, parallel_setup_cost, 0,
                               parallel_tuple_cost, 0, min_parallel_table_scan_size, 0,
                               parallel_leader_participation, off}');
SELECT pg_stat_force_next_flush();

SELECT x.scan ->> 'Custom Plan Provider' AS scan, x.workers,
       e.calls,
       e.direct_blocks = (x.scan ->> 'Direct Blocks')::bigint AS direct_blocks,
       e.direct_reads = (x.scan ->> 'Direct Reads')::bigint AS direct_reads,
       e.direct_read_bytes = (x.scan ->> 'Direct Read Bytes')::bigint AS direct_read_bytes,
       e.buffered_resident = (x.scan ->> 'Buffered Resident')::bigint
         AND e.buffered_not_all_visible = (x.scan ->> 'Buffered Not All-Visible')::bigint
         AND e.buffered_isolation = (x.scan ->> 'Buffered Isolation')::bigint
         AND e.buffered_verification = (x.scan ->> 'Buffered Verification')::bigint
         AND e.buffered_io_fallback = (x.scan ->> 'Buffered I/O Fallback')::bigint
         AND e.buffered_os_cached = (x.scan ->> 'Buffered OS-Cached')::bigint AS buffered,
       st_blocks(e) = :st_blocks AS every_block
  FROM (SELECT * FROM st_x1 UNION ALL SELECT * FROM st_x3) x, st_entry(x.queryid) e
 ORDER BY x.workers;

SELECT x.scan ->> 'Custom Plan Provider' AS scan,
       e.calls,
       e.prefetch_blocks_requested = (x.scan ->> 'Heap Blocks Requested')::bigint AS requested,
       e.prefetch_blocks_advised = (x.scan ->> 'Heap Blocks Advised')::bigint AS advised,
       e.prefetch_blocks_read = (x.scan ->> 'Heap Blocks Read')::bigint AS read,
       e.prefetch_blocks_os_cached = (x.scan ->> 'Heap Blocks OS-Cached')::bigint AS os_cached,
       e.prefetch_blocks_requested > 0 AS requested_some
  FROM st_x2 x, st_entry(x.queryid) e;

-- ---------------------------------------------------------------------------
-- pg_dio.track: top-level statements only, all, none
-- ---------------------------------------------------------------------------
CREATE FUNCTION st_count() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    SELECT count(pad) INTO n FROM st_t;
    RETURN n;
END
$$;
SELECT queryid AS st_qid FROM st_x1 \gset

-- st_count() three times: at 'top' its call is charged (with the reads of
-- the statement inside it), at 'all' the call and, in an entry of its own,
-- the statement inside, at 'none' nothing
SELECT pg_dio_statements_reset() IS NOT NULL AS reset;
SET pg_dio.track = 'top';
SELECT st_count();
SET pg_dio.track = 'all';
SELECT st_count();
SET pg_dio.track = 'none';
SELECT st_count();
RESET pg_dio.track;
SELECT pg_stat_force_next_flush();
SELECT toplevel, calls, st_blocks(s) = calls * :st_blocks AS every_block_each_call
  FROM pg_stat_dio_statements s
 WHERE queryid = :st_qid OR st_blocks(s) > 0
 ORDER BY toplevel;

-- What the planner runs (an IMMUTABLE function it folds) is nested in the
-- statement planned, which is charged its reads: not the inner statement
CREATE FUNCTION st_count_folded() RETURNS bigint
LANGUAGE sql IMMUTABLE AS 'SELECT count(pad) FROM st_t';
SELECT pg_dio_statements_reset() IS NOT NULL AS reset;
SELECT st_count_folded();
SELECT pg_stat_force_next_flush();
SELECT toplevel, calls, st_blocks(s) = :st_blocks AS every_block, queryid = :st_qid AS inner_statement
  FROM pg_stat_dio_statements s
 WHERE st_blocks(s) > 0;

-- ---------------------------------------------------------------------------
-- A mixed workload: the top-level statements' sums are the cluster's change
-- ---------------------------------------------------------------------------
SELECT pg_dio_statements_reset() IS NOT NULL AS reset;
CREATE TEMP TABLE st_c0 AS SELECT * FROM pg_dio_cluster_stats();

SELECT 1 FROM pg_dio_evict('st_t');
SELECT count(pad) FROM st_t;							-- serial DirectSeqScan
SELECT blocks = :st_blocks AS all_blocks FROM pg_dio_read('st_t');	-- the engine's tool
DO $$ BEGIN PERFORM st_count(); END $$;				-- nested in a utility statement
PREPARE st_p AS SELECT count(pad) FROM st_t WHERE g > $1;
EXECUTE st_p(10);										-- a prepared statement
BEGIN;
DECLARE st_cur CURSOR FOR SELECT g, length(pad) FROM st_t;	-- a cursor, in parts
MOVE 100 IN st_cur;
FETCH 2 FROM st_cur;
MOVE FORWARD ALL IN st_cur;
CLOSE st_cur;
COMMIT;
CREATE TEMP TABLE st_copy AS SELECT * FROM st_t;		-- CREATE TABLE AS
BEGIN;													-- in parallel
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT 1 FROM pg_dio_evict('st_t');
SELECT count(pad) FROM st_t WHERE g % 2 = 0;
COMMIT;
BEGIN;													-- PrefetchIndexScan
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexonlyscan = off;
SELECT 1 FROM pg_dio_evict('st_t');
SELECT sum(length(pad)) > 0 AS some FROM st_t WHERE g BETWEEN 5000 AND 25000;
COMMIT;
SELECT pg_stat_force_next_flush();

SELECT sum(s.direct_blocks) = max(c.blocks_direct) - max(c0.blocks_direct) AS direct_blocks,
       sum(s.direct_reads) = max(c.reads_completed) - max(c0.reads_completed) AS direct_reads,
       sum(s.direct_read_bytes) = max(c.bytes_read) - max(c0.bytes_read) AS direct_read_bytes,
       sum(s.fallback_io_error + s.fallback_no_uring + s.fallback_no_odirect + s.fallback_no_fd
           + s.fallback_verify + s.fallback_no_memory)
         = max(c.blocks_fallback) - max(c0.blocks_fallback) AS fallback_blocks,
       round(sum(s.wait_time_ms)::numeric, 3)
         = round((max(c.wait_time_ms) - max(c0.wait_time_ms))::numeric, 3) AS wait_time,
       sum(s.direct_blocks) + sum(s.fallback_io_error + s.fallback_no_uring + s.fallback_no_odirect
           + s.fallback_no_fd + s.fallback_verify + s.fallback_no_memory) > 0 AS read_some,
       sum(s.prefetch_blocks_requested) > 0 AS prefetched_some,
       bool_and(s.toplevel) AS all_toplevel
  FROM pg_stat_dio_statements s, pg_dio_cluster_stats() c, st_c0 c0;

-- ---------------------------------------------------------------------------
-- Bounded: over pg_dio.max_statements the least called entries go
-- ---------------------------------------------------------------------------
SELECT pg_dio_statements_reset() IS NOT NULL AS reset;
SELECT count(pad) FROM st_t WHERE g < 10;
SELECT count(pad) FROM st_t WHERE g < 10;
SELECT count(pad) FROM st_t WHERE g < 10;
SELECT pg_stat_force_next_flush();
SELECT queryid AS st_kept FROM pg_stat_dio_statements WHERE calls = 3 \gset
-- more distinct statements than the limit: each a different expression
-- tree (i / 100 unary minuses over a function call, i % 100 more columns)
SET pg_dio.track = 'all';
DO $$
BEGIN
    FOR i IN 1 .. current_setting('pg_dio.max_statements')::int + 50 LOOP
        EXECUTE 'SELECT ' || repeat('- ', i / 100) || 'abs(1)' || repeat(', 1', i % 100);
    END LOOP;
END
$$;
RESET pg_dio.track;
SELECT pg_stat_force_next_flush();
SELECT count(*) <= current_setting('pg_dio.max_statements')::int AS bounded,
       count(*) >= current_setting('pg_dio.max_statements')::int * 0.9 AS kept_most,
       count(*) FILTER (WHERE queryid = :st_kept AND calls = 3) AS most_called_kept
  FROM pg_stat_dio_statements;

-- the reset empties it
SELECT pg_dio_statements_reset() IS NOT NULL AS reset;
SELECT count(*) FILTER (WHERE calls > 1) AS left_over FROM pg_stat_dio_statements;

DROP FUNCTION st_explain(text, text[]), st_entry(bigint), st_count(), st_count_folded(), st_blocks(pg_stat_dio_statements);
DROP TABLE st_t;
