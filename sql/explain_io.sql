--
-- explain_io: EXPLAIN (ANALYZE, IO), new in PostgreSQL 19: DirectSeqScan and
-- PrefetchIndexScan show the prefetch and I/O figures that core shows for
-- its Seq Scan and Bitmap Heap Scan, with the same labels, in the same
-- place, in text and JSON.  PostgreSQL 18 has no IO option: the test says
-- so and stops (expected/explain_io_1.out).
--
SELECT current_setting('server_version_num')::int < 190000 AS pg18 \gset
\if :pg18
\echo 'skipped: PostgreSQL 18 has no EXPLAIN (IO)'
\quit
\endif
SET max_parallel_workers_per_gather = 0;
SET pg_dio.direct_scan_threshold = 0;
SET jit = off;
CREATE TABLE eio (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO eio SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g;
CREATE INDEX eio_id ON eio (id);
VACUUM ANALYZE eio;

-- EXPLAIN (ANALYZE, IO) of a cold run, numbers masked, without pg_dio's own
-- lines (which differ by mode and are tested elsewhere)
CREATE FUNCTION eio_explain(q text, fmt text DEFAULT 'text') RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    PERFORM pg_dio_evict('eio');
    FOR line IN EXECUTE format('EXPLAIN (ANALYZE, IO, COSTS OFF, TIMING OFF, SUMMARY OFF, '
                               'BUFFERS OFF, FORMAT %s) %s', fmt, q) LOOP
        CONTINUE WHEN line ~ '^\s*(Heap Blocks: requested|Direct I/O:|Buffered:)';
        RETURN NEXT regexp_replace(line, '\d+(\.\d+)?', 'N', 'g');
    END LOOP;
END
$$;

-- DirectSeqScan beside core's Seq Scan
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT eio_explain('SELECT count(*) FROM eio');
SET pg_dio.enable_direct_scan = off;
SELECT eio_explain('SELECT count(*) FROM eio');
RESET pg_dio.enable_direct_scan;
RESET enable_indexscan;
RESET enable_indexonlyscan;

-- PrefetchIndexScan beside core's Bitmap Heap Scan, through the read
-- stream and in self-read mode (io_method worker)
SET enable_seqscan = off;
SET pg_dio.index_prefetch_advice = off;
SELECT eio_explain('SELECT sum(length(pad)) FROM eio WHERE id BETWEEN 100 AND 5000');
RESET pg_dio.index_prefetch_advice;
SELECT eio_explain('SELECT sum(length(pad)) FROM eio WHERE id BETWEEN 100 AND 5000');
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT eio_explain('SELECT sum(length(pad)) FROM eio WHERE id BETWEEN 100 AND 5000');
RESET enable_indexscan;
RESET enable_seqscan;

-- JSON: the same keys as core's
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT k[1] AS key FROM eio_explain('SELECT count(*) FROM eio', 'json') l,
       regexp_matches(l, '"((?:Average|Max) Prefetch Distance|Prefetch Capacity|I/O Count|I/O Waits|Average I/O Size|Average I/Os In Progress)"', 'g') k;
SET pg_dio.enable_direct_scan = off;
SELECT k[1] AS key FROM eio_explain('SELECT count(*) FROM eio', 'json') l,
       regexp_matches(l, '"((?:Average|Max) Prefetch Distance|Prefetch Capacity|I/O Count|I/O Waits|Average I/O Size|Average I/Os In Progress)"', 'g') k;
RESET pg_dio.enable_direct_scan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;

DROP TABLE eio;
DROP FUNCTION eio_explain;
RESET max_parallel_workers_per_gather;
RESET pg_dio.direct_scan_threshold;
RESET jit;
