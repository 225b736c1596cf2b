-- pg_dio_read: its result, the per-backend counters it moves, the settings
-- that shape its reads, the relations it accepts and the injected faults.
--
-- Counters are compared as differences between snapshots taken around each
-- read (pg_dio_backend_stats and pg_dio_histogram for this backend).
BEGIN;
SELECT plan(88);
-- The reads are counted in 256kB runs (32 blocks), up to 32 in flight: set
-- here, not the defaults (1MB, 16), so that the table needs many of them.
SET LOCAL pg_dio.io_size = '256kB';
SET LOCAL pg_dio.queue_depth = 32;

CREATE TABLE dio_rd AS
    SELECT g, repeat('r', 300) AS pad FROM generate_series(1, 12000) g;
CREATE INDEX dio_rd_idx ON dio_rd (g);
CREATE VIEW dio_rd_v AS SELECT * FROM dio_rd;
CREATE SEQUENCE dio_rd_seq;
CREATE TABLE dio_rd_parted (g int) PARTITION BY RANGE (g);
CREATE MATERIALIZED VIEW dio_rd_mv AS SELECT * FROM dio_rd WHERE g <= 3000;
CREATE UNLOGGED TABLE dio_rd_unlogged AS SELECT * FROM dio_rd WHERE g <= 3000;
CREATE TABLE dio_rd_toasty (t text);
ALTER TABLE dio_rd_toasty ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO dio_rd_toasty
    SELECT string_agg(md5(i::text || '/' || j::text), '')
      FROM generate_series(1, 20) i, generate_series(1, 200) j GROUP BY i;
CREATE TEMP TABLE dio_rd_temp AS SELECT * FROM dio_rd WHERE g <= 100;
-- Write the pages out, so that the direct reads read the rows rather than
-- the space the new files were extended with.
CHECKPOINT;

CREATE TEMP VIEW dio_rd_blocks AS
    SELECT pg_relation_size('dio_rd') / 8192 AS n;

-- This backend's counters and histogram buckets as one jsonb object.
CREATE FUNCTION pg_temp.dio_now() RETURNS jsonb LANGUAGE sql AS $$
    SELECT coalesce((SELECT to_jsonb(s) - 'pid' - 'backend_type'
                       FROM pg_dio_backend_stats(pg_backend_pid()) s), '{}')
        || coalesce((SELECT jsonb_object_agg(kind || '_' || bucket, count)
                       FROM pg_dio_histogram(pg_backend_pid())), '{}')
        || coalesce((SELECT jsonb_object_agg(kind || '_total', n)
                       FROM (SELECT kind, sum(count) AS n
                               FROM pg_dio_histogram(pg_backend_pid())
                              GROUP BY kind) h), '{}')
$$;
CREATE TEMP TABLE dio_snap (label text PRIMARY KEY, c jsonb);
-- What changed since snapshot 'label'.
CREATE FUNCTION pg_temp.dio_delta(label text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_object_agg(n.k, n.v::numeric - coalesce((b.c ->> n.k)::numeric, 0))
      FROM jsonb_each_text(pg_temp.dio_now()) AS n(k, v), dio_snap b
     WHERE b.label = $1 AND n.v IS NOT NULL
$$;

SELECT cmp_ok((SELECT n FROM dio_rd_blocks), '>', 32 * 8::bigint,
    '(the test table needs more than 8 reads of 256kB)');

-- ===========================================================================
-- A plain read with the default settings
-- ===========================================================================
INSERT INTO dio_snap VALUES ('default', pg_temp.dio_now());
CREATE TEMP TABLE r AS SELECT * FROM pg_dio_read('dio_rd');
CREATE TEMP TABLE d AS SELECT pg_temp.dio_delta('default') AS d;

SELECT is((SELECT blocks FROM r), (SELECT n FROM dio_rd_blocks), 'blocks: the fork''s size in blocks');
SELECT is((SELECT bytes FROM r), pg_relation_size('dio_rd'), 'bytes: the fork''s size');
SELECT is((SELECT direct_blocks FROM r), (SELECT n FROM dio_rd_blocks), 'every block was read directly');
SELECT is((SELECT fallback_blocks FROM r), 0::bigint, 'no block fell back to the buffer manager');
SELECT is((SELECT fallback_reasons FROM r), '{}'::jsonb, 'fallback_reasons is empty');
SELECT is((SELECT checksum_failures FROM r), 0::bigint, 'no checksum failure');
SELECT is((SELECT reads FROM r), (SELECT ceil(n / 32.0)::bigint FROM dio_rd_blocks),
    'reads: one per 256kB (pg_dio.io_size) run');
SELECT is((SELECT avg_read_bytes FROM r), (SELECT bytes / reads FROM r), 'avg_read_bytes = bytes / reads');
SELECT ok((SELECT elapsed_ms > 0 AND mb_per_s > 0 FROM r), 'elapsed_ms and mb_per_s are positive');
SELECT ok((SELECT abs(mb_per_s - (bytes / 1048576.0) / (elapsed_ms / 1000.0)) < 1e-6 * mb_per_s FROM r),
    'mb_per_s = MiB read / seconds elapsed');

SELECT is((SELECT (d ->> 'reads_submitted')::bigint FROM d), (SELECT reads FROM r),
    'counters: reads_submitted grew by the reads made');
SELECT is((SELECT (d ->> 'reads_completed')::bigint FROM d), (SELECT reads FROM r),
    'counters: reads_completed grew by the reads made');
SELECT is((SELECT (d ->> 'bytes_read')::bigint FROM d), (SELECT bytes FROM r),
    'counters: bytes_read grew by the bytes read');
SELECT is((SELECT (d ->> 'blocks_direct')::bigint FROM d), (SELECT direct_blocks FROM r),
    'counters: blocks_direct grew by the blocks read directly');
SELECT is((SELECT (d ->> 'blocks_fallback')::bigint + (d ->> 'fallback_io_error')::bigint
                + (d ->> 'fallback_no_uring')::bigint + (d ->> 'fallback_no_odirect')::bigint
                + (d ->> 'fallback_no_fd')::bigint + (d ->> 'fallback_verify')::bigint
                + (d ->> 'errors')::bigint + (d ->> 'short_reads')::bigint FROM d),
          0::bigint, 'counters: no fallback, error or short read');
SELECT ok((SELECT (d ->> 'submit_calls')::bigint BETWEEN 1 AND (SELECT reads FROM r) FROM d),
    'counters: between 1 submit call and one per read');
SELECT ok((SELECT (d ->> 'wait_calls')::bigint >= 1 AND (d ->> 'wait_time_ms')::float8 >= 0 FROM d),
    'counters: the backend waited for completions');
SELECT is((pg_temp.dio_now() ->> 'reads_in_flight')::int, 0, 'counters: nothing left in flight');
-- (this is the session's first pg_dio_read: max_inflight started at 0)
SELECT is((pg_temp.dio_now() ->> 'max_inflight')::bigint, (SELECT least(32, reads) FROM r),
    'counters: max_inflight = all reads at once, up to pg_dio.queue_depth');
SELECT is((SELECT (d ->> 'latency_total')::bigint FROM d), (SELECT reads FROM r),
    'histogram: one latency sample per read');
SELECT is((SELECT (d ->> 'size_total')::bigint FROM d), (SELECT reads FROM r),
    'histogram: one size sample per read');
SELECT is((SELECT (d ->> 'size_5')::bigint FROM d), (SELECT n / 32 FROM dio_rd_blocks),
    'histogram: the full 256kB reads are in the [256kB, 512kB) bucket');
SELECT is((SELECT (d ->> 'bytes_requested')::bigint FROM d), (SELECT bytes FROM r),
    'counters: bytes_requested (the size histogram''s sum) grew by the bytes of the reads');
SELECT ok((SELECT sum((d ->> ('latency_' || h.bucket))::numeric * h.lower_bound)
                  <= (d ->> 'read_latency_ms')::numeric * 1000
              AND (d ->> 'read_latency_ms')::numeric * 1000
                  < sum((d ->> ('latency_' || h.bucket))::numeric * h.upper_bound)
             FROM d, (SELECT DISTINCT bucket, lower_bound, upper_bound
                        FROM pg_dio_histogram(pg_backend_pid())
                       WHERE kind = 'latency' AND upper_bound IS NOT NULL) h
            GROUP BY d.d),
    'counters: read_latency_ms (the latency histogram''s sum) lies within the bounds of the reads'' buckets');

-- ===========================================================================
-- Settings: pg_dio.io_size and pg_dio.queue_depth shape the reads
-- ===========================================================================
SET LOCAL pg_dio.io_size = '1MB';
INSERT INTO dio_snap VALUES ('1MB', pg_temp.dio_now());
CREATE TEMP TABLE r1m AS SELECT * FROM pg_dio_read('dio_rd');
SELECT is((SELECT reads FROM r1m), (SELECT ceil(n / 128.0)::bigint FROM dio_rd_blocks),
    'io_size 1MB: one read per 128 blocks');
SELECT is((SELECT direct_blocks FROM r1m), (SELECT n FROM dio_rd_blocks), 'io_size 1MB: every block read directly');
SELECT is((pg_temp.dio_delta('1MB') ->> 'size_7')::bigint, (SELECT n / 128 FROM dio_rd_blocks),
    'io_size 1MB: the full 1MB reads are in the last, open-ended size bucket');

SET LOCAL pg_dio.io_size = '8kB';
SET LOCAL pg_dio.queue_depth = 128;
INSERT INTO dio_snap VALUES ('8kB', pg_temp.dio_now());
CREATE TEMP TABLE r8k AS SELECT * FROM pg_dio_read('dio_rd');
SELECT is((SELECT reads FROM r8k), (SELECT n FROM dio_rd_blocks), 'io_size 8kB: one read per block');
SELECT is((SELECT avg_read_bytes FROM r8k), 8192::bigint, 'io_size 8kB: avg_read_bytes is 8kB');
SELECT is((SELECT direct_blocks FROM r8k), (SELECT n FROM dio_rd_blocks), 'io_size 8kB: every block read directly');
SELECT is((pg_temp.dio_delta('8kB') ->> 'size_0')::bigint, (SELECT n FROM dio_rd_blocks),
    'io_size 8kB: all reads are in the first size bucket');
SELECT is((pg_temp.dio_now() ->> 'max_inflight')::bigint, 128::bigint,
    'queue_depth 128: up to 128 reads in flight at once');
SELECT is((pg_temp.dio_now() ->> 'reads_in_flight')::int, 0, 'queue_depth 128: nothing left in flight');
SET LOCAL pg_dio.io_size = '256kB';
SET LOCAL pg_dio.queue_depth = 32;

SET LOCAL pg_dio.queue_depth = 1;
CREATE TEMP TABLE rq1 AS SELECT * FROM pg_dio_read('dio_rd');
SELECT results_eq('SELECT blocks, direct_blocks, reads FROM rq1',
    'SELECT blocks, direct_blocks, reads FROM r',
    'queue_depth 1: the same read, one request at a time');
SET LOCAL pg_dio.queue_depth = 32;

-- ===========================================================================
-- Relations and forks
-- ===========================================================================
SELECT results_eq(
    $$SELECT blocks, direct_blocks FROM pg_dio_read('dio_rd_mv')$$,
    $$SELECT pg_relation_size('dio_rd_mv') / 8192, pg_relation_size('dio_rd_mv') / 8192$$,
    'a materialized view is read directly');
SELECT results_eq(
    $$SELECT blocks, direct_blocks FROM pg_dio_read('dio_rd_unlogged')$$,
    $$SELECT pg_relation_size('dio_rd_unlogged') / 8192, pg_relation_size('dio_rd_unlogged') / 8192$$,
    'an unlogged table is read directly');
SELECT results_eq(
    $$SELECT blocks, reads, avg_read_bytes IS NULL FROM pg_dio_read('dio_rd_unlogged', 'init')$$,
    $$VALUES (0::bigint, 0::bigint, true)$$,
    'the empty init fork of an unlogged table: no blocks, no reads, no average');
SELECT cmp_ok(pg_relation_size((SELECT reltoastrelid FROM pg_class WHERE oid = 'dio_rd_toasty'::regclass)),
    '>', 0::bigint, '(the TOAST table has blocks)');
SELECT results_eq(
    $$SELECT blocks, direct_blocks
        FROM pg_dio_read((SELECT reltoastrelid FROM pg_class WHERE oid = 'dio_rd_toasty'::regclass))$$,
    $$SELECT pg_relation_size(reltoastrelid) / 8192, pg_relation_size(reltoastrelid) / 8192
        FROM pg_class WHERE oid = 'dio_rd_toasty'::regclass$$,
    'a TOAST table is read directly');
SELECT results_eq(
    $$SELECT blocks, direct_blocks + fallback_blocks FROM pg_dio_read('pg_class')$$,
    $$SELECT pg_relation_size('pg_class') / 8192, pg_relation_size('pg_class') / 8192$$,
    'a mapped catalog (pg_class) is read in full');
SELECT results_eq(
    $$SELECT blocks, direct_blocks + fallback_blocks FROM pg_dio_read('pg_class', 'fsm')$$,
    $$SELECT pg_relation_size('pg_class', 'fsm') / 8192, pg_relation_size('pg_class', 'fsm') / 8192$$,
    'the fsm fork is read in full');
SELECT results_eq(
    $$SELECT blocks, direct_blocks + fallback_blocks FROM pg_dio_read('pg_class', 'vm')$$,
    $$SELECT pg_relation_size('pg_class', 'vm') / 8192, pg_relation_size('pg_class', 'vm') / 8192$$,
    'the vm fork is read in full');
SELECT cmp_ok(pg_relation_size('pg_class', 'fsm'), '>', 0::bigint, '(pg_class has an fsm fork)');
SELECT results_eq(
    $$SELECT blocks, reads FROM pg_dio_read('dio_rd', 'fsm')$$,
    $$VALUES (0::bigint, 0::bigint)$$,
    'a fork that does not exist has no blocks');
SELECT results_eq(
    $$SELECT blocks, direct_blocks FROM pg_dio_read('pg_database')$$,
    $$SELECT pg_relation_size('pg_database') / 8192, pg_relation_size('pg_database') / 8192$$,
    'a shared catalog (pg_database) is read directly');

-- ===========================================================================
-- What it refuses
-- ===========================================================================
SELECT throws_ok($$SELECT * FROM pg_dio_read(NULL)$$, '22004', 'relation must not be NULL',
    'NULL relation');
SELECT throws_ok($$SELECT * FROM pg_dio_read('dio_rd', NULL)$$, '22004', 'fork must not be NULL',
    'NULL fork');
SELECT throws_ok($$SELECT * FROM pg_dio_read('dio_rd', 'bogus')$$, '22023', 'invalid fork name',
    'unknown fork name');
SELECT throws_ok($$SELECT * FROM pg_dio_read(0)$$, '42P01', 'relation with OID 0 does not exist',
    'relation that does not exist');
SELECT throws_ok($$SELECT * FROM pg_dio_read('dio_rd_idx')$$, '42809', 'pg_dio_read() does not support relation "dio_rd_idx"',
    'an index is refused');
SELECT throws_ok($$SELECT * FROM pg_dio_read('dio_rd_v')$$, '42809', 'pg_dio_read() does not support relation "dio_rd_v"',
    'a view is refused');
SELECT throws_ok($$SELECT * FROM pg_dio_read('dio_rd_seq')$$, '42809', 'pg_dio_read() does not support relation "dio_rd_seq"',
    'a sequence is refused');
SELECT throws_ok($$SELECT * FROM pg_dio_read('dio_rd_parted')$$, '42809', 'pg_dio_read() does not support relation "dio_rd_parted"',
    'a partitioned table is refused');
SELECT throws_ok($$SELECT * FROM pg_dio_read('dio_rd_temp')$$, '0A000',
    'pg_dio_read() does not support temporary relation "dio_rd_temp"', 'a temporary table is refused');

-- ===========================================================================
-- Injected faults: blocks fall back to the buffer manager, with the reason
-- ===========================================================================
SET LOCAL pg_dio.inject_fault = 'eio';
INSERT INTO dio_snap VALUES ('eio', pg_temp.dio_now());
CREATE TEMP TABLE r_eio AS SELECT * FROM pg_dio_read('dio_rd');
CREATE TEMP TABLE d_eio AS SELECT pg_temp.dio_delta('eio') AS d;
SELECT results_eq('SELECT blocks, direct_blocks, fallback_blocks, fallback_reasons, reads FROM r_eio',
    $$SELECT n, 0::bigint, n, jsonb_build_object('io_error', n), ceil(n / 32.0)::bigint FROM dio_rd_blocks$$,
    'eio: every read was issued, failed, and its blocks read through the buffer manager');
SELECT is((SELECT (d ->> 'errors')::bigint FROM d_eio), (SELECT reads FROM r_eio), 'eio: one error per read');
SELECT is((SELECT (d ->> 'fallback_io_error')::bigint FROM d_eio), (SELECT n FROM dio_rd_blocks),
    'eio: fallback_io_error counts the blocks');
SELECT is((SELECT (d ->> 'blocks_fallback')::bigint FROM d_eio), (SELECT n FROM dio_rd_blocks),
    'eio: blocks_fallback counts the blocks');
SELECT is((SELECT (d ->> 'blocks_direct')::bigint FROM d_eio), 0::bigint, 'eio: no block counted as direct');
SELECT is((SELECT (d ->> 'reads_completed')::bigint FROM d_eio), (SELECT reads FROM r_eio),
    'eio: failed reads still complete');

SET LOCAL pg_dio.inject_fault = 'ring_setup';
INSERT INTO dio_snap VALUES ('ring', pg_temp.dio_now());
CREATE TEMP TABLE r_ring AS SELECT * FROM pg_dio_read('dio_rd');
SELECT results_eq('SELECT blocks, direct_blocks, fallback_blocks, fallback_reasons, reads, avg_read_bytes IS NULL FROM r_ring',
    $$SELECT n, 0::bigint, n, jsonb_build_object('no_uring', n), 0::bigint, true FROM dio_rd_blocks$$,
    'ring_setup: nothing issued, every block read through the buffer manager');
SELECT results_eq($$SELECT (d ->> 'fallback_no_uring')::bigint, (d ->> 'reads_submitted')::bigint
                      FROM (SELECT pg_temp.dio_delta('ring') AS d) x$$,
    $$SELECT n, 0::bigint FROM dio_rd_blocks$$,
    'ring_setup: counted as no_uring, no read submitted');

SET LOCAL pg_dio.inject_fault = 'odirect_einval';
INSERT INTO dio_snap VALUES ('odirect', pg_temp.dio_now());
CREATE TEMP TABLE r_odirect AS SELECT * FROM pg_dio_read('dio_rd');
SELECT results_eq('SELECT blocks, direct_blocks, fallback_blocks, fallback_reasons, reads FROM r_odirect',
    $$SELECT n, 0::bigint, n, jsonb_build_object('no_odirect', n), 0::bigint FROM dio_rd_blocks$$,
    'odirect_einval: nothing issued, every block read through the buffer manager');
SELECT results_eq($$SELECT (d ->> 'fallback_no_odirect')::bigint, (d ->> 'reads_submitted')::bigint
                      FROM (SELECT pg_temp.dio_delta('odirect') AS d) x$$,
    $$SELECT n, 0::bigint FROM dio_rd_blocks$$,
    'odirect_einval: counted as no_odirect, no read submitted');

SET LOCAL pg_dio.inject_fault = 'short_read';
INSERT INTO dio_snap VALUES ('short', pg_temp.dio_now());
CREATE TEMP TABLE r_short AS SELECT * FROM pg_dio_read('dio_rd');
CREATE TEMP TABLE d_short AS SELECT pg_temp.dio_delta('short') AS d;
SELECT results_eq('SELECT blocks, direct_blocks, fallback_blocks, fallback_reasons, reads FROM r_short',
    $$SELECT n, n, 0::bigint, '{}'::jsonb, ceil(n / 32.0)::bigint FROM dio_rd_blocks$$,
    'short_read: the rest of each read is read again, every block directly');
SELECT is((SELECT (d ->> 'short_reads')::bigint FROM d_short), (SELECT reads FROM r_short),
    'short_read: one short read per read');
SELECT is((SELECT (d ->> 'reads_submitted')::bigint FROM d_short), (SELECT reads FROM r_short),
    'short_read: a resubmission is not a new read');
SELECT is((SELECT (d ->> 'bytes_read')::bigint FROM d_short), (SELECT bytes FROM r_short),
    'short_read: bytes_read counts each byte once');
SELECT is((SELECT (d ->> 'errors')::bigint FROM d_short), 0::bigint, 'short_read: no error');

SET LOCAL pg_dio.inject_fault = 'corrupt';
SELECT is(current_setting('data_checksums'), 'on', '(the cluster has data checksums)');
INSERT INTO dio_snap VALUES ('corrupt', pg_temp.dio_now());
CREATE TEMP TABLE r_corrupt AS SELECT * FROM pg_dio_read('dio_rd');
SELECT results_eq('SELECT blocks, direct_blocks, fallback_blocks, fallback_reasons, reads FROM r_corrupt',
    $$SELECT n, 0::bigint, n, jsonb_build_object('verify', n), ceil(n / 32.0)::bigint FROM dio_rd_blocks$$,
    'corrupt: every page image fails verification and is read through the buffer manager');
-- The bulk load extended the file past its last row: those pages are new
-- (all zeroes), have no checksum, and fail verification only because the
-- injected fault made them non-zero.  Every page with rows has a checksum.
SELECT is((SELECT checksum_failures FROM r_corrupt),
          (SELECT count(DISTINCT (ctid::text::point)[0])::bigint FROM dio_rd),
          'corrupt: one checksum failure per page with rows');
SELECT results_eq($$SELECT (d ->> 'fallback_verify')::bigint, (d ->> 'blocks_direct')::bigint, (d ->> 'errors')::bigint
                      FROM (SELECT pg_temp.dio_delta('corrupt') AS d) x$$,
    $$SELECT n, 0::bigint, 0::bigint FROM dio_rd_blocks$$,
    'corrupt: counted as verify fallbacks; the reads themselves did not fail');

SET LOCAL pg_dio.inject_fault = 'delay';
SET LOCAL pg_dio.inject_delay = '20ms';
INSERT INTO dio_snap VALUES ('delay', pg_temp.dio_now());
CREATE TEMP TABLE r_delay AS SELECT * FROM pg_dio_read('dio_rd');
SELECT results_eq('SELECT blocks, direct_blocks, fallback_blocks FROM r_delay',
    'SELECT n, n, 0::bigint FROM dio_rd_blocks',
    'delay: reads are slow but complete, every block directly');
SELECT cmp_ok((SELECT elapsed_ms FROM r_delay), '>=', 20::float8,
    'delay: the read took at least pg_dio.inject_delay');
SELECT cmp_ok((pg_temp.dio_delta('delay') ->> 'wait_time_ms')::float8, '>=', 10::float8,
    'delay: the backend spent that time waiting for completions');
SELECT cmp_ok((pg_temp.dio_delta('delay') ->> 'read_latency_ms')::float8, '>=',
              (SELECT 20.0 * reads FROM r_delay)::float8,
    'delay: read_latency_ms sums every read''s latency of at least pg_dio.inject_delay');
SELECT ok((SELECT sum(count) FROM pg_dio_histogram(pg_backend_pid())
            WHERE kind = 'latency' AND lower_bound >= 16384) >= (SELECT reads FROM r_delay),
    'delay: every delayed read is in a latency bucket of 16ms or more');

RESET pg_dio.inject_fault;
RESET pg_dio.inject_delay;
CREATE TEMP TABLE r_after AS SELECT * FROM pg_dio_read('dio_rd');
SELECT results_eq('SELECT blocks, direct_blocks, fallback_blocks FROM r_after',
    'SELECT n, n, 0::bigint FROM dio_rd_blocks',
    'after the faults: direct reads work again');

-- ===========================================================================
-- Invariants over this backend's whole life
-- ===========================================================================
SELECT is((pg_temp.dio_now() ->> 'reads_in_flight')::int, 0, 'no read left in flight');
SELECT ok((SELECT (c ->> 'reads_completed')::bigint = (c ->> 'reads_submitted')::bigint
             FROM pg_temp.dio_now() c),
    'every submitted read completed');
SELECT ok((SELECT (c ->> 'latency_total')::bigint = (c ->> 'reads_completed')::bigint
             FROM pg_temp.dio_now() c),
    'one latency sample per completed read');
SELECT ok((SELECT (c ->> 'size_total')::bigint = (c ->> 'reads_completed')::bigint
             FROM pg_temp.dio_now() c),
    'one size sample per completed read');
SELECT ok((SELECT (c ->> 'blocks_fallback')::bigint =
                  (c ->> 'fallback_io_error')::bigint + (c ->> 'fallback_no_uring')::bigint
                  + (c ->> 'fallback_no_odirect')::bigint + (c ->> 'fallback_no_fd')::bigint
                  + (c ->> 'fallback_verify')::bigint
             FROM pg_temp.dio_now() c),
    'blocks_fallback is the sum of the per-reason counters');
SELECT is((SELECT count(*)::int FROM pg_stat_aios WHERE source = 'pg_dio'), 0,
    'pg_stat_aios shows no pg_dio read');

-- Cluster totals include this backend's counters.
SELECT ok((SELECT c.reads_submitted >= b.reads_submitted AND c.blocks_direct >= b.blocks_direct
             FROM pg_dio_cluster_stats() c, pg_dio_backend_stats(pg_backend_pid()) b),
    'pg_dio_cluster_stats() includes this backend''s counters');
SELECT ok((SELECT sum(count) FROM pg_dio_histogram() WHERE pid IS NULL AND kind = 'size') >=
          (SELECT sum(count) FROM pg_dio_histogram(pg_backend_pid()) WHERE kind = 'size'),
          'the cluster-wide histogram includes this backend''s');

SELECT * FROM finish();
ROLLBACK;
