--
-- pg_hint_plan's Set hints reach pg_dio's planning settings, whichever of
-- the two shared_preload_libraries lists first: the settings that place
-- pg_dio's nodes are read while the planner runs under the hint (scan_plan.c).
-- The file sets pg_dio's settings itself, so its output is the same with
-- pg_dio's scans off and forced on (test/extensions/pg_hint_plan.sh runs it
-- in both, with each preload order).
--
CREATE TABLE hs_o (id int PRIMARY KEY, grp int NOT NULL);
CREATE TABLE hs_i (id int PRIMARY KEY, o_id int NOT NULL, amt int NOT NULL);
INSERT INTO hs_o SELECT g, g % 50 FROM generate_series(1, 20000) g;
INSERT INTO hs_i SELECT g, (g * 7919) % 20000 + 1, g % 100 FROM generate_series(1, 100000) g;
CREATE INDEX hs_i_o_id ON hs_i (o_id);
VACUUM (ANALYZE) hs_o, hs_i;
SET max_parallel_workers_per_gather = 0;
SET pg_dio.enable_direct_scan = on;
SET pg_dio.direct_scan_threshold = 0;
SET pg_dio.enable_index_prefetch = on;
SET pg_dio.index_prefetch_min_rows = 0;
SET pg_dio.enable_probe_prefetch = on;

-- DirectSeqScan: the settings as they are, a hint that turns it off, and
-- the settings as they were again (a hint lasts one statement)
EXPLAIN (COSTS OFF) SELECT count(*) FROM hs_i;
/*+ Set(pg_dio.enable_direct_scan off) */
EXPLAIN (COSTS OFF) SELECT count(*) FROM hs_i;
/*+ Set(pg_dio.direct_scan_threshold 100000) */
EXPLAIN (COSTS OFF) SELECT count(*) FROM hs_i;
EXPLAIN (COSTS OFF) SELECT count(*) FROM hs_i;
SHOW pg_dio.enable_direct_scan;

-- PrefetchIndexScan
/*+ IndexScan(hs_i hs_i_o_id) */
EXPLAIN (COSTS OFF) SELECT sum(amt) FROM hs_i WHERE o_id < 3000;
/*+ IndexScan(hs_i hs_i_o_id) Set(pg_dio.enable_index_prefetch off) */
EXPLAIN (COSTS OFF) SELECT sum(amt) FROM hs_i WHERE o_id < 3000;
/*+ IndexScan(hs_i hs_i_o_id) Set(pg_dio.index_prefetch_min_rows 1000000) */
EXPLAIN (COSTS OFF) SELECT sum(amt) FROM hs_i WHERE o_id < 3000;

-- ProbePrefetch
/*+ Leading((o i)) NestLoop(o i) SeqScan(o) IndexScan(i hs_i_o_id) */
EXPLAIN (COSTS OFF)
SELECT count(*) FROM hs_o o WHERE EXISTS (SELECT 1 FROM hs_i i WHERE i.o_id = o.id AND i.amt > 90);
/*+ Leading((o i)) NestLoop(o i) SeqScan(o) IndexScan(i hs_i_o_id) Set(pg_dio.enable_probe_prefetch off) */
EXPLAIN (COSTS OFF)
SELECT count(*) FROM hs_o o WHERE EXISTS (SELECT 1 FROM hs_i i WHERE i.o_id = o.id AND i.amt > 90);

-- the other way: off in the session, on for one statement
SET pg_dio.enable_direct_scan = off;
SET pg_dio.enable_index_prefetch = off;
/*+ Set(pg_dio.enable_direct_scan on) */
EXPLAIN (COSTS OFF) SELECT count(*) FROM hs_i;
/*+ IndexScan(hs_i hs_i_o_id) Set(pg_dio.enable_index_prefetch on) */
EXPLAIN (COSTS OFF) SELECT sum(amt) FROM hs_i WHERE o_id < 3000;
EXPLAIN (COSTS OFF) SELECT count(*) FROM hs_i;
/*+ Set(pg_dio.enable_direct_scan on) */
SELECT count(*), sum(amt) FROM hs_i;
