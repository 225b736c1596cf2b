--
-- segments: a table larger than one 1 GB segment file is read completely;
-- no read crosses a segment boundary
--
CREATE UNLOGGED TABLE dio_big (id int, pad text) WITH (autovacuum_enabled = off, fillfactor = 100);
-- ~140k blocks (1.1 GB): seven 1 kB rows per block
INSERT INTO dio_big SELECT g, repeat('x', 1100) FROM generate_series(1, 7 * 140000) g;
SELECT pg_relation_size('dio_big') / 8192 AS nblocks \gset
SELECT :nblocks > 131072 AS spans_two_segments;

-- 264kB = 33 blocks does not divide a segment (131072 blocks): the run at the
-- boundary is split, so the read count is per segment
SET pg_dio.io_size = '264kB';
SELECT blocks = :nblocks AS all_blocks,
       direct_blocks = blocks AS all_direct,
       fallback_blocks, checksum_failures,
       reads = ceil(131072 / 33.0) + ceil((:nblocks - 131072) / 33.0) AS split_at_boundary
  FROM pg_dio_read('dio_big');
RESET pg_dio.io_size;
SELECT blocks = :nblocks AS all_blocks, direct_blocks = blocks AS all_direct,
       reads = ceil(:nblocks / 128.0) AS reads_1mb
  FROM pg_dio_read('dio_big');
DROP TABLE dio_big;
