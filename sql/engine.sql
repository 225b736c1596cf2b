--
-- engine: pg_dio_read reads every block of a fork, directly, and the
-- backend's counters move by exactly what it read
--
SELECT current_setting('block_size')::int AS bs \gset
SELECT pg_relation_size('dio_t') / :bs AS nblocks \gset

-- every block, all direct, combined into io_size (1MB = 128 blocks of 8 kB) reads
CREATE TEMP TABLE before AS SELECT * FROM pg_dio_backend_stats(pg_backend_pid());
SELECT blocks = :nblocks AS all_blocks,
       bytes = pg_relation_size('dio_t') AS all_bytes,
       direct_blocks = blocks AS all_direct,
       fallback_blocks, fallback_reasons, checksum_failures,
       reads = ceil(:nblocks / (1048576.0 / :bs)) AS reads_combined,
       avg_read_bytes BETWEEN :bs AND 1048576 AS avg_size_ok,
       elapsed_ms > 0 AS timed
  FROM pg_dio_read('dio_t') \gset r_
\echo :r_all_blocks :r_all_bytes :r_all_direct :r_fallback_blocks :r_fallback_reasons :r_checksum_failures :r_reads_combined :r_avg_size_ok :r_timed

SELECT a.reads_submitted - b.reads_submitted = ceil(:nblocks / (1048576.0 / :bs)) AS submitted,
       a.reads_completed - b.reads_completed = ceil(:nblocks / (1048576.0 / :bs)) AS completed,
       a.bytes_read - b.bytes_read = :nblocks * :bs AS bytes,
       a.blocks_direct - b.blocks_direct = :nblocks AS direct,
       a.blocks_fallback - b.blocks_fallback AS fallback,
       a.errors - b.errors AS errors,
       a.short_reads - b.short_reads AS short_reads,
       a.submit_calls > b.submit_calls AS submitted_calls,
       a.max_inflight BETWEEN 1 AND 16 AS max_inflight_bounded,
       a.reads_in_flight AS in_flight
  FROM pg_dio_backend_stats(pg_backend_pid()) a, before b;

-- read size follows pg_dio.io_size; queue depth bounds what is in flight
SET pg_dio.io_size = '8kB';
SELECT reads = blocks AS one_block_reads, avg_read_bytes, direct_blocks = blocks AS all_direct
  FROM pg_dio_read('dio_t');
SET pg_dio.io_size = '1MB';
SET pg_dio.queue_depth = 2;
SELECT reads = ceil(blocks / (1048576.0 / :bs)) AS mb_reads, direct_blocks = blocks AS all_direct
  FROM pg_dio_read('dio_t');
-- a 32MB pool, more than RLIMIT_MEMLOCK lets most accounts pin: the part
-- the kernel registered and the rest both read every block, verified
SET pg_dio.io_size = '256kB';
SET pg_dio.queue_depth = 128;
SELECT reads = ceil(blocks / (262144.0 / :bs)) AS reads_32, direct_blocks = blocks AS all_direct,
       checksum_failures
  FROM pg_dio_read('dio_t');
SET pg_dio.io_size = '40kB';	-- 5 blocks: runs do not divide the table evenly
SELECT reads = ceil(blocks / (40960.0 / :bs)) AS reads_5, direct_blocks = blocks AS all_direct
  FROM pg_dio_read('dio_t');
RESET pg_dio.io_size;
RESET pg_dio.queue_depth;

-- the size histogram saw exactly our reads
SELECT sum(count) = (SELECT reads_completed FROM pg_dio_backend_stats(pg_backend_pid())) AS size_hist_complete,
       count(*) FILTER (WHERE count > 0) > 0 AS has_buckets
  FROM pg_dio_histogram(pg_backend_pid()) WHERE kind = 'size';
SELECT sum(count) = (SELECT reads_completed FROM pg_dio_backend_stats(pg_backend_pid())) AS lat_hist_complete
  FROM pg_dio_histogram(pg_backend_pid()) WHERE kind = 'latency';
-- 256kB reads land in the [256kB, 512kB) bucket
SELECT bucket, lower_bound, upper_bound FROM pg_dio_histogram(pg_backend_pid())
 WHERE kind = 'size' AND lower_bound = 262144;

-- other forks; a missing fork has no blocks
SELECT blocks = pg_relation_size('dio_t', 'vm') / :bs AS vm_all, blocks > 0 AS vm_exists,
       direct_blocks = blocks AS vm_direct
  FROM pg_dio_read('dio_t', 'vm');
SELECT blocks = pg_relation_size('dio_t', 'fsm') / :bs AS fsm_all, direct_blocks = blocks AS fsm_direct
  FROM pg_dio_read('dio_t', 'fsm');
SELECT blocks, reads, direct_blocks, fallback_blocks FROM pg_dio_read('dio_t', 'init');

-- an empty table
CREATE TABLE dio_empty (a int);
SELECT blocks, bytes, reads, avg_read_bytes, direct_blocks, fallback_blocks, fallback_reasons
  FROM pg_dio_read('dio_empty');

-- unlogged tables, materialized views and TOAST tables are heap too
CREATE UNLOGGED TABLE dio_unlogged AS SELECT * FROM dio_t WHERE id <= 20000;
SELECT blocks = pg_relation_size('dio_unlogged') / :bs AS all_blocks, direct_blocks = blocks AS all_direct
  FROM pg_dio_read('dio_unlogged');
SELECT blocks, direct_blocks FROM pg_dio_read('dio_unlogged', 'init');
CREATE MATERIALIZED VIEW dio_mv AS SELECT id, pad FROM dio_t WHERE id % 2 = 0;
SELECT blocks = pg_relation_size('dio_mv') / :bs AS all_blocks, direct_blocks = blocks AS all_direct
  FROM pg_dio_read('dio_mv');
CREATE TABLE dio_toasty (id int, big text);
ALTER TABLE dio_toasty ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO dio_toasty SELECT g, repeat(md5(g::text), 200) FROM generate_series(1, 500) g;
SELECT reltoastrelid AS toast FROM pg_class WHERE relname = 'dio_toasty' \gset
SELECT blocks = pg_relation_size(:toast) / :bs AS all_blocks, blocks > 0 AS has_blocks,
       direct_blocks = blocks AS all_direct
  FROM pg_dio_read(:toast);

-- pages dirty in shared buffers: the function reads what is on disk, verified
UPDATE dio_t SET pad = pad WHERE id % 1000 = 0;
SELECT blocks = pg_relation_size('dio_t') / :bs AS all_blocks, checksum_failures,
       direct_blocks + fallback_blocks = blocks AS accounted
  FROM pg_dio_read('dio_t');
CHECKPOINT;
SELECT blocks = pg_relation_size('dio_t') / :bs AS all_blocks, checksum_failures,
       direct_blocks = blocks AS all_direct
  FROM pg_dio_read('dio_t');

DROP TABLE dio_empty, dio_unlogged, dio_toasty;
DROP MATERIALIZED VIEW dio_mv;
