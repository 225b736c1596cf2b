--
-- io_timing: with track_io_timing, pg_dio's direct reads add to EXPLAIN's
-- I/O Timings and to pg_stat_io what core adds for its own reads: the time
-- the backend spent submitting and waiting for them, never the sum of their
-- overlapping times in flight; without track_io_timing, no time at all.
--
CREATE TABLE iot (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO iot SELECT g, repeat('x', 500) FROM generate_series(1, 20000) g;
VACUUM (FREEZE, ANALYZE) iot;
SET max_parallel_workers_per_gather = 0;
SET pg_dio.direct_scan_threshold = 0;
-- many reads, each held 20 ms in flight: several are in flight at a time,
-- so the sum of their times is several times the time the scan took
SET pg_dio.io_size = '64kB';
SET pg_dio.inject_fault = 'delay';
SET pg_dio.inject_delay = '20ms';

-- the table read cold by a DirectSeqScan under EXPLAIN (ANALYZE, BUFFERS):
-- the node's direct blocks, its time and its shared read time
CREATE FUNCTION iot_scan(OUT direct_blocks bigint, OUT node_ms float8, OUT read_ms float8)
LANGUAGE plpgsql AS $$
DECLARE
    p jsonb;
    n jsonb;
BEGIN
    PERFORM pg_dio_evict('iot');
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT count(*) FROM iot' INTO p;
    SELECT x INTO n FROM jsonb_path_query(p, 'strict $.**') x
    WHERE x->>'Custom Plan Provider' = 'DirectSeqScan';
    direct_blocks := (n->>'Direct Blocks')::bigint;
    node_ms := (n->>'Actual Total Time')::float8;
    read_ms := coalesce((n->>'Shared I/O Read Time')::float8, 0);
END $$;
-- this backend's relation reads in pg_stat_io, all contexts (a statement
-- that forces the flush of its own statistics comes first)
CREATE VIEW iot_io AS
SELECT coalesce(sum(reads), 0) AS reads, coalesce(sum(read_time), 0) AS read_time
  FROM pg_stat_get_backend_io(pg_backend_pid())
 WHERE object = 'relation';

SET track_io_timing = on;
SELECT pg_stat_force_next_flush();
SELECT reads AS r0, read_time AS t0 FROM iot_io \gset
CREATE TEMP TABLE iot_on AS SELECT * FROM iot_scan();
SELECT pg_stat_force_next_flush();
SELECT direct_blocks > 1000 AS read_directly,
       read_ms > 0 AS read_time_counted,
       read_ms <= node_ms AS read_time_within_node_time,
       reads - :r0 >= 1 AS pg_stat_io_reads,
       read_time - :t0 > 0 AND read_time - :t0 <= node_ms AS pg_stat_io_time_within_node_time
  FROM iot_on, iot_io;
SET track_io_timing = off;
SELECT pg_stat_force_next_flush();
SELECT reads AS r0, read_time AS t0 FROM iot_io \gset
CREATE TEMP TABLE iot_off AS SELECT * FROM iot_scan();
SELECT pg_stat_force_next_flush();
SELECT direct_blocks > 1000 AS read_directly,
       read_ms = 0 AS no_read_time,
       reads - :r0 >= 1 AS pg_stat_io_reads,
       read_time - :t0 = 0 AS no_pg_stat_io_time
  FROM iot_off, iot_io;
RESET track_io_timing;
RESET pg_dio.inject_fault;
RESET pg_dio.inject_delay;
RESET pg_dio.io_size;
RESET pg_dio.direct_scan_threshold;
RESET max_parallel_workers_per_gather;
DROP VIEW iot_io;
DROP FUNCTION iot_scan;
DROP TABLE iot, iot_on, iot_off;
