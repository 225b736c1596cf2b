--
-- prefetch_selfread: PrefetchIndexScan's own reads ahead: it advises the
-- kernel of the heap blocks it will want (pg_dio.index_prefetch_advice, on
-- by default, with every io_method), combines neighbouring ones
-- (pg_dio.index_prefetch_combine), and reads all-visible ones with O_DIRECT
-- (pg_dio.index_direct_read), then reads each block itself.  Uses
-- prefetch_scan's helpers, and drops them.
--
SET jit = off;
SET debug_parallel_query = off;
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;
SET pg_dio.index_prefetch_min_rows = 0;	-- test scans are small
SET enable_bitmapscan = off;
SELECT current_setting('block_size')::int AS bs \gset
--
-- reading ahead, cold: a few MB, random order (one heap block per TID run)
-- (the advice and the stream; direct reads, which would take the all-visible
-- blocks, are tested below)
--
SET pg_dio.index_direct_read = off;
SET effective_io_concurrency = 16;
CREATE TABLE pf_big (id int, v int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO pf_big SELECT (g * 7919) % 40009, g, repeat('b', 120) FROM generate_series(1, 40000) g;
CREATE INDEX pf_big_id ON pf_big (id);
VACUUM ANALYZE pf_big;
SELECT pg_relation_size('pf_big') / :bs > 500 AS some_mb;
SELECT count(*) AS runs FROM (
    SELECT (ctid::text::point)[0] AS blk, lag((ctid::text::point)[0]) OVER (ORDER BY id) AS prev
      FROM pf_big WHERE id BETWEEN 1000 AND 30000) s
 WHERE prev IS DISTINCT FROM blk \gset
SELECT :runs > 20000 AS scattered;
-- through the read stream (advice off), and read by the scan itself after
-- advising each block (advice on, io_method=worker)
SET pg_dio.index_prefetch_advice = off;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT actual_rows, blocks_requested = :runs AS one_request_per_run, index_tids,
       blocks_read > 0 AS read_some, prefetch_max > 1 AS looked_ahead
  FROM pf_stats('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT pf_compare('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
RESET pg_dio.index_prefetch_advice;
-- the capacity, as core's read stream has it: (I/O concurrency + 1) x
-- io_combine_limit blocks, at most the buffer manager's pin limit for one
-- backend: shared_buffers over the server's process slots (MaxBackends and
-- the auxiliary processes: core keeps an application name of NAMEDATALEN
-- bytes for each)
SELECT least((16 + 1) * (SELECT setting::int FROM pg_settings WHERE name = 'io_combine_limit'),
             (SELECT setting::bigint FROM pg_settings WHERE name = 'shared_buffers') /
             ((SELECT size FROM pg_shmem_allocations WHERE name = 'Backend Application Name Buffer') /
              (current_setting('max_identifier_length')::int + 1))) AS pf_capacity \gset
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT actual_rows, blocks_requested = :runs AS one_request_per_run, index_tids,
       blocks_read > 0 AS read_some, prefetch_max > 1 AS looked_ahead,
       blocks_advised > 0 AS advised, prefetch_capacity = :pf_capacity AS capacity
  FROM pf_stats('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT pf_compare('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
-- combining: once it looks ahead, the scan reads the index further ahead and
-- has the kernel read the blocks right before and after one it advises with
-- it, in one request, when TIDs queued further on want them (pf_big's blocks
-- all come back, so most are read that way); those are not advised again
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT blocks_combined > blocks_advised / 2 AS mostly_combined,
       blocks_advised <= pg_relation_size('pf_big') / :bs AS each_advised_once,
       blocks_read <= pg_relation_size('pf_big') / :bs AS each_read_once
  FROM pf_stats('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
-- each request at most io_combine_limit blocks: with 1, nothing is combined
SET io_combine_limit = 1;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT blocks_combined, blocks_advised > 0 AS advised
  FROM pf_stats('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
RESET io_combine_limit;
-- pg_dio.index_prefetch_combine = off: each block advised alone
SET pg_dio.index_prefetch_combine = off;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT blocks_combined, blocks_advised > 0 AS advised
  FROM pf_stats('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT pf_compare('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
RESET pg_dio.index_prefetch_combine;
-- below a Limit, which may stop the scan early, no neighbours are advised for
-- TIDs further on (they may never be wanted)
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT actual_rows, blocks_combined, blocks_advised > 0 AS advised
  FROM pf_stats('SELECT * FROM pf_big WHERE id >= 1000 ORDER BY id LIMIT 3000');
-- a rescanned inner side that stops early (LIMIT), cold: the queue and the
-- blocks it wants are forgotten with each rescan (below the Limit, nothing
-- combined)
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT loops, actual_rows, blocks_combined > 0 AS combined
  FROM pf_stats('SELECT o.x, l.v FROM (VALUES (1000), (12000), (1000)) o(x),
                 LATERAL (SELECT v FROM pf_big WHERE id >= o.x ORDER BY id LIMIT 9000) l');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT pf_compare('SELECT o.x, l.v FROM (VALUES (1000), (12000), (1000)) o(x),
                   LATERAL (SELECT v FROM pf_big WHERE id >= o.x ORDER BY id LIMIT 9000) l');
-- the look-ahead is bounded by the stream's capacity, (I/O concurrency + 1)
-- x io_combine_limit blocks (PG 19's EXPLAIN name); single-block reads are
-- also bounded by the concurrency, so it stays well below
-- (in advised mode the same: the concurrency bounds the advised blocks
-- ahead, and the capacity all blocks ahead, some of which need no read)
SET effective_io_concurrency = 2;
SET io_combine_limit = 4;
SET pg_dio.index_prefetch_advice = off;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT prefetch_capacity, prefetch_max BETWEEN 2 AND 12 AS bounded
  FROM pf_stats('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
SET effective_io_concurrency = 0;
SELECT prefetch_capacity, prefetch_max <= 4 AS bounded
  FROM pf_stats('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
SET effective_io_concurrency = 2;
RESET pg_dio.index_prefetch_advice;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT prefetch_capacity, prefetch_max BETWEEN 2 AND 12 AS bounded, blocks_advised > 0 AS advised
  FROM pf_stats('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
-- a block in shared buffers needs no read and does not count against the
-- concurrency: pf_big's blocks come back ~35 times each in index order, so
-- once read they are hits and the look-ahead goes beyond the concurrency
SET effective_io_concurrency = 4;	-- capacity (4 + 1) x 4 = 20
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT prefetch_capacity, prefetch_max > 4 AS past_resident, prefetch_max <= 20 AS bounded,
       blocks_read < blocks_requested AS mostly_hits
  FROM pf_stats('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
RESET io_combine_limit;
SET effective_io_concurrency = 16;
-- ORDER BY ... LIMIT reads little beyond what it returns
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT actual_rows, blocks_requested < 100 AS few_requested, blocks_read < 100 AS few_read,
       index_tids < 1000 AS few_tids
  FROM pf_stats('SELECT * FROM pf_big WHERE id > 10 ORDER BY id LIMIT 5');
SET pg_dio.index_prefetch_advice = off;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT actual_rows, blocks_requested < 100 AS few_requested, blocks_read < 100 AS few_read,
       index_tids < 1000 AS few_tids
  FROM pf_stats('SELECT * FROM pf_big WHERE id > 10 ORDER BY id LIMIT 5');
RESET pg_dio.index_prefetch_advice;
SELECT pf_compare('SELECT * FROM pf_big WHERE id > 10 ORDER BY id LIMIT 5');
-- the index is read ahead of what the look-ahead has reached by a bounded
-- factor (16 TIDs per TID looked at) and by hash_mem (56 bytes a TID; an
-- index-only scan gives half of hash_mem to its copies of index data); the
-- scans stop at their 3000th TID (id 3010) in an EXISTS, not below a Limit,
-- under which the scan combines nothing
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT actual_rows, index_tids > 3000 + 1170 + 100 AS read_ahead,
       index_tids <= 3000 * 17 AS bounded, blocks_combined > 0 AS combined
  FROM pf_stats('SELECT EXISTS (SELECT FROM pf_big WHERE id > 10 AND id + v * 0 = 3010)');
-- hash_mem 64kB: 1170 TIDs
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT actual_rows, index_tids BETWEEN 3000 + 1000 AND 3000 + 1170 + 100 AS bounded,
       blocks_combined > 0 AS combined
  FROM pf_stats('SELECT EXISTS (SELECT FROM pf_big WHERE id > 10 AND id + v * 0 = 3010)');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT pf_compare('SELECT * FROM pf_big WHERE id > 10 ORDER BY id LIMIT 3000');
RESET work_mem;
RESET hash_mem_multiplier;
-- the scan advises blocks ahead of what it takes: the LIMIT leaves some of
-- them unconsumed (that the kernel then has them in the OS page cache is
-- the os_cache suite's)
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT actual_rows, blocks_advised > 0 AS advised, blocks_advised > blocks_read AS advised_ahead
  FROM pf_stats('SELECT * FROM pf_big WHERE id > 10 ORDER BY id LIMIT 300');
-- index-only, all-visible: nothing to read, long runs without blocks
SELECT heap_fetches, blocks_requested FROM pf_stats('SELECT id FROM pf_big WHERE id < 40000');
-- index-only, every other block not all-visible, cold: a TID that needs the
-- heap goes straight to it while the scan does not look ahead; the read that
-- starts the look-ahead must not move the index on before the TID's own index
-- data is returned
-- (PostgreSQL 19's scans set visibility map bits as they prune pages: every
-- check below that needs pages not all-visible updates them again: one row
-- on each page b with b % m < n)
CREATE FUNCTION pf_big_touch(n int, m int) RETURNS void LANGUAGE sql AS $$
    UPDATE pf_big SET v = -v
     WHERE ctid = ANY (SELECT min(ctid) FROM pf_big
                        GROUP BY (ctid::text::point)[0]
                       HAVING (ctid::text::point)[0]::int % m < n)
$$;
SELECT pf_big_touch(1, 2);
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT heap_fetches > 10000 AS fetched, heap_fetches < actual_rows AS not_all_fetched,
       blocks_read > 0 AS read_some, prefetch_max > 1 AS looked_ahead
  FROM pf_stats('SELECT id FROM pf_big WHERE id BETWEEN 1000 AND 30000');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT pf_compare('SELECT id FROM pf_big WHERE id BETWEEN 1000 AND 30000');
-- ... reading the index ahead (combining) up to half of hash_mem's TIDs:
-- 585 with 64kB (pairs of neighbouring pages not all-visible: neighbours to
-- combine)
SELECT pf_big_touch(2, 4);
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT actual_rows, index_tids > 3000 + 585 + 100 AS read_ahead, blocks_combined > 0 AS combined
  FROM pf_stats('SELECT EXISTS (SELECT FROM pf_big WHERE id > 10 AND id + 0 = 3010)');
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT pf_big_touch(2, 4);
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT actual_rows, index_tids BETWEEN 3000 + 400 AND 3000 + 585 + 100 AS bounded,
       blocks_combined > 0 AS combined
  FROM pf_stats('SELECT EXISTS (SELECT FROM pf_big WHERE id > 10 AND id + 0 = 3010)');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT pf_compare('SELECT id FROM pf_big WHERE id > 10 ORDER BY id LIMIT 3000');
RESET work_mem;
RESET hash_mem_multiplier;
SET pg_dio.index_prefetch_advice = off;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT pf_compare('SELECT id FROM pf_big WHERE id BETWEEN 1000 AND 30000');
RESET pg_dio.index_prefetch_advice;
RESET pg_dio.index_direct_read;

-- a narrow table in index order: thousands of TIDs queued ahead of the
-- consumer, the queue grows while a buffer is being taken from the stream
CREATE TABLE pf_narrow (id int, v int) WITH (autovacuum_enabled = off);
INSERT INTO pf_narrow SELECT g, g FROM generate_series(1, 200000) g;
CREATE INDEX pf_narrow_id ON pf_narrow (id);
VACUUM ANALYZE pf_narrow;
\c -
SET jit = off;
SET max_parallel_workers_per_gather = 0;
-- the scans walk most of pf_narrow in its order, which core's plan keeps
SET pg_dio.index_prefetch_min_rows = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET effective_io_concurrency = 16;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT pf_compare('SELECT * FROM pf_narrow WHERE id <= 200000');
SET pg_dio.index_direct_read = off;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT actual_rows, blocks_requested = pg_relation_size('pf_narrow') / :bs AS every_block_once
  FROM pf_stats('SELECT * FROM pf_narrow WHERE id <= 200000');
-- pf_narrow's index follows its heap: the kernel reads that forward walk
-- ahead for the scan's own reads, as for core's index scan, so the scan
-- advises blocks only until it has seen the walk
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT blocks_read > 0 AS read_some, blocks_advised < blocks_requested / 4 AS forward_walk_not_advised
  FROM pf_stats('SELECT * FROM pf_narrow WHERE id <= 200000');
RESET pg_dio.index_direct_read;

--
-- direct heap reads (pg_dio.index_direct_read, off by default): blocks the
-- scan looks ahead at that are all-visible and not in shared buffers are read
-- with O_DIRECT by pg_dio's engine, used only if they pass DirectSeqScan's
-- checks (else read through the buffer manager), each at most once a scan
--
-- The engine holds at most pg_dio.queue_depth reads; with at least
-- effective_io_concurrency + 1 (the look-ahead and the image in use), every
-- block can be read directly and none needs advice instead.
SET pg_dio.queue_depth = 32;
SET pg_dio.index_direct_read = on;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
CREATE TEMP TABLE pn AS SELECT * FROM pf_stats('SELECT * FROM pf_narrow WHERE id <= 200000');
SELECT actual_rows, blocks_direct > blocks_requested * 0.9 AS mostly_direct,
       blocks_direct_fallback, blocks_direct <= blocks_read AS counted_as_read,
       blocks_advised = 0 AS none_advised
  FROM pn;
-- shared buffers did not get the blocks read directly (the first blocks are
-- read through the buffer manager)
SELECT r.shared_buffers <= r.blocks - s.blocks_direct AS direct_ones_not_in_shared_buffers
  FROM pg_dio_residency('pf_narrow') r, pn s WHERE r.fork = 'main';
-- nor did the OS page cache: seen with the table read in descending block
-- order (an index on -id), so that the kernel reads nothing ahead of the
-- blocks read through the buffer manager (it reads ahead of ascending reads)
CREATE INDEX pf_narrow_desc ON pf_narrow ((-id));
SET pg_dio.os_cache_check = off;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
CREATE TEMP TABLE pn_desc AS SELECT * FROM pf_stats('SELECT * FROM pf_narrow WHERE -id >= -200000');
SELECT actual_rows, blocks_direct > blocks_requested * 0.9 AS mostly_direct, blocks_advised = 0 AS none_advised
  FROM pn_desc;
SELECT r.os_cache <= r.blocks - s.blocks_direct AS direct_ones_not_in_os_cache,
       r.shared_buffers <= r.blocks - s.blocks_direct AS direct_ones_not_in_shared_buffers
  FROM pg_dio_residency('pf_narrow') r, pn_desc s WHERE r.fork = 'main';
DROP INDEX pf_narrow_desc;
DROP TABLE pn, pn_desc;
RESET pg_dio.os_cache_check;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT pf_compare('SELECT * FROM pf_narrow WHERE id <= 200000');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT pf_compare('SELECT v, id FROM pf_narrow WHERE id BETWEEN 1000 AND 150000 AND v % 3 = 0');
-- system columns: the relation's row, copied from the direct image
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT pf_compare('SELECT ctid, tableoid::regclass, xmin = xmin AS x, * FROM pf_narrow WHERE id BETWEEN 1000 AND 150000');
-- every match of a hash index is rechecked, here on the direct image, also
-- with a narrow scan tuple that lacks the column
CREATE INDEX pf_narrow_v ON pf_narrow USING hash ((v % 50));
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT actual_rows, blocks_direct > 100 AS direct
  FROM pf_stats('SELECT id FROM pf_narrow WHERE v % 50 = 7');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT pf_compare('SELECT id FROM pf_narrow WHERE v % 50 = 7');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT pf_compare('SELECT * FROM pf_narrow WHERE v % 50 = 7');
DROP INDEX pf_narrow_v;
-- blocks in shared buffers are not read directly: the first half is there
-- (the OS page cache may have the rest: the kernel reads a forward walk
-- ahead, up to read_ahead_kb; not asked here)
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SET pg_dio.index_direct_read = off;
SELECT sum(v) FROM pf_narrow WHERE id <= 100000;
SET pg_dio.index_direct_read = on;
SET pg_dio.os_cache_check = off;
SELECT blocks_direct < blocks_requested * 0.55 AS not_the_cached_half,
       blocks_direct > blocks_requested * 0.4 AS the_other_half
  FROM pf_stats('SELECT * FROM pf_narrow WHERE id <= 200000');
RESET pg_dio.os_cache_check;
-- nor are blocks that are not all-visible: one row on every 4th page updated
-- (pg_dio.os_cache_check off from here on: the kernel reads ahead of the
-- buffered reads in this table's order, and blocks it has read ahead would
-- be read from the OS page cache instead)
SET pg_dio.os_cache_check = off;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
UPDATE pf_narrow SET v = -v
 WHERE ctid = ANY (SELECT format('(%s,1)', b)::tid
                     FROM generate_series(0, pg_relation_size('pf_narrow') / :bs - 1, 4) b);
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT all_visible < blocks * 0.8 AS quarter_changed FROM pg_dio_residency('pf_narrow') WHERE fork = 'main';
SELECT s.blocks_direct <= r.all_visible AS only_all_visible,
       s.blocks_direct >= r.all_visible - 2 AS all_of_them
  FROM pf_stats('SELECT * FROM pf_narrow WHERE id <= 200000') s,
       pg_dio_residency('pf_narrow') r WHERE r.fork = 'main';
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT pf_compare('SELECT * FROM pf_narrow WHERE id <= 200000');
VACUUM pf_narrow;
-- under every fault of the engine: the same rows, the blocks read through
-- the buffer manager instead (counted)
CREATE FUNCTION pf_direct_fault(f text) RETURNS TABLE (fault text, direct bigint, fell_back boolean, result text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('pg_dio.inject_fault', f, true);
    PERFORM pg_dio_evict('pf_narrow');
    SELECT s.blocks_direct, s.blocks_direct_fallback > 100 INTO direct, fell_back
      FROM pf_stats('SELECT * FROM pf_narrow WHERE id <= 200000') s;
    PERFORM pg_dio_evict('pf_narrow');
    result := pf_compare('SELECT * FROM pf_narrow WHERE id <= 200000');
    PERFORM set_config('pg_dio.inject_fault', 'none', true);
    fault := f;
    RETURN NEXT;
END
$$;
SELECT d.* FROM unnest(ARRAY['eio', 'ring_setup', 'odirect_einval']) f,
     pf_direct_fault(f) d;
-- a short read is completed by the engine
SELECT fault, direct > 100 AS direct, result FROM pf_direct_fault('short_read');
DROP FUNCTION pf_direct_fault;
RESET pg_dio.os_cache_check;
-- none under SERIALIZABLE (its predicate locks need the buffer), nor with
-- the setting at its default (off), nor in index-only scans (they read only
-- blocks that are not all-visible)
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT actual_rows, blocks_direct, blocks_read > 0 AS read_some
  FROM pf_stats('SELECT * FROM pf_narrow WHERE id <= 200000');
COMMIT;
RESET pg_dio.index_direct_read;
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_narrow');
SELECT actual_rows, blocks_direct, blocks_read > 0 AS read_some
  FROM pf_stats('SELECT * FROM pf_narrow WHERE id <= 200000');
SET pg_dio.index_direct_read = on;
-- a range whose rows come back to the same blocks: each block is read
-- directly at most once, later visits go through the buffer manager, and
-- once a quarter as many direct candidates are visits again the scan stops
-- reading directly (pf_big: ~35 rows a block, in random order)
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT blocks_direct > 0 AS direct, blocks_direct <= blocks_read AS counted,
       blocks_direct < pg_relation_size('pf_big') / :bs / 2 AS stopped_early,
       blocks_read <= pg_relation_size('pf_big') / :bs * 1.3 AS few_reads_twice
  FROM pf_stats('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('pf_big');
SELECT pf_compare('SELECT * FROM pf_big WHERE id BETWEEN 1000 AND 30000');
RESET pg_dio.index_direct_read;
RESET pg_dio.queue_depth;

DROP TABLE pf_big, pf_narrow CASCADE;
DROP FUNCTION pf_big_touch;
DROP FUNCTION pf_plan, pf_rows, pf_compare, pf_stats, pf_counts, pf_compare_dml,
    pf_explain_json, pf_explain_masked, pf_sireadlocks;
