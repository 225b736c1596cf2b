--
-- limits: what one backend's direct reads may hold is bounded, however many
-- read streams it has open -- reads in flight (so the ring's completion
-- queue never overflows) and I/O buffer memory (pg_dio.max_io_memory)
--
SET pg_dio.direct_scan_threshold = 0;
SET pg_dio.os_cache_check = off;
SET max_parallel_workers_per_gather = 0;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS rows, sum(id) AS ids FROM dio_t \gset core_
SELECT pg_relation_size('dio_t') / 8192 AS nblocks \gset

-- 8 open cursors, each a DirectSeqScan with 128 reads in flight at most
-- (pg_dio.queue_depth): each reads its first 128 blocks at once, then reads
-- on through 100 of them with every new read held 1 s in the kernel (a
-- linked timeout), refilling its queue.  Without a bound 800 reads, 1600
-- completions, would be in flight at once, over the ring's 1024-entry
-- completion queue.  At most 256 reads are.
SET pg_dio.queue_depth = 128;
SET pg_dio.io_size = '8kB';
SET pg_dio.inject_delay = '1s';
SELECT count(*) FROM pg_dio_evict('dio_t');
BEGIN;
SELECT format('DECLARE c%s NO SCROLL CURSOR FOR SELECT id FROM dio_t;', i)
  FROM generate_series(1, 8) i \gexec
SELECT format('SET pg_dio.inject_fault = ''none''; MOVE 1 IN c%s; '
              'SET pg_dio.inject_fault = ''delay''; MOVE 4800 IN c%s;', i, i)
  FROM generate_series(1, 8) i \gexec
SELECT max_inflight BETWEEN 200 AND 256 AS inflight_bounded, reads_in_flight <= 256 AS now_bounded,
       io_memory = 8 * 2 * 1024 * 1024 AS io_memory_8_streams
  FROM pg_dio_backend_stats(pg_backend_pid());
RESET pg_dio.inject_fault;
-- every cursor still returns every row
MOVE ALL IN c1;
SELECT :ROW_COUNT + 1 + 4800 = :core_rows AS c1_all_rows;
MOVE ALL IN c8;
SELECT :ROW_COUNT + 1 + 4800 = :core_rows AS c8_all_rows;
COMMIT;
SELECT reads_submitted = reads_completed AS all_reaped, reads_in_flight, blocks_fallback
  FROM pg_dio_backend_stats(pg_backend_pid());
RESET pg_dio.inject_delay;

-- I/O memory: the first stream gets the pool, at most max_io_memory; the
-- next ones get what is left, and with nothing left read through the
-- buffer manager (fallback no_memory), with the same rows
SHOW pg_dio.max_io_memory;
SELECT unit, min_val, boot_val, context FROM pg_settings WHERE name = 'pg_dio.max_io_memory';
SET pg_dio.max_io_memory = '1MB';
SET pg_dio.max_io_memory = '8MB';
SET pg_dio.queue_depth = 16;
SET pg_dio.io_size = '1MB';
SELECT count(*) FROM pg_dio_evict('dio_t');
CREATE TEMP TABLE m0 AS SELECT * FROM pg_dio_backend_stats(pg_backend_pid());
BEGIN;
DECLARE m1 NO SCROLL CURSOR FOR SELECT count(*), sum(id) FROM dio_t;
DECLARE m2 NO SCROLL CURSOR FOR SELECT id FROM dio_t;
DECLARE m3 NO SCROLL CURSOR FOR SELECT count(*), sum(id) FROM dio_t;
MOVE 1 IN m2;
-- the pool: 8 of the 16 reads fit, 8MB; nothing left for m3
SELECT io_memory AS io_memory_while_open FROM pg_dio_backend_stats(pg_backend_pid());
FETCH ALL FROM m3;
SELECT a.fallback_no_memory - b.fallback_no_memory > 0 AS m3_fell_back,
       a.io_memory <= 8 * 1024 * 1024 AS within_bound
  FROM pg_dio_backend_stats(pg_backend_pid()) a, m0 b;
MOVE ALL IN m2;
SELECT :ROW_COUNT + 1 = :core_rows AS m2_all_rows;
FETCH ALL FROM m1;
COMMIT;
-- a larger bound: a second stream reads directly again
SET pg_dio.max_io_memory = '64MB';
CREATE TEMP TABLE m1 AS SELECT * FROM pg_dio_backend_stats(pg_backend_pid());
SELECT count(*) FROM pg_dio_evict('dio_t');
BEGIN;
DECLARE n1 NO SCROLL CURSOR FOR SELECT id FROM dio_t;
MOVE 1 IN n1;
CREATE TEMP TABLE m2 AS SELECT * FROM pg_dio_backend_stats(pg_backend_pid());
SELECT count(*) = :core_rows AS n2_rows, sum(id) = :core_ids AS n2_ids FROM dio_t;
SELECT a.fallback_no_memory - b.fallback_no_memory AS no_memory_fallbacks,
       a.blocks_direct - c.blocks_direct > 0 AS n2_direct, a.io_memory AS io_memory_n1_pool
  FROM pg_dio_backend_stats(pg_backend_pid()) a, m1 b, m2 c;
COMMIT;
RESET pg_dio.max_io_memory;
RESET pg_dio.queue_depth;
RESET pg_dio.io_size;
