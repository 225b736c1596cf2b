--
-- segments: a table larger than one 1 GB segment file is read completely;
-- no read crosses a segment boundary
--
SELECT current_setting('block_size')::int AS bs \gset
-- blocks a segment file holds (131072 of 8 kB in 1 GB, as PostgreSQL is
-- built by default)
SELECT pg_size_bytes(current_setting('segment_size')) / :bs AS seg_blocks \gset
CREATE UNLOGGED TABLE dio_big (id int, pad text) WITH (autovacuum_enabled = off, fillfactor = 100);
-- ~140k blocks (1.1 GB): seven 1 kB rows per block
INSERT INTO dio_big SELECT g, repeat('x', 1100) FROM generate_series(1, 7 * 140000) g;
SELECT pg_relation_size('dio_big') / :bs AS nblocks \gset
SELECT :nblocks > :seg_blocks AS spans_two_segments;

-- 264kB = 33 blocks does not divide a segment: the run at each boundary is
-- split, so the read count is per segment
SET pg_dio.io_size = '264kB';
SELECT blocks = :nblocks AS all_blocks,
       direct_blocks = blocks AS all_direct,
       fallback_blocks, checksum_failures,
       reads = (:nblocks / :seg_blocks) * ceil(:seg_blocks / (270336.0 / :bs))
               + ceil((:nblocks % :seg_blocks) / (270336.0 / :bs)) AS split_at_boundary
  FROM pg_dio_read('dio_big');
RESET pg_dio.io_size;
SELECT blocks = :nblocks AS all_blocks, direct_blocks = blocks AS all_direct,
       reads = ceil(:nblocks / (1048576.0 / :bs)) AS reads_1mb
  FROM pg_dio_read('dio_big');
DROP TABLE dio_big;
