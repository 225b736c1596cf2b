--
-- os_cache: PrefetchIndexScan's advice (pg_dio.index_prefetch_advice: the
-- scan advises the heap blocks it will want and reads them itself, with
-- every io_method) has the kernel read those blocks into the OS page cache:
-- a scan stopped by a LIMIT leaves the blocks it advised but did not get to
-- there, and not in shared buffers.  That the advice reaches the kernel is
-- pg_dio's part; that the kernel acts on POSIX_FADV_WILLNEED is the
-- kernel's and the file system's.  So the suite first checks that they do
-- (pg_prewarm's 'prefetch' mode gives the same advice), and otherwise says
-- so and stops: expected/os_cache_1.out (no pg_prewarm), os_cache_2.out
-- (the kernel left pg_prewarm's advice unheeded).
--
SELECT NOT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'pg_prewarm') AS no_prewarm \gset
\if :no_prewarm
\echo 'skipped: needs the contrib module pg_prewarm, which this PostgreSQL does not have'
\quit
\endif
CREATE EXTENSION pg_prewarm;
CREATE TABLE oc (id int, v int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO oc SELECT (g * 7919) % 40009, g, repeat('b', 120) FROM generate_series(1, 40000) g;
CREATE INDEX oc_id ON oc (id);
VACUUM ANALYZE oc;
-- does the kernel act on POSIX_FADV_WILLNEED for this table's file?  64
-- blocks advised by pg_prewarm must be in the OS page cache (waited for up
-- to 10 s)
SELECT os_cached_blocks_after AS cached_after_eviction FROM pg_dio_evict('oc');
SELECT pg_prewarm('oc', 'prefetch', 'main', 100, 163) AS prefetched;
SELECT NOT wait_for('SELECT os_cache >= 64 FROM pg_dio_residency(''oc'') WHERE fork = ''main''')
    AS willneed_ignored \gset
\if :willneed_ignored
DROP TABLE oc;
DROP EXTENSION pg_prewarm;
\echo 'skipped: the kernel did not read the blocks pg_prewarm advised (POSIX_FADV_WILLNEED) into the OS page cache'
\quit
\endif

-- the scan's advice: a LIMIT stops it with blocks advised ahead that it did
-- not read; every block it advised is in the OS page cache (waited for up to
-- 10 s), and shared buffers have only those it read
SET jit = off;
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET effective_io_concurrency = 16;
SET pg_dio.index_direct_read = off;
SET pg_dio.index_prefetch_advice = on;
CREATE FUNCTION oc_scan(q text, OUT advised bigint, OUT read bigint)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
    SELECT sum((n->>'Heap Blocks Advised')::bigint), sum((n->>'Heap Blocks Read')::bigint)
      INTO advised, read
      FROM jsonb_path_query(j, 'strict $.**?(@."Custom Plan Provider" == "PrefetchIndexScan")') n;
END
$$;
SELECT os_cached_blocks_after AS cached_after_eviction FROM pg_dio_evict('oc');
SELECT advised AS oc_advised, read AS oc_read
  FROM oc_scan('SELECT * FROM oc WHERE id > 10 ORDER BY id LIMIT 300') \gset
SELECT :oc_advised > :oc_read AS advised_ahead,
       wait_for(format('SELECT os_cache >= %s FROM pg_dio_residency(%L) WHERE fork = %L',
                       :oc_advised, 'oc', 'main')) AS advised_in_os_cache,
       (SELECT shared_buffers <= :oc_read FROM pg_dio_residency('oc') WHERE fork = 'main')
           AS only_those_read_in_shared_buffers;

DROP FUNCTION oc_scan;
DROP TABLE oc;
DROP EXTENSION pg_prewarm;
