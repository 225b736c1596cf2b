--
-- faults: every fault pg_dio.inject_fault can make happen still reads every
-- block -- through the buffer manager where the direct read failed -- and
-- counts the fallback by reason.  ('corrupt', which only a data checksum
-- catches, is tested in the checksums suite.)
--
SELECT pg_relation_size('dio_t') / current_setting('block_size')::int AS nblocks \gset
-- blocks per read: pg_dio.io_size (kB) / the block size
SELECT setting::int * 1024 / current_setting('block_size')::int AS per_read
  FROM pg_settings WHERE name = 'pg_dio.io_size' \gset

CREATE TEMP TABLE s0 AS SELECT * FROM pg_dio_backend_stats(pg_backend_pid());

-- The first fallback of each kind in a process is logged, once: shown here
-- with client_min_messages = log.
SET client_min_messages = log;

-- EIO on every read: all blocks fall back, each read counted as an error
-- (terse: the detail names the segment file)
SET pg_dio.inject_fault = 'eio';
\set VERBOSITY terse
SELECT blocks = :nblocks AS all_blocks, direct_blocks, fallback_blocks = blocks AS all_fallback,
       fallback_reasons = jsonb_build_object('io_error', :nblocks) AS reason, checksum_failures
  FROM pg_dio_read('dio_t');
\set VERBOSITY default
SELECT a.errors - b.errors = ceil(:nblocks / :per_read::numeric) AS errors_counted,
       a.fallback_io_error - b.fallback_io_error = :nblocks AS fallback_counted,
       a.blocks_direct - b.blocks_direct AS direct
  FROM pg_dio_backend_stats(pg_backend_pid()) a, s0 b;

-- short reads: the rest is read again, nothing falls back
CREATE TEMP TABLE s1 AS SELECT * FROM pg_dio_backend_stats(pg_backend_pid());
SET pg_dio.inject_fault = 'short_read';
SELECT blocks = :nblocks AS all_blocks, direct_blocks = blocks AS all_direct, fallback_blocks,
       fallback_reasons, checksum_failures
  FROM pg_dio_read('dio_t');
SELECT a.short_reads - b.short_reads = ceil(:nblocks / :per_read::numeric) AS short_reads_counted,
       a.reads_submitted - b.reads_submitted = ceil(:nblocks / :per_read::numeric) AS submitted_once,
       a.errors - b.errors AS errors
  FROM pg_dio_backend_stats(pg_backend_pid()) a, s1 b;

-- io_uring unavailable
SET pg_dio.inject_fault = 'ring_setup';
SELECT blocks = :nblocks AS all_blocks, reads, direct_blocks, fallback_blocks = blocks AS all_fallback,
       fallback_reasons = jsonb_build_object('no_uring', :nblocks) AS reason
  FROM pg_dio_read('dio_t');

-- O_DIRECT refused by the file system
SET pg_dio.inject_fault = 'odirect_einval';
SELECT blocks = :nblocks AS all_blocks, reads, direct_blocks, fallback_blocks = blocks AS all_fallback,
       fallback_reasons = jsonb_build_object('no_odirect', :nblocks) AS reason
  FROM pg_dio_read('dio_t');

-- slow I/O: just slower
SET pg_dio.inject_fault = 'delay';
SET pg_dio.inject_delay = '5ms';
SELECT blocks = :nblocks AS all_blocks, direct_blocks = blocks AS all_direct, fallback_blocks,
       elapsed_ms >= 5 AS delayed
  FROM pg_dio_read('dio_t');

-- every fallback was counted by reason, and nothing is left in flight
SELECT a.fallback_no_uring - b.fallback_no_uring = :nblocks AS no_uring,
       a.fallback_no_odirect - b.fallback_no_odirect = :nblocks AS no_odirect,
       a.fallback_io_error - b.fallback_io_error = :nblocks AS io_error,
       a.blocks_fallback - b.blocks_fallback = 3 * :nblocks AS total,
       a.reads_submitted = a.reads_completed AS all_reaped,
       a.reads_in_flight
  FROM pg_dio_backend_stats(pg_backend_pid()) a, s0 b;

-- the same faults again: counted, not logged again
SET pg_dio.inject_fault = 'eio';
SELECT fallback_blocks = blocks AS all_fallback FROM pg_dio_read('dio_t');
SET pg_dio.inject_fault = 'ring_setup';
SELECT fallback_blocks = blocks AS all_fallback FROM pg_dio_read('dio_t');
SET pg_dio.inject_fault = 'odirect_einval';
SELECT fallback_blocks = blocks AS all_fallback FROM pg_dio_read('dio_t');
RESET client_min_messages;

-- and the engine is fine afterwards
RESET pg_dio.inject_fault;
RESET pg_dio.inject_delay;
SELECT blocks = :nblocks AS all_blocks, direct_blocks = blocks AS all_direct, fallback_blocks
  FROM pg_dio_read('dio_t');
