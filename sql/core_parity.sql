--
-- core_parity: what core does on these queries, pg_dio's scans do too.  Each
-- case is one that running PostgreSQL's own regression suite with pg_dio's
-- scans forced on found different (test/core_regress.sh runs the suite).
--
SET pg_dio.direct_scan_threshold = 0;
SET pg_dio.enable_index_prefetch = on;
SET pg_dio.index_prefetch_min_rows = 0;	-- test scans are small
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- Run a query with pg_dio's scans on and off; the pg_dio scans the first plan
-- has, and whether both return the same rows in the same order.
CREATE FUNCTION cp_compare(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    nodes text;
    r_on text[];
    r_off text[];
BEGIN
    EXECUTE 'EXPLAIN (COSTS OFF) ' || q INTO nodes;
    SELECT string_agg(DISTINCT m[1], ', ') INTO nodes
      FROM (SELECT regexp_matches(string_agg(p, ' '),
                                  '(DirectSeqScan|PrefetchIndexScan|PrefetchIndexOnlyScan|ProbePrefetch)', 'g') m
              FROM cp_plan(q) p) s;
    EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', q) INTO r_on;
    PERFORM set_config('pg_dio.enable_direct_scan', 'off', true);
    PERFORM set_config('pg_dio.enable_index_prefetch', 'off', true);
    PERFORM set_config('pg_dio.enable_probe_prefetch', 'off', true);
    EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', q) INTO r_off;
    PERFORM set_config('pg_dio.enable_direct_scan', 'on', true);
    PERFORM set_config('pg_dio.enable_index_prefetch', 'on', true);
    PERFORM set_config('pg_dio.enable_probe_prefetch', 'on', true);
    RETURN CASE WHEN r_on IS NOT DISTINCT FROM r_off
                THEN 'same: ' || coalesce(cardinality(r_on), 0) || ' rows'
                ELSE 'DIFFERENT: ' || coalesce(r_on::text, 'none') || ' vs ' || coalesce(r_off::text, 'none')
           END || ', ' || coalesce(nodes, 'no pg_dio scan');
END
$$;
CREATE FUNCTION cp_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END
$$;

--
-- 1. A partitionwise LATERAL join whose inner side is reparameterized by
-- child keeps its parameterized filter (core: 5 rows).
--
CREATE TABLE cp_prt1 (a int, b int, c text) PARTITION BY RANGE (a);
CREATE TABLE cp_prt1_p1 PARTITION OF cp_prt1 FOR VALUES FROM (0) TO (250);
CREATE TABLE cp_prt1_p2 PARTITION OF cp_prt1 FOR VALUES FROM (250) TO (500);
CREATE TABLE cp_prt1_p3 PARTITION OF cp_prt1 FOR VALUES FROM (500) TO (600);
INSERT INTO cp_prt1 SELECT g, g % 25, g::text FROM generate_series(0, 599, 2) g;
CREATE TABLE cp_prt2 (a int, b int, c text) PARTITION BY RANGE (b);
CREATE TABLE cp_prt2_p1 PARTITION OF cp_prt2 FOR VALUES FROM (0) TO (250);
CREATE TABLE cp_prt2_p2 PARTITION OF cp_prt2 FOR VALUES FROM (250) TO (500);
CREATE TABLE cp_prt2_p3 PARTITION OF cp_prt2 FOR VALUES FROM (500) TO (600);
INSERT INTO cp_prt2 SELECT g % 25, g, g::text FROM generate_series(0, 599, 3) g;
CREATE INDEX ON cp_prt1 (a);
CREATE INDEX ON cp_prt2 (b);
VACUUM ANALYZE cp_prt1, cp_prt2;
SET enable_partitionwise_join = on;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM cp_prt1 t1 LEFT JOIN LATERAL (SELECT t1.b AS t1b, t2.* FROM cp_prt2 t2) s
    ON t1.a = s.b WHERE s.t1b = s.b;
SELECT count(*) FROM cp_prt1 t1 LEFT JOIN LATERAL (SELECT t1.b AS t1b, t2.* FROM cp_prt2 t2) s
    ON t1.a = s.b WHERE s.t1b = s.b;
SELECT cp_compare('SELECT t1.a, s.b FROM cp_prt1 t1 LEFT JOIN LATERAL (SELECT t1.b AS t1b, t2.* FROM cp_prt2 t2) s
    ON t1.a = s.b WHERE s.t1b = s.b ORDER BY 1, 2');
RESET enable_partitionwise_join;

--
-- 2. Index keys under casts and placeholders: a subquery's output pulled up
-- under grouping sets is wrapped in a PlaceHolderVar.
--
CREATE TABLE cp_t (unique1 int, unique2 int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO cp_t SELECT g, (g * 7919) % 10000, repeat('x', 50) FROM generate_series(0, 9999) g;
CREATE UNIQUE INDEX cp_t_unique1 ON cp_t (unique1);
VACUUM ANALYZE cp_t;
EXPLAIN (COSTS OFF)
SELECT x, y FROM (SELECT unique1::oid AS x, unique2 AS y FROM cp_t) t
    WHERE x::integer = 1 GROUP BY GROUPING SETS (x, y) ORDER BY 1, 2;
SELECT x, y FROM (SELECT unique1::oid AS x, unique2 AS y FROM cp_t) t
    WHERE x::integer = 1 GROUP BY GROUPING SETS (x, y) ORDER BY 1, 2;
SELECT cp_compare('SELECT x, y FROM (SELECT unique1::oid AS x, unique2 AS y FROM cp_t) t
    WHERE x::integer < 30 GROUP BY GROUPING SETS (x, y) ORDER BY 1, 2');
SELECT cp_compare('SELECT unique1, unique2 FROM cp_t WHERE unique1::oid < 20::oid ORDER BY unique1');
-- a minimum over an index: core's backward index scan under a Limit stays
-- (the scans of the plan: PostgreSQL 19 names its InitPlans otherwise)
SELECT p FROM cp_plan('SELECT max(unique1) FROM cp_t WHERE unique1 > 42000') p
 WHERE p ~ 'Scan|Limit';

--
-- 3. A cursor declared neither SCROLL nor NO SCROLL can fetch backward where
-- core's plan can: it keeps core's scans.  NO SCROLL gets pg_dio's.
--
BEGIN;
DECLARE c_idx CURSOR FOR SELECT unique1, unique2 FROM cp_t WHERE unique1 BETWEEN 10 AND 20;
DECLARE c_seq CURSOR FOR SELECT unique1 FROM cp_t WHERE unique2 < 5;
DECLARE c_ns NO SCROLL CURSOR FOR SELECT unique1, unique2 FROM cp_t WHERE unique1 BETWEEN 10 AND 20;
SELECT name, is_scrollable FROM pg_cursors WHERE name LIKE 'c\_%' ORDER BY name;
FETCH 3 FROM c_idx;
FETCH BACKWARD 2 FROM c_idx;
MOVE FORWARD ALL IN c_seq;
FETCH BACKWARD 2 FROM c_seq;
FETCH 2 FROM c_ns;
FETCH BACKWARD 1 FROM c_ns;
ROLLBACK;
EXPLAIN (COSTS OFF) DECLARE c CURSOR FOR SELECT unique1 FROM cp_t WHERE unique2 < 5;
EXPLAIN (COSTS OFF) DECLARE c NO SCROLL CURSOR FOR SELECT unique1 FROM cp_t WHERE unique2 < 5;

--
-- 4. WHERE CURRENT OF through each of pg_dio's scans (NO SCROLL cursors,
-- which keep them).
--
CREATE TABLE cp_cur (a int, b int) WITH (autovacuum_enabled = off);
INSERT INTO cp_cur SELECT g, g FROM generate_series(1, 1000) g;
CREATE INDEX cp_cur_a ON cp_cur (a);
VACUUM ANALYZE cp_cur;
-- a HOT update: the index entry of a = 101 leads to its chain's root, and
-- the row is the chain's second member (its page no longer all-visible)
UPDATE cp_cur SET b = b WHERE a = 101;
BEGIN;
EXPLAIN (COSTS OFF) DECLARE c1 NO SCROLL CURSOR FOR SELECT a FROM cp_cur WHERE a BETWEEN 100 AND 110;
DECLARE c1 NO SCROLL CURSOR FOR SELECT a FROM cp_cur WHERE a BETWEEN 100 AND 110;
FETCH 2 FROM c1;
UPDATE cp_cur SET b = -1 WHERE CURRENT OF c1 RETURNING a, b;
EXPLAIN (COSTS OFF) DECLARE c2 NO SCROLL CURSOR FOR SELECT a, b FROM cp_cur WHERE a BETWEEN 200 AND 210;
DECLARE c2 NO SCROLL CURSOR FOR SELECT a, b FROM cp_cur WHERE a BETWEEN 200 AND 210;
FETCH 3 FROM c2;
UPDATE cp_cur SET b = -2 WHERE CURRENT OF c2 RETURNING a, b;
EXPLAIN (COSTS OFF) DECLARE c3 NO SCROLL CURSOR FOR SELECT a, b FROM cp_cur WHERE b % 100 = 50;
DECLARE c3 NO SCROLL CURSOR FOR SELECT a, b FROM cp_cur WHERE b % 100 = 50;
FETCH 2 FROM c3;
DELETE FROM cp_cur WHERE CURRENT OF c3 RETURNING a, b;
COMMIT;
SELECT a, b FROM cp_cur WHERE b < 0 OR a IN (150, 250) ORDER BY a;

--
-- 5. A TID the scan finds dead to everyone gets its index entry marked dead
-- (kill_prior_tuple), also when the scan has read the index past it (the
-- read stream, with the advice off, and the scan's own reads): a loop of
-- aborted inserts read by index scans does not grow the index.
--
CREATE TABLE cp_kill (key int, data text) WITH (autovacuum_enabled = off);
CREATE INDEX cp_kill_key ON cp_kill (key);
INSERT INTO cp_kill VALUES (-1, 'allocates the metapage');
SELECT pg_relation_size('cp_kill_key') AS cp_kill_before \gset
CREATE FUNCTION cp_kill_loop() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..100 LOOP
        BEGIN
            IF EXISTS (SELECT * FROM cp_kill WHERE key > 0 AND key < 100) THEN
                RAISE EXCEPTION 'rows of aborted inserts seen';
            END IF;
            INSERT INTO cp_kill SELECT g, 'aborted' FROM generate_series(1, 100) g;
            RAISE SQLSTATE 'P0099';
        EXCEPTION WHEN SQLSTATE 'P0099' THEN
        END;
    END LOOP;
END
$$;
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexonlyscan = off;
SET LOCAL pg_dio.index_prefetch_advice = off;
SELECT p FROM cp_plan('SELECT * FROM cp_kill WHERE key > 0 AND key < 100') p LIMIT 1;
SELECT cp_kill_loop();
SELECT pg_relation_size('cp_kill_key') = :cp_kill_before AS index_did_not_grow;
ROLLBACK;
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexonlyscan = off;
SELECT cp_kill_loop();
SELECT pg_relation_size('cp_kill_key') = :cp_kill_before AS index_did_not_grow;
ROLLBACK;

--
-- 6. Statistics: idx_tup_fetch counts the heap rows an index scan fetched;
-- pg_stat_io counts direct reads as relation reads.
--
SELECT pg_stat_force_next_flush();
SELECT idx_tup_fetch AS cp_fetch_before FROM pg_stat_user_tables WHERE relname = 'cp_t' \gset
EXPLAIN (COSTS OFF) SELECT sum(unique2) FROM cp_t WHERE unique1 < 100;
SELECT sum(unique2) FROM cp_t WHERE unique1 < 100;
SELECT pg_stat_force_next_flush();
SELECT idx_tup_fetch - :cp_fetch_before AS fetched FROM pg_stat_user_tables WHERE relname = 'cp_t';
SET pg_dio.os_cache_check = off;
SET pg_dio.io_size = '8kB';
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('cp_t');
SELECT sum(reads) AS cp_io_before FROM pg_stat_io WHERE object = 'relation' AND context = 'normal' \gset
SELECT reads_completed AS cp_dio_before FROM pg_stat_aio_backends WHERE pid = pg_backend_pid() \gset
SELECT count(*) FROM cp_t;
SELECT pg_stat_force_next_flush();
SELECT reads_completed - :cp_dio_before AS cp_dio_reads
  FROM pg_stat_aio_backends WHERE pid = pg_backend_pid() \gset
SELECT :cp_dio_reads >= 50 AS read_directly,
       sum(reads) - :cp_io_before >= :cp_dio_reads AS direct_reads_in_pg_stat_io
  FROM pg_stat_io WHERE object = 'relation' AND context = 'normal';
RESET pg_dio.io_size;
RESET pg_dio.os_cache_check;

DROP TABLE cp_prt1, cp_prt2, cp_t, cp_cur, cp_kill;
DROP FUNCTION cp_compare, cp_plan, cp_kill_loop;
RESET pg_dio.direct_scan_threshold;
RESET pg_dio.enable_index_prefetch;
RESET max_parallel_workers_per_gather;
RESET jit;
