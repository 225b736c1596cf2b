--
-- probe_prefetch: ProbePrefetch stands between a nested loop and its outer
-- plan, reads outer rows ahead and advises the heap blocks of the inner's
-- index probes.  It returns the outer rows unchanged, so every join returns
-- core's rows in core's order; it is planned only where reading the outer
-- side ahead cannot be seen.
--
SET jit = off;
SET max_parallel_workers_per_gather = 0;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
SET enable_bitmapscan = off;
SET pg_dio.direct_scan_threshold = 0;
-- the advice path first; the direct reads for forward probes have their own
-- section at the end
SET pg_dio.probe_direct_read = off;

CREATE TABLE pp_t (id int, g int, k text, pad text) WITH (autovacuum_enabled = off);
INSERT INTO pp_t SELECT i, i / 4, 'k' || (i % 5000), repeat('p', 1500)
  FROM generate_series(1, 20000) i;
CREATE UNIQUE INDEX pp_t_id ON pp_t (id);
CREATE INDEX pp_t_g ON pp_t (g);
CREATE INDEX pp_t_k ON pp_t (k, id);
CREATE TABLE pp_o (x int, y int, s text) WITH (autovacuum_enabled = off);
INSERT INTO pp_o SELECT (i * 7919) % 20011, i % 7, 'k' || (i * 13 % 5000)
  FROM generate_series(1, 2000) i;
INSERT INTO pp_o VALUES (NULL, 1, NULL), (-5, 2, 'none');
VACUUM (ANALYZE) pp_t, pp_o;
-- pp_t with a quarter of its blocks not all-visible: an index-only inner
-- over it fetches heap blocks (over pp_t, ProbePrefetch is not planned for
-- one: its probes would read index leaves only)
CREATE TABLE pp_v WITH (autovacuum_enabled = off) AS SELECT * FROM pp_t;
CREATE UNIQUE INDEX pp_v_id ON pp_v (id);
CREATE INDEX pp_v_g ON pp_v (g);
CREATE INDEX pp_v_k ON pp_v (k, id);
VACUUM (ANALYZE) pp_v;
UPDATE pp_v SET g = g WHERE id % 20 = 0;
ANALYZE pp_v;
SELECT relallvisible < relpages * 0.99 AS not_all_visible FROM pg_class WHERE relname = 'pp_v';

-- Run a query with ProbePrefetch allowed and not: the pg_dio nodes of the
-- first plan, and whether both return the same rows in the same order (or as
-- multisets) and, apart from pg_dio's nodes, the same plan.
CREATE FUNCTION pp_compare(q text, ordered boolean DEFAULT true) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    p_on text[];
    p_off text[];
    r_on text[];
    r_off text[];
    nodes text;
BEGIN
    PERFORM set_config('pg_dio.enable_probe_prefetch', 'on', true);
    p_on := ARRAY(SELECT dio_plan(q));
    SELECT string_agg(m[1], ', ') INTO nodes
      FROM unnest(p_on) l, regexp_matches(l, 'Custom Scan \((\w+)\)', 'g') m;
    EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', q) INTO r_on;
    PERFORM set_config('pg_dio.enable_probe_prefetch', 'off', true);
    PERFORM set_config('pg_dio.enable_index_prefetch', 'off', true);
    PERFORM set_config('pg_dio.enable_direct_scan', 'off', true);
    p_off := ARRAY(SELECT dio_plan(q));
    EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', q) INTO r_off;
    PERFORM set_config('pg_dio.enable_probe_prefetch', 'on', true);
    PERFORM set_config('pg_dio.enable_index_prefetch', 'on', true);
    PERFORM set_config('pg_dio.enable_direct_scan', 'on', true);
    IF NOT ordered THEN
        r_on := ARRAY(SELECT x FROM unnest(r_on) x ORDER BY x);
        r_off := ARRAY(SELECT x FROM unnest(r_off) x ORDER BY x);
    END IF;
    IF dio_core_plan(p_on) IS DISTINCT FROM p_off THEN
        RETURN E'PLANS DIFFER\n' || array_to_string(p_on, E'\n') || E'\n---- core:\n' ||
               array_to_string(p_off, E'\n');
    END IF;
    RETURN CASE WHEN r_on IS NOT DISTINCT FROM r_off
                THEN 'same: ' || coalesce(cardinality(r_on), 0) || ' rows'
                ELSE 'DIFFERENT: ' || coalesce(cardinality(r_on), 0) || ' vs ' ||
                     coalesce(cardinality(r_off), 0) || ' rows'
           END || ', ' || coalesce(nodes, 'no pg_dio node');
END
$$;

-- EXPLAIN ANALYZE (JSON): ProbePrefetch's figures and its outer's rows.
CREATE FUNCTION pp_counts(q text, OUT probes bigint, OUT advised bigint,
                          OUT cached bigint, OUT outer_rows numeric, OUT outer_loops numeric,
                          OUT oscached bigint, OUT chunks bigint, OUT leaves bigint,
                          OUT sampled bigint)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
    SELECT (n ->> 'Probes')::bigint, (n ->> 'Heap Blocks Advised')::bigint,
           (n ->> 'Heap Blocks In Shared Buffers')::bigint,
           (n -> 'Plans' -> 0 ->> 'Actual Rows')::numeric,
           (n -> 'Plans' -> 0 ->> 'Actual Loops')::numeric,
           (n ->> 'Heap Blocks OS-Cached')::bigint, (n ->> 'Heap Chunks Advised')::bigint,
           (n ->> 'Leaf Pages Advised')::bigint, (n ->> 'Sampled Probes')::bigint
      INTO probes, advised, cached, outer_rows, outer_loops, oscached, chunks, leaves, sampled
      FROM jsonb_path_query(j, 'strict $.**') n
     WHERE n ->> 'Custom Plan Provider' = 'ProbePrefetch'
     LIMIT 1;
END
$$;

--
-- Where it stands: below the join, over the outer scan
--
SELECT dio_plan('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x');
-- an outer that scans the relation the join probes stays core's Seq Scan
-- (its buffered reads leave the blocks cached for the probes), and gets no
-- ProbePrefetch, which would find every block cached; an outer that scans
-- another relation is a DirectSeqScan
SELECT dio_plan('SELECT a.id, b.g FROM pp_t a JOIN pp_t b ON b.id = a.id + 1 WHERE a.g % 50 = 0');
SELECT dio_plan('SELECT a.id, b.g FROM (SELECT x AS id FROM pp_o WHERE y = 1) a
                 JOIN pp_t b ON b.id = a.id + 1');
-- a relation that two Seq Scans of the statement read stays core's Seq Scan
-- in both: the first one's buffered reads leave it in the OS page cache for
-- the second, where direct reads would read it from the device twice;
-- unless it is larger than effective_cache_size
SELECT dio_plan('SELECT count(*) FROM pp_o a WHERE a.y > (SELECT avg(y) FROM pp_o)');
SET effective_cache_size = '8kB';
SELECT dio_plan('SELECT count(*) FROM pp_o a WHERE a.y > (SELECT avg(y) FROM pp_o)');
RESET effective_cache_size;
SELECT pp_compare('SELECT a.id, b.g FROM pp_t a JOIN pp_t b ON b.id = a.id + 1 WHERE a.g % 50 = 0');
EXPLAIN (VERBOSE, COSTS OFF) SELECT o.x, o.s, t.g FROM pp_o o JOIN pp_t t ON t.id = o.x + 1 WHERE o.y = 3;
DO $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x' INTO j;
    RAISE NOTICE 'JSON: %', (SELECT n - 'Plans' FROM jsonb_path_query(j, 'strict $.**') n
                               WHERE n ->> 'Custom Plan Provider' = 'ProbePrefetch');
END
$$;

--
-- Every join type, every kind of inner scan: core's rows in core's order
--
SELECT pp_compare('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x');
SELECT pp_compare('SELECT o.x, t.id, t.k FROM pp_o o LEFT JOIN pp_t t ON t.id = o.x');
SELECT pp_compare('SELECT o.x FROM pp_o o WHERE EXISTS (SELECT FROM pp_v t WHERE t.id = o.x)');
SELECT pp_compare('SELECT o.x FROM pp_o o WHERE NOT EXISTS (SELECT FROM pp_v t WHERE t.id = o.x)');
-- the outer a join (over it, and over the outer join's own outer)
SELECT pp_compare('SELECT ab.x, t.pad FROM (SELECT a.x FROM pp_o a JOIN pp_v b ON b.id = a.x + 1 OFFSET 0) ab
                   JOIN pp_t t ON t.id = ab.x');
-- the outer sorted and grouped
SELECT pp_compare('SELECT a.y, a.n, t.pad FROM (SELECT y, count(*) AS n FROM pp_o GROUP BY y) a
                   JOIN pp_t t ON t.id = a.n ORDER BY a.y');
-- more rows a probe, on as many blocks, or on one block (g follows the
-- table's order): the inner stays core's Index Scan, its blocks in flight
SELECT pp_compare('SELECT o.x, t.id, t.pad FROM pp_o o JOIN pp_t t ON t.k = o.s');
SELECT pp_compare('SELECT o.x, t.id, t.pad FROM pp_o o JOIN pp_t t ON t.g = o.x / 4');
-- but a semi or anti join reads one row of each probe: core's Index Scan
SELECT pp_compare('SELECT o.x FROM pp_o o WHERE EXISTS (SELECT FROM pp_v t WHERE t.g = o.x / 4)');
SELECT pp_compare('SELECT o.x FROM pp_o o WHERE NOT EXISTS (SELECT FROM pp_v t WHERE t.g = o.x / 4)');
-- index-only inner, over a heap a quarter of whose blocks are not
-- all-visible (its probes fetch heap blocks)
SELECT pp_compare('SELECT o.x, t.id FROM pp_o o JOIN pp_v t ON t.id BETWEEN o.x AND o.x + 3');
-- over an all-visible heap its probes read index leaves only, which do not
-- steer the look-ahead: not planned
SELECT pp_compare('SELECT o.x, t.id FROM pp_o o JOIN pp_t t ON t.id BETWEEN o.x AND o.x + 3');
-- two parameters, text keys (by reference), NULL keys
SELECT pp_compare('SELECT o.s, t.id FROM pp_o o JOIN pp_v t ON t.k = o.s AND t.id > o.y * 1000');
SELECT pp_compare('SELECT o.x, o.s, t.id FROM pp_o o LEFT JOIN pp_v t ON t.k = o.s AND t.id < 100');
-- a parameter computed from the outer row
SELECT pp_compare('SELECT o.x, t.g FROM pp_o o JOIN pp_t t ON t.id = (o.x * 3) % 20000 + 1');
-- Memoize over the inner
SET enable_memoize = on;
SELECT dio_plan('SELECT o.y, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.y');
SELECT pp_compare('SELECT o.y, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.y');
SET enable_memoize = off;
-- stopped early: LIMIT, and a cursor read in part
SELECT pp_compare('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x LIMIT 7');
BEGIN;
DECLARE c NO SCROLL CURSOR FOR SELECT o.x, t.id FROM pp_o o JOIN pp_v t ON t.id = o.x;
FETCH 3 FROM c;
FETCH 2 FROM c;
CLOSE c;
COMMIT;
-- rescanned: the join inside a correlated subquery, run once per outer row
SELECT pp_compare('SELECT a.y, (SELECT count(*) FROM pp_o o JOIN pp_v t ON t.id = o.x WHERE o.y = a.y)
                     FROM (SELECT DISTINCT y FROM pp_o) a ORDER BY a.y');
-- a look-ahead of one row
SET pg_dio.probe_prefetch_distance = 1;
SELECT pp_compare('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x');
RESET pg_dio.probe_prefetch_distance;
-- in parallel workers, the outer a parallel scan
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT dio_plan('SELECT sum(t.g) FROM pp_o o JOIN pp_t t ON t.id = o.x');
SELECT pp_compare('SELECT sum(t.g), count(*) FROM pp_o o JOIN pp_t t ON t.id = o.x');
-- (its own figures are each process's, EXPLAIN shows the leader's; the
-- outer's rows are counted over all the processes)
SELECT round(outer_rows * outer_loops) = (SELECT count(*) FROM pp_o) AS every_outer_row
  FROM pp_counts('SELECT sum(t.g) FROM pp_o o JOIN pp_t t ON t.id = o.x');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

--
-- Where it does not stand
--
-- a volatile outer scan would be evaluated further than core evaluates it
SELECT dio_plan('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x WHERE o.x + random() * 0 >= 0');
-- (a volatile join filter is the join's: evaluated as core does)
SELECT dio_plan('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x WHERE random() >= 0');
-- not a plain SELECT
SELECT dio_plan('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x FOR UPDATE OF o');
-- a volatile expression anywhere in the outer plan
SELECT dio_plan('SELECT ab.x, t.pad FROM (SELECT a.x FROM pp_o a JOIN pp_o b ON b.x = a.x
                   WHERE b.y + random() * 0 >= 0 OFFSET 0) ab JOIN pp_t t ON t.id = ab.x');
-- where the join may stop early, an outer expression that could raise an
-- error for a row core never reaches (100 / 0 in the 4th row of pp_o, or in
-- the 8th, the second with y = 1): below a LIMIT, in an EXISTS subquery, in
-- a declared cursor
SELECT x, y FROM pp_o LIMIT 8;
SELECT pp_compare('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x
                   WHERE 100 / (o.x - 11665) <> 7 LIMIT 3');
SELECT pp_compare('SELECT a.y FROM (SELECT DISTINCT y FROM pp_o) a
                   WHERE a.y < 0 OR EXISTS (SELECT FROM pp_o o JOIN pp_v t ON t.id = o.x
                                            WHERE 100 / (o.x - 3319) <> 7 AND o.y = a.y)
                   ORDER BY a.y');
BEGIN;
DECLARE c NO SCROLL CURSOR FOR SELECT o.x, t.id FROM pp_o o JOIN pp_v t ON t.id = o.x
  WHERE 100 / (o.x - 11665) <> 7;
FETCH 3 FROM c;
CLOSE c;
COMMIT;
-- (where nothing stops it early, the same expression: ProbePrefetch, and
-- core's error)
SELECT dio_plan('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x
                 WHERE 100 / (o.x - 11665) <> 7');
SELECT count(*) FROM pp_o o JOIN pp_t t ON t.id = o.x WHERE 100 / (o.x - 11665) <> 7;
-- (nor a key computed from the outer row below a LIMIT)
SELECT pp_compare('SELECT o.x, t.g FROM pp_o o JOIN pp_t t ON t.id = (o.x * 3) % 20000 + 1 LIMIT 3');
-- the inner is not a parameterized index scan
SELECT dio_plan('SELECT o.x, t.id FROM pp_o o JOIN pp_t t ON t.k = o.s || ''x'' AND t.pad = ''-''');
-- disabled
SET pg_dio.enable_probe_prefetch = off;
SELECT dio_plan('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x');
RESET pg_dio.enable_probe_prefetch;

--
-- What it did: every outer row probed when the heap is cold; once the
-- blocks are in shared buffers, or in the OS page cache, it probes one row
-- in 32, then one in 64, and so on up to one in 1024
--
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT probes > outer_rows * 3 / 4 AS probed, advised > 0 AS advised_reads,
       advised + cached <= probes AS one_block_a_probe, chunks = 0 AS block_by_block
  FROM pp_counts('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x');
SELECT probes < outer_rows / 32 AS sampling_when_cached, cached > 0 AS saw_cached,
       sampled > 0 AND sampled < probes AS sampled_after_32
  FROM pp_counts('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x');
-- (out of shared buffers, in the OS page cache: Linux 6.5 and later tell
-- through cachestat(2), which CI's kernels have; pg_dio.os_cache_check off: no
-- row).  The table read buffered first, so that every block is in the page cache.
SET pg_dio.enable_direct_scan = off;
SELECT count(*) FROM pp_t;
RESET pg_dio.enable_direct_scan;
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t', os_cache => false);
-- (whether it then samples depends on every block staying in the page
-- cache, which the kernel does not promise: not checked here)
SELECT shared_buffers = 0 AS out_of_shared_buffers
  FROM pg_dio_residency('pp_t') WHERE fork = 'main';
SELECT oscached > 0 AS saw_os_cached
  FROM pp_counts('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x')
 WHERE current_setting('pg_dio.os_cache_check')::boolean;

-- a btree probe's leaf page is advised before the probe runs (the levels
-- above the leaves descended as the probe will descend them), with the
-- index out of shared buffers too; on one key, on a text key with a lower
-- bound on the next column, and with NULL keys (nothing to advise)
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t_id');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT leaves > 0 AS leaves_advised
  FROM pp_counts('SELECT o.x, t.pad FROM pp_o o JOIN pp_t t ON t.id = o.x');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t_k');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT leaves > 0 AS leaves_advised
  FROM pp_counts('SELECT o.s, t.g FROM pp_o o JOIN pp_t t ON t.k = o.s AND t.id > o.y * 1000');
SELECT pp_compare('SELECT o.s, t.g FROM pp_o o JOIN pp_t t ON t.k = o.s AND t.id > o.y * 1000');

-- dense probes: 2,000 of them wanting 4 blocks each of pp_t's 4,000, so
-- half or more of the heap.  Then it advises the 128 kB chunks of their
-- blocks, each chunk once (pp_t_k's rows with one k lie 5,000 rows apart).
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT chunks > 0 AS chunks_advised,
       chunks <= (SELECT pg_relation_size('pp_t') / 8192 / 16 + 1) AS each_chunk_once,
       advised >= chunks * 8 AS whole_chunks
  FROM pp_counts('SELECT o.s, t.id, t.g FROM pp_o o JOIN pp_t t ON t.k = o.s');
SELECT pp_compare('SELECT o.s, t.id, t.g FROM pp_o o JOIN pp_t t ON t.k = o.s');
-- crowded probes: 8,000 of them wanting 4 blocks each, each of pp_t's
-- 4,000 blocks about 8 times: every chunk advised, each once
CREATE TABLE pp_oc WITH (autovacuum_enabled = off) AS
  SELECT 'k' || (i * 13 % 5000) AS s FROM generate_series(1, 8000) i;
ANALYZE pp_oc;
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT chunks >= (SELECT pg_relation_size('pp_t') / 8192 / 16 * 9 / 10) AS every_chunk,
       chunks <= (SELECT pg_relation_size('pp_t') / 8192 / 16 + 1) AS each_chunk_once
  FROM pp_counts('SELECT o.s, t.id, t.g FROM pp_oc o JOIN pp_t t ON t.k = o.s');
SELECT pp_compare('SELECT o.s, t.id, t.g FROM pp_oc o JOIN pp_t t ON t.k = o.s');
-- in a parallel query, whether the probes are dense is judged over the rows
-- the planner expects of all its processes, since a chunk one of them reads
-- is in the OS page cache for the others' probes: 857 probes of 4 blocks
-- each, a process's share (1 in 2.4) below half of pp_t's blocks, all of
-- them above.  No worker starts here, so the leader runs every probe and
-- advises in chunks from its first probes on, not only once it has probed
-- more rows than its share.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers = 0;
SELECT dio_plan('SELECT o.s, t.id, t.g FROM pp_o o JOIN pp_t t ON t.k = o.s WHERE o.y < 3');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT chunks > 0 AS chunks_advised, advised - chunks * 16 < 64 AS in_chunks_from_the_start
  FROM pp_counts('SELECT o.s, t.id, t.g FROM pp_o o JOIN pp_t t ON t.k = o.s WHERE o.y < 3');
SELECT pp_compare('SELECT o.s, t.id, t.g FROM pp_o o JOIN pp_t t ON t.k = o.s WHERE o.y < 3', false);
RESET max_parallel_workers;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
-- probes walking the heap forward (the outer in pp_t's order, a block to
-- read every 2 or so, 2,000 of pp_t's 4,000: not dense), without direct
-- reads: nothing is advised once the walk is seen to go forward, since the
-- kernel reads ahead for the inner's own reads in that order, and the node
-- goes to sampling (of the walk's 2,000 blocks, only a few before a run of
-- forward blocks is seen are advised)
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT chunks = 0 AS no_chunks, advised < 32 AS few_blocks,
       sampled > 0 AS sampling, probes < outer_rows / 4 AS few_probes
  FROM pp_counts('SELECT o.x, t.pad FROM (SELECT x FROM pp_o ORDER BY x) o
                  JOIN pp_t t ON t.id = o.x');
SELECT pp_compare('SELECT o.x, t.pad FROM (SELECT x FROM pp_o ORDER BY x) o
                   JOIN pp_t t ON t.id = o.x');

-- a correlated SubPlan in the inner's filter whose plan is an index scan
-- (TPC-H Q20's shape): its first index column is the inner's column that
-- the inner's index ties to the join's parameter (p.k = o.s), so the
-- SubPlan's index is probed too, on that value (its condition on p.x,
-- which no parameter gives, dropped), and its heap blocks advised
CREATE TABLE pp_ps (k text, x int, q int) WITH (autovacuum_enabled = off);
INSERT INTO pp_ps SELECT 'k' || (i % 5000), (i * 37) % 20000, i % 3
  FROM generate_series(1, 20000) i;
CREATE INDEX pp_ps_k ON pp_ps (k);
VACUUM (ANALYZE) pp_ps;
CREATE FUNCTION pp_sub_advised(q text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
    RETURN (SELECT (n ->> 'SubPlan Heap Blocks Advised')::bigint
              FROM jsonb_path_query(j, 'strict $.**') n
             WHERE n ->> 'Custom Plan Provider' = 'ProbePrefetch' LIMIT 1);
END
$$;
SELECT dio_plan('SELECT o.s, p.x FROM pp_o o JOIN pp_ps p ON p.k = o.s
                 WHERE p.q > (SELECT count(t.pad) FROM pp_t t WHERE t.k = p.k AND t.id > p.x)');
SELECT pp_compare('SELECT o.s, p.x FROM pp_o o JOIN pp_ps p ON p.k = o.s
                   WHERE p.q > (SELECT count(t.pad) FROM pp_t t WHERE t.k = p.k AND t.id > p.x)');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_sub_advised('SELECT o.s, p.x FROM pp_o o JOIN pp_ps p ON p.k = o.s
                       WHERE p.q > (SELECT count(t.pad) FROM pp_t t
                                     WHERE t.k = p.k AND t.id > p.x)') > 0 AS subplan_advised;
-- not where the SubPlan's first index column is one no parameter gives
-- (t.id = p.x), nor for a hashed SubPlan (NOT IN): the inner's index only
SELECT dio_plan('SELECT o.s, p.x FROM pp_o o JOIN pp_ps p ON p.k = o.s
                 WHERE p.q > (SELECT count(t.pad) FROM pp_t t WHERE t.id = p.x)');
SELECT dio_plan('SELECT o.s, p.x FROM pp_o o JOIN pp_ps p ON p.k = o.s
                 WHERE p.x NOT IN (SELECT t.id FROM pp_t t WHERE t.g < 10)');

-- a hash join whose outer hash key runs a correlated SubPlan for each outer
-- row (TPC-H Q2's "(SubPlan 1) = ps_supplycost"): ProbePrefetch over the
-- join's outer probes the index scan each run of the SubPlan starts with
-- (pp_t_id on o.x); the rows are core's (the SubPlan's name in the hash
-- condition as PostgreSQL 18 gives it: 19 names it "expr_1")
SET enable_hashjoin = on;
SELECT regexp_replace(dio_plan, 'SubPlan expr_(\d+)', 'SubPlan \1') AS dio_plan
  FROM dio_plan('SELECT o.x, p.k FROM pp_o o JOIN pp_ps p
                   ON p.x = o.x AND p.q = (SELECT min(t.g) % 3 FROM pp_t t WHERE t.id = o.x)
                 WHERE p.x % 10 <> 0');
SELECT pp_compare('SELECT o.x, p.k FROM pp_o o JOIN pp_ps p
                     ON p.x = o.x AND p.q = (SELECT min(t.g) % 3 FROM pp_t t WHERE t.id = o.x)
                   WHERE p.x % 10 <> 0', false);
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT probes > 0 AS probed, advised > 0 AS advised, outer_rows = 2002 AS all_outer_rows
  FROM pp_counts('SELECT o.x, p.k FROM pp_o o JOIN pp_ps p
                    ON p.x = o.x AND p.q = (SELECT min(t.g) % 3 FROM pp_t t WHERE t.id = o.x)
                  WHERE p.x % 10 <> 0');
-- not where the SubPlan's index scan has no equality on its index's first
-- column
SELECT regexp_replace(dio_plan, 'SubPlan expr_(\d+)', 'SubPlan \1') AS dio_plan
  FROM dio_plan('SELECT o.x, p.k FROM pp_o o JOIN pp_ps p
                   ON p.x = o.x AND p.q = (SELECT min(t.g) % 3 FROM pp_t t
                                            WHERE t.id BETWEEN o.x AND o.x + 2)
                 WHERE p.x % 10 <> 0');
SET enable_hashjoin = off;

-- a deep plan is walked in time linear in its nodes (a join of 24 tables)
SET statement_timeout = '30s';
DO $$
BEGIN
    EXECUTE (SELECT 'EXPLAIN SELECT count(*) FROM pp_o a1'
                    || string_agg(format(' JOIN pp_o a%s ON a%s.x = a%s.x', i, i, i - 1), '' ORDER BY i)
               FROM generate_series(2, 24) i);
END
$$;
RESET statement_timeout;

--
-- Direct reads for probes that walk the heap forward
-- (pg_dio.probe_direct_read): where the inner index follows its heap's order
-- (pp_t_id, correlation 1), ProbePrefetch reads the 128 kB chunks ahead of
-- forward probes with O_DIRECT, and the inner, a PrefetchIndexScan whatever
-- its rows, takes its blocks' images from them: only blocks all-visible and
-- not in shared buffers when read, and images that pass verification and
-- are all-visible; every other block through the buffer manager
--
SET pg_dio.probe_direct_read = on;
VACUUM (FREEZE) pp_t;
-- EXPLAIN ANALYZE (JSON): the feed's figures and the inner's direct blocks
CREATE FUNCTION pp_direct(q text, OUT chunks bigint, OUT blocks bigint, OUT used bigint,
                          OUT unusable bigint, OUT stopped boolean, OUT inner_direct bigint,
                          OUT inner_read bigint, OUT probes bigint, OUT outer_rows numeric)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
    SELECT (n ->> 'Direct Chunks')::bigint, (n ->> 'Direct Blocks')::bigint,
           (n ->> 'Direct Blocks Used')::bigint, (n ->> 'Direct Blocks Unusable')::bigint,
           (n ->> 'Direct Reads Stopped')::boolean, (n ->> 'Probes')::bigint,
           (n -> 'Plans' -> 0 ->> 'Actual Rows')::numeric * (n -> 'Plans' -> 0 ->> 'Actual Loops')::numeric
      INTO chunks, blocks, used, unusable, stopped, probes, outer_rows
      FROM jsonb_path_query(j, 'strict $.**') n
     WHERE n ->> 'Custom Plan Provider' = 'ProbePrefetch' LIMIT 1;
    SELECT (n ->> 'Heap Blocks Direct')::bigint, (n ->> 'Heap Blocks Read')::bigint
      INTO inner_direct, inner_read
      FROM jsonb_path_query(j, 'strict $.**') n
     WHERE n ->> 'Custom Plan Provider' = 'PrefetchIndexScan' LIMIT 1;
END
$$;
SELECT dio_plan('SELECT o.x, t.pad FROM (SELECT x FROM pp_o ORDER BY x) o JOIN pp_t t ON t.id = o.x');
-- a semi join's probe of one row too
SELECT dio_plan('SELECT o.x FROM (SELECT x FROM pp_o ORDER BY x) o
                 WHERE EXISTS (SELECT FROM pp_t t WHERE t.id = o.x AND t.g >= 0)');
-- cold: the chunks read once each, the inner's blocks taken from them, and
-- only every few rows probed (the chunks read ahead hold the rows between)
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT chunks > 0 AS chunks_read,
       chunks <= (SELECT pg_relation_size('pp_t') / 8192 / 16 + 1) AS each_chunk_once,
       blocks = chunks * 16 AS all_blocks_usable, used > 0 AS images_used, unusable = 0 AS all_verified,
       inner_direct >= used AS inner_took_them, inner_read < used / 20 AS few_buffered,
       probes < outer_rows / 4 AS strided
  FROM pp_direct('SELECT o.x, t.pad FROM (SELECT x FROM pp_o ORDER BY x) o JOIN pp_t t ON t.id = o.x');
-- nothing left behind: neither in shared buffers nor in the OS page cache
SELECT shared_buffers < 100 AS few_in_shared_buffers, os_cache < 100 AS few_os_cached
  FROM pg_dio_residency('pp_t') WHERE fork = 'main';
-- core's rows in core's order, cold (the inner's images) and warm
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_compare('SELECT o.x, t.id, t.g, t.k, length(t.pad) FROM (SELECT x FROM pp_o ORDER BY x) o
                   JOIN pp_t t ON t.id = o.x');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_compare('SELECT o.x FROM (SELECT x FROM pp_o ORDER BY x) o
                   WHERE EXISTS (SELECT FROM pp_t t WHERE t.id = o.x AND t.g >= 0)');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_compare('SELECT o.x, t.id FROM (SELECT x FROM pp_o ORDER BY x) o
                   LEFT JOIN pp_t t ON t.id = o.x + 3 AND t.g % 3 = 0');
-- rescanned: the join inside a correlated subquery, run once per outer row
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_compare('SELECT a.y, (SELECT sum(length(t.pad)) FROM (SELECT x FROM pp_o WHERE y = a.y ORDER BY x) o
                                 JOIN pp_t t ON t.id = o.x)
                     FROM (SELECT DISTINCT y FROM pp_o) a ORDER BY a.y');
-- blocks changed since the freeze are not all-visible: read through the
-- buffer manager, the chunk's other blocks still directly
UPDATE pp_t SET g = g WHERE id % 400 = 0;
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT blocks < chunks * 16 AS changed_blocks_left_out, used > 0 AS images_used, unusable = 0 AS all_verified
  FROM pp_direct('SELECT o.x, t.pad FROM (SELECT x FROM pp_o ORDER BY x) o JOIN pp_t t ON t.id = o.x');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_compare('SELECT o.x, t.id, t.g, length(t.pad) FROM (SELECT x FROM pp_o ORDER BY x) o
                   JOIN pp_t t ON t.id = o.x');
VACUUM (FREEZE) pp_t;
-- warm (in the OS page cache): nothing read directly
SET pg_dio.enable_direct_scan = off;
SELECT sum(length(pad)) FROM pp_t;
RESET pg_dio.enable_direct_scan;
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t', os_cache => false);
SELECT chunks = 0 AS none_read_directly
  FROM pp_direct('SELECT o.x, t.pad FROM (SELECT x FROM pp_o ORDER BY x) o JOIN pp_t t ON t.id = o.x');
-- probes that walk forward but want few blocks of each chunk (every 12th
-- block): the feed stops reading once the chunks it gave back were used
-- less than a fifth, and the rest is advised
CREATE TABLE pp_sparse AS SELECT i FROM generate_series(1, 20000, 48) i;
ANALYZE pp_sparse;
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT stopped AS stopped_when_sparse, chunks < (SELECT pg_relation_size('pp_t') / 8192 / 16 / 2) AS not_every_chunk
  FROM pp_direct('SELECT o.i, t.pad FROM pp_sparse o JOIN pp_t t ON t.id = o.i');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_compare('SELECT o.i, t.id, length(t.pad) FROM pp_sparse o JOIN pp_t t ON t.id = o.i');
-- where it is not planned: index-only inner, a heap smaller than
-- pg_dio.direct_scan_threshold, the inner index not in the heap's order
-- (pp_t_k), an outer that reads the inner's relation itself (its reads
-- leave the probes' blocks cached: here through an index; with a Seq Scan
-- there is no ProbePrefetch at all), and the setting off
SELECT dio_plan('SELECT o.x, t.id FROM (SELECT x FROM pp_o ORDER BY x) o JOIN pp_v t ON t.id BETWEEN o.x AND o.x + 3');
SET pg_dio.direct_scan_threshold = 100000;
SELECT dio_plan('SELECT o.x, t.pad FROM (SELECT x FROM pp_o ORDER BY x) o JOIN pp_t t ON t.id = o.x');
SET pg_dio.direct_scan_threshold = 0;
SELECT chunks IS NULL AS no_feed
  FROM pp_direct('SELECT o.s, t.pad FROM (SELECT s FROM pp_o ORDER BY s) o JOIN pp_t t ON t.k = o.s');
SET enable_seqscan = off;
SELECT dio_plan('SELECT a.id, b.pad FROM (SELECT id FROM pp_t WHERE g % 5 = 0 ORDER BY id) a
                 JOIN pp_t b ON b.id = a.id + 1');
RESET enable_seqscan;
SET pg_dio.probe_direct_read = off;
SELECT dio_plan('SELECT o.x, t.pad FROM (SELECT x FROM pp_o ORDER BY x) o JOIN pp_t t ON t.id = o.x');
SET pg_dio.probe_direct_read = on;
-- below a parallel-aware outer each process probes for its share of the
-- rows, and their walks go over the same chunks (a Parallel Seq Scan of a
-- small table hands the processes its pages one at a time): the images are
-- shared in the parallel query's DSM, each chunk read once, by the first
-- process that wants it, for all of them (Parallel Custom Scan), when
-- pg_dio.probe_shared_memory gives them room (by default none: advice)
SET pg_dio.probe_shared_memory = '16MB';
CREATE TABLE pp_po (x int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO pp_po SELECT i, repeat('o', 200) FROM generate_series(1, 20000, 2) i;
VACUUM (FREEZE, ANALYZE) pp_po;
SET pg_dio.enable_direct_scan = off;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT dio_plan('SELECT sum(t.g) FROM pp_po o JOIN pp_t t ON t.id = o.x WHERE o.x > 0');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
CREATE TEMP TABLE pp_c0 AS SELECT bytes_read FROM pg_dio_cluster_stats();
-- (how many blocks the processes take from the images and how many they
-- read through the buffer manager depends on their timing: not checked)
SELECT inner_direct > 0 AS images_used
  FROM pp_direct('SELECT sum(t.g) FROM pp_po o JOIN pp_t t ON t.id = o.x WHERE o.x > 0');
-- no chunk read twice: the bytes read directly are at most pp_t's
SELECT c.bytes_read - c0.bytes_read > 0 AS read_directly,
       c.bytes_read - c0.bytes_read <= pg_relation_size('pp_t') AS each_chunk_once
  FROM pg_dio_cluster_stats() c, pp_c0 c0;
-- core's rows, cold, with the leader taking part and without
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_compare('SELECT sum(t.g), count(*), sum(length(t.pad)) FROM pp_po o
                   JOIN pp_t t ON t.id = o.x WHERE o.x > 0');
RESET parallel_leader_participation;
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_compare('SELECT o.x % 7, count(*), sum(t.g) FROM pp_po o
                   JOIN pp_t t ON t.id = o.x + 1 WHERE o.x > 0 GROUP BY 1 ORDER BY 1');
-- pg_dio.probe_shared_memory below 1MB (8 chunks), as by default: not read
-- directly there, the chunks advised
SET pg_dio.probe_shared_memory = '512kB';
SELECT dio_plan('SELECT sum(t.g) FROM pp_po o JOIN pp_t t ON t.id = o.x WHERE o.x > 0');
RESET pg_dio.probe_shared_memory;
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT chunks IS NULL AS no_feed, inner_direct IS NULL AS inner_is_cores
  FROM pp_direct('SELECT sum(t.g) FROM pp_po o JOIN pp_t t ON t.id = o.x WHERE o.x > 0');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_compare('SELECT sum(t.g), count(*), sum(length(t.pad)) FROM pp_po o
                   JOIN pp_t t ON t.id = o.x WHERE o.x > 0');
SET pg_dio.probe_shared_memory = '16MB';
-- not above a Gather: its rows come from several processes, in no order of
-- the inner's; the node is not parallel-aware and the inner stays core's
SELECT dio_plan('SELECT o.x, t.g FROM (SELECT x, count(*) FROM pp_po GROUP BY x) o
                   JOIN pp_t t ON t.id = o.x');
-- rescanned: the Gather on a nested loop's inner side runs again for each
-- outer row, its shared images emptied each time
SET enable_material = off;
SELECT dio_plan('SELECT v.k, ss.s FROM (SELECT sum(t.g) AS s FROM pp_po o
                                         JOIN pp_t t ON t.id = o.x) ss
                   RIGHT JOIN (VALUES (1), (2), (3)) v(k) ON true');
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT pp_compare('SELECT v.k, ss.s FROM (SELECT sum(t.g) AS s FROM pp_po o
                                           JOIN pp_t t ON t.id = o.x) ss
                     RIGHT JOIN (VALUES (1), (2), (3)) v(k) ON true');
RESET enable_material;
RESET pg_dio.probe_shared_memory;
RESET pg_dio.enable_direct_scan;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
-- SERIALIZABLE: planned, but no image is used (predicate locks need the buffer)
SET pg_dio.probe_direct_read = on;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT count(*) > 0 AS evicted FROM pg_dio_evict('pp_t');
SELECT chunks IS NULL AS no_feed, inner_direct = 0 AS no_images
  FROM pp_direct('SELECT o.x, t.pad FROM (SELECT x FROM pp_o ORDER BY x) o JOIN pp_t t ON t.id = o.x');
COMMIT;

-- (checks: the settings)
SELECT name, setting, unit, min_val, max_val, context FROM pg_settings
 WHERE name IN ('pg_dio.enable_probe_prefetch', 'pg_dio.probe_prefetch_distance',
                'pg_dio.probe_direct_read', 'pg_dio.probe_shared_memory') ORDER BY name;
SET pg_dio.probe_prefetch_distance = 0;

DROP FUNCTION pp_compare, pp_counts, pp_sub_advised, pp_direct;
DROP TABLE pp_t, pp_o, pp_oc, pp_ps, pp_sparse, pp_v, pp_po;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_memoize;
RESET enable_bitmapscan;
RESET pg_dio.direct_scan_threshold;
RESET pg_dio.probe_direct_read;
RESET max_parallel_workers_per_gather;
RESET jit;
