--
-- checksums: pages that fail verification are read again through the buffer
-- manager, which finds them intact, and the fallback is counted -- for
-- pg_dio_read, DirectSeqScan (serial and parallel) and PrefetchIndexScan's
-- direct heap reads.  pg_dio.inject_fault = 'corrupt' damages the stored
-- checksum of every page read directly, which only a data checksum catches:
-- on a cluster without data checksums the suite says so and stops
-- (expected/checksums_1.out).
--
SELECT current_setting('data_checksums') = 'off' AS no_checksums \gset
\if :no_checksums
\echo 'skipped: data checksums are off in this cluster (initdb --data-checksums, or pg_checksums --enable)'
\quit
\endif
SET max_parallel_workers_per_gather = 0;
SET pg_dio.direct_scan_threshold = 0;
SET pg_dio.os_cache_check = off;
-- the index scans read a table in its order: planned whatever their share
SET pg_dio.index_prefetch_min_rows = 0;
-- the pages on disk, as written (a corrupted copy of a never-written, zeroed
-- page would fail verification without failing its checksum)
CHECKPOINT;

-- pg_dio_read: every block read again, each counted as a checksum failure
SELECT pg_relation_size('dio_t') / current_setting('block_size')::int AS nblocks \gset
SELECT setting::int * 1024 / current_setting('block_size')::int AS per_read
  FROM pg_settings WHERE name = 'pg_dio.io_size' \gset
CREATE TEMP TABLE s0 AS SELECT * FROM pg_dio_backend_stats(pg_backend_pid());
SET pg_dio.inject_fault = 'corrupt';
SELECT blocks = :nblocks AS all_blocks, reads = ceil(:nblocks / :per_read::numeric) AS all_read, direct_blocks,
       fallback_reasons = jsonb_build_object('verify', :nblocks) AS reason,
       checksum_failures = :nblocks AS checksums_caught
  FROM pg_dio_read('dio_t');
RESET pg_dio.inject_fault;
SELECT a.fallback_verify - b.fallback_verify = :nblocks AS verify,
       a.blocks_fallback - b.blocks_fallback = :nblocks AS total,
       a.reads_submitted = a.reads_completed AS all_reaped,
       a.reads_in_flight
  FROM pg_dio_backend_stats(pg_backend_pid()) a, s0 b;

-- DirectSeqScan, serial and parallel: every block it reads directly (cold,
-- all-visible; a bulk-loaded table ends in empty pages, which are not) is
-- read again through the buffer manager, the same rows as core's
CREATE TABLE cs_t WITH (autovacuum_enabled = off) AS SELECT * FROM dio_t;
VACUUM (FREEZE) cs_t;
CHECKPOINT;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('cs_t');
SELECT direct_blocks AS cs_direct FROM dio_scan_stats('SELECT count(*) FROM cs_t') \gset
SELECT :cs_direct > 0 AS some_direct;
CREATE FUNCTION cs_scan(parallel boolean,
    OUT direct bigint, OUT verification bigint, OUT resident bigint, OUT parallel_nodes int,
    OUT compare text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('pg_dio.inject_fault', 'corrupt', true);
    PERFORM set_config('max_parallel_workers_per_gather', CASE WHEN parallel THEN '2' ELSE '0' END, true);
    PERFORM set_config('parallel_setup_cost', '0', true);
    PERFORM set_config('min_parallel_table_scan_size', '0', true);
    PERFORM wait_for('SELECT buffers_skipped = 0 FROM pg_dio_evict(''cs_t'')');
    SELECT s.direct_blocks, s.verification, s.resident, s.parallel_nodes
      INTO direct, verification, resident, parallel_nodes
      FROM dio_scan_stats('SELECT count(*) FROM cs_t') s;
    PERFORM wait_for('SELECT buffers_skipped = 0 FROM pg_dio_evict(''cs_t'')');
    compare := dio_compare('SELECT * FROM cs_t', NOT parallel);
END
$$;
SELECT parallel_nodes, direct, verification = :cs_direct AS all_verify_fallback, compare
  FROM cs_scan(false);
-- (in a parallel scan, the blocks one process reads again through the buffer
-- manager can make another find their chunk in shared buffers, and read its
-- own blocks of that chunk as resident: which it is depends on timing)
SELECT parallel_nodes, direct, verification > 0 AS verify_fallback,
       verification + resident = :cs_direct AS the_rest_resident, compare
  FROM cs_scan(true);
DROP FUNCTION cs_scan;

-- PrefetchIndexScan's direct heap reads (pg_dio.index_direct_read): the
-- blocks read directly are read through the buffer manager instead
CREATE TABLE cs_idx (id int, v int) WITH (autovacuum_enabled = off);
INSERT INTO cs_idx SELECT g, g FROM generate_series(1, 100000) g;
CREATE INDEX cs_idx_id ON cs_idx (id);
VACUUM (FREEZE, ANALYZE) cs_idx;
CHECKPOINT;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET effective_io_concurrency = 16;
SET pg_dio.queue_depth = 32;
SET pg_dio.index_direct_read = on;
-- the heap blocks the index scan read directly and those it read through
-- the buffer manager after a failed direct read; the rows, with pg_dio's
-- scans on and off
CREATE FUNCTION cs_index(q text, OUT direct bigint, OUT direct_fallback bigint, OUT same_rows boolean)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
    r_on text[];
    r_off text[];
BEGIN
    PERFORM pg_dio_evict('cs_idx');
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
    SELECT sum((n->>'Heap Blocks Direct')::bigint), sum((n->>'Heap Blocks Direct Fallback')::bigint)
      INTO direct, direct_fallback
      FROM jsonb_path_query(j, 'strict $.**?(@."Custom Plan Provider" == "PrefetchIndexScan")') n;
    PERFORM pg_dio_evict('cs_idx');
    EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', q) INTO r_on;
    PERFORM set_config('pg_dio.enable_index_prefetch', 'off', true);
    EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', q) INTO r_off;
    PERFORM set_config('pg_dio.enable_index_prefetch', 'on', true);
    same_rows := r_on IS NOT DISTINCT FROM r_off AND cardinality(r_on) > 0;
END
$$;
SELECT direct > 100 AS read_directly, direct_fallback FROM cs_index('SELECT * FROM cs_idx WHERE id <= 100000');
SET pg_dio.inject_fault = 'corrupt';
SELECT direct, direct_fallback > 100 AS fell_back, same_rows
  FROM cs_index('SELECT * FROM cs_idx WHERE id <= 100000');
RESET pg_dio.inject_fault;

DROP FUNCTION cs_index;
DROP TABLE cs_t, cs_idx;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET effective_io_concurrency;
RESET pg_dio.queue_depth;
RESET pg_dio.index_direct_read;
RESET pg_dio.os_cache_check;
RESET pg_dio.direct_scan_threshold;
RESET max_parallel_workers_per_gather;
