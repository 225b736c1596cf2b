--
-- pg_hint_plan's hints with pg_dio preloaded beside it.  Each hinted plan,
-- then its rows.  test/extensions/pg_hint_plan.sh runs this file with
-- pg_dio's scans off (the expected output) and forced on, and compares the
-- two runs: pg_dio may only take the place of the scans the hints chose.
--
CREATE TABLE hp_o (id int PRIMARY KEY, grp int NOT NULL, pad text NOT NULL);
CREATE TABLE hp_i (id int PRIMARY KEY, o_id int NOT NULL, amt int NOT NULL, pad text NOT NULL);
CREATE TABLE hp_g (grp int PRIMARY KEY, name text NOT NULL);
INSERT INTO hp_o SELECT g, g % 50, repeat('o', 60) FROM generate_series(1, 20000) g;
-- five rows an outer row, scattered over the table
INSERT INTO hp_i SELECT g, (g * 7919) % 20000 + 1, g % 100, repeat('i', 60)
  FROM generate_series(1, 100000) g;
INSERT INTO hp_g SELECT g, 'group ' || g FROM generate_series(0, 49) g;
CREATE INDEX hp_i_o_id ON hp_i (o_id);
CREATE INDEX hp_i_amt ON hp_i (amt);
VACUUM (ANALYZE) hp_o, hp_i, hp_g;
SET max_parallel_workers_per_gather = 0;

-- scan methods
/*+ SeqScan(hp_i) */
EXPLAIN (COSTS OFF) SELECT count(*), sum(amt) FROM hp_i WHERE o_id BETWEEN 100 AND 400;
/*+ SeqScan(hp_i) */
SELECT count(*), sum(amt) FROM hp_i WHERE o_id BETWEEN 100 AND 400;
/*+ IndexScan(hp_i hp_i_o_id) */
EXPLAIN (COSTS OFF) SELECT count(*), sum(amt) FROM hp_i WHERE o_id BETWEEN 100 AND 4000;
/*+ IndexScan(hp_i hp_i_o_id) */
SELECT count(*), sum(amt) FROM hp_i WHERE o_id BETWEEN 100 AND 4000;
/*+ IndexScan(hp_i hp_i_amt) */
EXPLAIN (COSTS OFF) SELECT count(*), sum(o_id) FROM hp_i WHERE amt = 7 AND o_id < 15000;
/*+ IndexScan(hp_i hp_i_amt) */
SELECT count(*), sum(o_id) FROM hp_i WHERE amt = 7 AND o_id < 15000;
/*+ IndexOnlyScan(hp_i hp_i_o_id) */
EXPLAIN (COSTS OFF) SELECT count(*), sum(o_id) FROM hp_i WHERE o_id < 9000;
/*+ IndexOnlyScan(hp_i hp_i_o_id) */
SELECT count(*), sum(o_id) FROM hp_i WHERE o_id < 9000;
/*+ BitmapScan(hp_i hp_i_amt) */
EXPLAIN (COSTS OFF) SELECT count(*), sum(o_id) FROM hp_i WHERE amt < 3;
/*+ BitmapScan(hp_i hp_i_amt) */
SELECT count(*), sum(o_id) FROM hp_i WHERE amt < 3;
/*+ NoSeqScan(hp_o) Set(enable_bitmapscan off) */
EXPLAIN (COSTS OFF) SELECT count(*), max(pad) FROM hp_o WHERE grp = 3;
/*+ NoSeqScan(hp_o) Set(enable_bitmapscan off) */
SELECT count(*), max(pad) FROM hp_o WHERE grp = 3;
/*+ NoSeqScan(hp_o) Set(enable_bitmapscan off) */
EXPLAIN (COSTS OFF) SELECT count(*), max(pad) FROM hp_o WHERE id < 15000;
/*+ NoSeqScan(hp_o) Set(enable_bitmapscan off) */
SELECT count(*), max(pad) FROM hp_o WHERE id < 15000;
/*+ NoIndexScan(hp_i) Set(enable_bitmapscan off) */
EXPLAIN (COSTS OFF) SELECT count(*), sum(amt) FROM hp_i WHERE id BETWEEN 10 AND 20;
/*+ NoIndexScan(hp_i) Set(enable_bitmapscan off) */
SELECT count(*), sum(amt) FROM hp_i WHERE id BETWEEN 10 AND 20;

-- join methods and order (a hint names a table by its alias)
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) */
EXPLAIN (COSTS OFF)
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp < 10;
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) */
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp < 10;
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) NoMemoize(o i) */
EXPLAIN (COSTS OFF)
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.grp + 1;
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) NoMemoize(o i) */
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.grp + 1;
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) Memoize(o i) */
EXPLAIN (COSTS OFF)
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.grp + 1;
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) Memoize(o i) */
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.grp + 1;
/*+ Leading((o i)) HashJoin(o i) SeqScan(o) SeqScan(i) */
EXPLAIN (COSTS OFF)
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp < 10;
/*+ Leading((o i)) HashJoin(o i) SeqScan(o) SeqScan(i) */
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp < 10;
/*+ Leading((o i)) MergeJoin(o i) IndexScan(o hp_o_pkey) IndexScan(i hp_i_o_id) */
EXPLAIN (COSTS OFF)
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp < 10;
/*+ Leading((o i)) MergeJoin(o i) IndexScan(o hp_o_pkey) IndexScan(i hp_i_o_id) */
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp < 10;
/*+ Leading(((g o) i)) NestLoop(g o) HashJoin(g o i) SeqScan(g) IndexScan(o) SeqScan(i) */
EXPLAIN (COSTS OFF)
SELECT g.name, count(*) FROM hp_g g JOIN hp_o o ON o.grp = g.grp JOIN hp_i i ON i.o_id = o.id
  WHERE g.grp IN (3, 4) GROUP BY g.name ORDER BY g.name;
/*+ Leading(((g o) i)) NestLoop(g o) HashJoin(g o i) SeqScan(g) IndexScan(o) SeqScan(i) */
SELECT g.name, count(*) FROM hp_g g JOIN hp_o o ON o.grp = g.grp JOIN hp_i i ON i.o_id = o.id
  WHERE g.grp IN (3, 4) GROUP BY g.name ORDER BY g.name;
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) Rows(o i #50) */
EXPLAIN (COSTS OFF)
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp = 7;
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) Rows(o i #50) */
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp = 7;

-- semi and anti joins, the probes of a nested loop
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) */
EXPLAIN (COSTS OFF)
SELECT count(*) FROM hp_o o WHERE EXISTS (SELECT 1 FROM hp_i i WHERE i.o_id = o.id AND i.amt > 90);
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) */
SELECT count(*) FROM hp_o o WHERE EXISTS (SELECT 1 FROM hp_i i WHERE i.o_id = o.id AND i.amt > 90);
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) */
EXPLAIN (COSTS OFF)
SELECT count(*) FROM hp_o o WHERE NOT EXISTS (SELECT 1 FROM hp_i i WHERE i.o_id = o.id AND i.amt > 20);
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) */
SELECT count(*) FROM hp_o o WHERE NOT EXISTS (SELECT 1 FROM hp_i i WHERE i.o_id = o.id AND i.amt > 20);

-- a subquery run for each outer row, hinted inside (PostgreSQL 19 names it
-- "SubPlan expr_1": expected/hints_1.out)
/*+ SeqScan(o) IndexScan(i hp_i_o_id) */
EXPLAIN (COSTS OFF)
SELECT count(*) FROM hp_o o WHERE o.grp = 5 AND
  (SELECT sum(i.amt) FROM hp_i i WHERE i.o_id = o.id) > 200;
/*+ SeqScan(o) IndexScan(i hp_i_o_id) */
SELECT count(*) FROM hp_o o WHERE o.grp = 5 AND
  (SELECT sum(i.amt) FROM hp_i i WHERE i.o_id = o.id) > 200;

-- parallel plans
RESET max_parallel_workers_per_gather;
/*+ Parallel(i 2 hard) */
EXPLAIN (COSTS OFF)
SELECT count(*), sum(amt) FROM hp_i i WHERE pad LIKE 'i%';
/*+ Parallel(i 2 hard) */
SELECT count(*), sum(amt) FROM hp_i i WHERE pad LIKE 'i%';
/*+ Parallel(i 0 hard) SeqScan(i) */
EXPLAIN (COSTS OFF)
SELECT count(*), sum(amt) FROM hp_i i WHERE pad LIKE 'i%';
/*+ Parallel(i 0 hard) SeqScan(i) */
SELECT count(*), sum(amt) FROM hp_i i WHERE pad LIKE 'i%';
SET max_parallel_workers_per_gather = 0;

-- core settings set by a hint
/*+ Set(enable_hashjoin off) Set(enable_mergejoin off) Leading((o i)) */
EXPLAIN (COSTS OFF)
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp < 2;
/*+ Set(enable_hashjoin off) Set(enable_mergejoin off) Leading((o i)) */
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp < 2;
/*+ Set(enable_indexscan off) Set(enable_bitmapscan off) */
EXPLAIN (COSTS OFF)
SELECT count(*) FROM hp_i WHERE o_id = 77;
/*+ Set(enable_indexscan off) Set(enable_bitmapscan off) */
SELECT count(*) FROM hp_i WHERE o_id = 77;

-- a prepared statement keeps the hints of the text it was prepared from
PREPARE hp_p(int) AS
/*+ Leading((o i)) NestLoop(o i) IndexScan(i hp_i_o_id) */
SELECT count(*), sum(i.amt) FROM hp_o o JOIN hp_i i ON i.o_id = o.id WHERE o.grp = $1;
EXPLAIN (COSTS OFF) EXECUTE hp_p(3);
EXECUTE hp_p(3);
EXECUTE hp_p(4);
DEALLOCATE hp_p;

-- the hint table, found by the statement's query ID (which pg_dio's
-- statistics read too), for any constant
CREATE EXTENSION pg_hint_plan;
CREATE FUNCTION hp_query_id(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  j json;
BEGIN
  EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF, FORMAT JSON) ' || q INTO j;
  RETURN (j->0->>'Query Identifier')::bigint;
END $$;
SET compute_query_id = on;
INSERT INTO hint_plan.hints (query_id, application_name, hints)
  VALUES (hp_query_id('SELECT count(*), sum(amt) FROM hp_i WHERE o_id = 77'), '', 'SeqScan(hp_i)');
RESET compute_query_id;
SET pg_hint_plan.enable_hint_table = on;
EXPLAIN (COSTS OFF) SELECT count(*), sum(amt) FROM hp_i WHERE o_id = 77;
SELECT count(*), sum(amt) FROM hp_i WHERE o_id = 78;
SET pg_hint_plan.enable_hint_table = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(amt) FROM hp_i WHERE o_id = 77;
SELECT count(*), sum(amt) FROM hp_i WHERE o_id = 78;
