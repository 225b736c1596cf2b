--
-- hypertable: pg_dio beside TimescaleDB (test/extensions/timescaledb.sh).
-- Queries over a hypertable read cold through ChunkAppend and
-- ConstraintAwareAppend with pg_dio's scans below them, SkipScan keeps the
-- index scan it requires, and every query returns with pg_dio's scans on the
-- rows it returns with them off.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS timescaledb;
CREATE EXTENSION pg_dio;
RESET client_min_messages;
SET timezone = 'UTC';
SET max_parallel_workers_per_gather = 0;
SET pg_dio.direct_scan_threshold = 0;

CREATE TABLE m (time timestamptz NOT NULL, dev int NOT NULL, val float8);
SELECT count(*) FROM create_hypertable('m', 'time', chunk_time_interval => interval '1 day');
INSERT INTO m
SELECT t, d, d * 1000 + extract(epoch FROM t)::bigint % 997
FROM generate_series('2026-01-01'::timestamptz, '2026-01-10'::timestamptz - interval '1 minute',
                     interval '1 minute') t,
     generate_series(1, 20) d;
CREATE INDEX m_dev_time ON m (dev, time DESC);
VACUUM (FREEZE, ANALYZE) m;
SELECT count(*) AS chunks FROM show_chunks('m');

-- EXPLAIN's node lines (COSTS OFF)
CREATE FUNCTION ts_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF l ~ '^\s*(->\s+)?[A-Z]' AND l !~ '^\s*(Index Cond|Filter|Order By|Sort Key|Chunks excluded|Group Key|Hash Cond|Join Filter|Rows Removed|Recheck Cond):' THEN
            RETURN NEXT l;
        END IF;
    END LOOP;
END $$;

-- q's rows with pg_dio's scans on (as the session has them) and off: the
-- same, in the same order where 'ordered'?
CREATE FUNCTION ts_compare(q text, ordered boolean DEFAULT true) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    agg text := CASE WHEN ordered THEN 'array_agg(x::text)'
                     ELSE 'array_agg(x::text ORDER BY x::text)' END;
    r_on text[];
    r_off text[];
BEGIN
    EXECUTE format('SELECT %s FROM (%s) x', agg, q) INTO r_on;
    PERFORM set_config('pg_dio.enable_direct_scan', 'off', true);
    PERFORM set_config('pg_dio.enable_index_prefetch', 'off', true);
    EXECUTE format('SELECT %s FROM (%s) x', agg, q) INTO r_off;
    PERFORM set_config('pg_dio.enable_direct_scan', 'on', true);
    PERFORM set_config('pg_dio.enable_index_prefetch', 'on', true);
    IF r_on IS NOT DISTINCT FROM r_off THEN
        RETURN format('same, %s rows', coalesce(cardinality(r_on), 0));
    END IF;
    RETURN format('DIFFERENT: %s rows with pg_dio, %s rows core',
                  coalesce(cardinality(r_on), 0), coalesce(cardinality(r_off), 0));
END $$;

-- every chunk out of shared buffers and the OS page cache, then q run with
-- EXPLAIN ANALYZE: the blocks pg_dio's scans read directly and the heap
-- blocks PrefetchIndexScan asked for, summed over the plan's nodes
CREATE FUNCTION ts_cold(q text, OUT direct_blocks_read boolean, OUT prefetched_heap_blocks boolean)
LANGUAGE plpgsql AS $$
DECLARE
    p jsonb;
BEGIN
    PERFORM pg_dio_evict(c) FROM show_chunks('m') c;
    PERFORM pg_dio_evict(i.indexrelid)
    FROM show_chunks('m') c JOIN pg_index i ON i.indrelid = c;
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF) ' || q INTO p;
    SELECT coalesce(sum(v::bigint), 0) > 0 INTO direct_blocks_read
    FROM jsonb_path_query(p, 'strict $.**."Direct Blocks"') v;
    SELECT coalesce(sum(v::bigint), 0) > 0 INTO prefetched_heap_blocks
    FROM jsonb_path_query(p, 'strict $.**."Heap Blocks Requested"') v;
END $$;

-- a time range: ChunkAppend over DirectSeqScans
SELECT * FROM ts_plan($$SELECT count(*), sum(val) FROM m WHERE time >= '2026-01-03' AND time < now()$$);
SELECT * FROM ts_cold($$SELECT count(*), sum(val) FROM m WHERE time >= '2026-01-03' AND time < now()$$);
SELECT ts_compare($$SELECT count(*), sum(val) FROM m WHERE time >= '2026-01-03' AND time < now()$$);

-- the newest rows of one device: ChunkAppend over PrefetchIndexScans, in order
SELECT * FROM ts_plan($$SELECT time, val FROM m WHERE dev = 7 ORDER BY time DESC LIMIT 3000$$);
SELECT * FROM ts_cold($$SELECT time, val FROM m WHERE dev = 7 ORDER BY time DESC LIMIT 3000$$);
SELECT ts_compare($$SELECT time, val FROM m WHERE dev = 7 ORDER BY time DESC LIMIT 3000$$);

-- a parameter: chunks excluded at executor start-up, DirectSeqScans below
PREPARE q(timestamptz) AS SELECT dev, count(*), min(val) FROM m WHERE time > $1 GROUP BY dev ORDER BY dev;
SET plan_cache_mode = force_generic_plan;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
SELECT * FROM ts_plan('EXECUTE q(''2026-01-08'')');
EXECUTE q('2026-01-08');
-- the same rows from core's plan (a plan planned with pg_dio's scans off)
SET pg_dio.enable_direct_scan = off;
PREPARE q_core(timestamptz) AS SELECT dev, count(*), min(val) FROM m WHERE time > $1 GROUP BY dev ORDER BY dev;
SELECT * FROM ts_plan('EXECUTE q_core(''2026-01-08'')');
EXECUTE q_core('2026-01-08');
RESET pg_dio.enable_direct_scan;
RESET enable_bitmapscan;
RESET enable_indexscan;
RESET plan_cache_mode;
DEALLOCATE q;
DEALLOCATE q_core;

-- ConstraintAwareAppend (ChunkAppend off)
SET timescaledb.enable_chunk_append = off;
SELECT * FROM ts_plan($$SELECT count(*), sum(val) FROM m WHERE time >= '2026-01-03' AND time < now()$$);
SELECT * FROM ts_cold($$SELECT count(*), sum(val) FROM m WHERE time >= '2026-01-03' AND time < now()$$);
SELECT ts_compare($$SELECT count(*), sum(val) FROM m WHERE time >= '2026-01-03' AND time < now()$$);
RESET timescaledb.enable_chunk_append;

-- SkipScan keeps its index scan (pg_dio does not enter it): the query that
-- stopped with "unknown subscan type in SkipScan" when it did
SELECT * FROM ts_plan($$SELECT DISTINCT ON (dev) dev, time, val FROM m ORDER BY dev, time DESC$$);
SELECT ts_compare($$SELECT DISTINCT ON (dev) dev, time, val FROM m ORDER BY dev, time DESC$$);
SELECT * FROM ts_plan($$SELECT DISTINCT dev FROM m WHERE time > '2026-01-05' ORDER BY dev$$);
SELECT ts_compare($$SELECT DISTINCT dev FROM m WHERE time > '2026-01-05' ORDER BY dev$$);

-- a join of the hypertable with a plain table, and the whole table
CREATE TABLE devs AS SELECT d AS dev, 'dev ' || d AS name FROM generate_series(1, 20) d;
ANALYZE devs;
SELECT ts_compare($$SELECT d.name, count(*), max(m.val) FROM m JOIN devs d USING (dev)
                    WHERE m.time < '2026-01-02 12:00' GROUP BY d.name ORDER BY d.name$$);
SELECT ts_compare($$SELECT * FROM m$$, false);

DROP TABLE m, devs;
DROP FUNCTION ts_plan, ts_compare, ts_cold;
