--
-- custom_nodes: run by test/run_tests.sh against a cluster that preloads
-- dio_test_custom (test/modules/) before pg_dio.  Its DioTestWrapper node
-- keeps a SeqScan of each "wrapped_" table in custom_plans and raises an
-- ERROR unless that child is still a SeqScan.  pg_dio does not know the
-- node, so it leaves the node's subtree as planned and swaps the scans
-- everywhere else.  PostgreSQL 19 names the SubPlan "expr_1" in EXPLAIN,
-- 18 "1": expected/custom_nodes_1.out is 19's output.
--
SHOW shared_preload_libraries;
CREATE EXTENSION pg_dio;
SET pg_dio.enable_direct_scan = on;
SET pg_dio.direct_scan_threshold = 0;
SET pg_dio.enable_index_prefetch = on;
SET pg_dio.index_prefetch_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE wrapped_t AS SELECT g AS id, g % 10 AS grp FROM generate_series(1, 10000) g;
CREATE TABLE plain_t AS SELECT g AS id, g % 10 AS grp FROM generate_series(1, 10000) g;
CREATE INDEX ON plain_t (id);
VACUUM (FREEZE, ANALYZE) wrapped_t, plain_t;

-- the wrapper's child stays core's Seq Scan; the same query on a table the
-- wrapper does not take gets a DirectSeqScan
EXPLAIN (COSTS OFF) SELECT count(*) FROM wrapped_t;
SELECT count(*), sum(id) FROM wrapped_t;
EXPLAIN (COSTS OFF) SELECT count(*) FROM plain_t;
SELECT count(*), sum(id) FROM plain_t;

-- in a join: core's nodes above are entered, the wrapper's subtree is not
EXPLAIN (COSTS OFF)
SELECT w.grp, count(*) FROM wrapped_t w JOIN plain_t p USING (id)
WHERE p.id <= 100 GROUP BY w.grp ORDER BY w.grp;
SELECT w.grp, count(*) FROM wrapped_t w JOIN plain_t p USING (id)
WHERE p.id <= 100 GROUP BY w.grp ORDER BY w.grp;

-- a parameterized rescan of the wrapper, and a subplan
EXPLAIN (COSTS OFF)
SELECT p.id, (SELECT count(*) FROM wrapped_t w WHERE w.id = p.id)
FROM plain_t p WHERE p.id <= 3 ORDER BY p.id;
SELECT p.id, (SELECT count(*) FROM wrapped_t w WHERE w.id = p.id)
FROM plain_t p WHERE p.id <= 3 ORDER BY p.id;

-- the same rows with pg_dio's scans off
SET pg_dio.enable_direct_scan = off;
SET pg_dio.enable_index_prefetch = off;
SELECT count(*), sum(id) FROM wrapped_t;
SELECT w.grp, count(*) FROM wrapped_t w JOIN plain_t p USING (id)
WHERE p.id <= 100 GROUP BY w.grp ORDER BY w.grp;
DROP TABLE wrapped_t, plain_t;
DROP EXTENSION pg_dio;
