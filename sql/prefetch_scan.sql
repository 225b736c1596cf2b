--
-- prefetch_scan: PrefetchIndexScan / PrefetchIndexOnlyScan replace forward
-- index scans and index-only scans, return exactly what core's scans return,
-- in the same order, with the same plans around them, and read ahead
--
SET jit = off;
SET debug_parallel_query = off;
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET pg_dio.index_prefetch_min_rows = 0;	-- test scans are small
-- a nested loop's inner under a ProbePrefetch stays core's (probe_prefetch
-- tests that); here the inners are ours
SET pg_dio.enable_probe_prefetch = off;

-- A query's plan (COSTS OFF), one line per element.
CREATE FUNCTION pf_plan(q text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    r text[];
BEGIN
    EXECUTE format('SELECT array_agg(p) FROM dio_plan(%L) p', q) INTO r;
    RETURN r;
END
$$;

-- The rows of a query as text, in the order it returns them: the query runs
-- as written (through a cursor, fetched in batches), not wrapped.
CREATE FUNCTION pf_rows(q text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    a text[] := '{}';
BEGIN
    FOR r IN EXECUTE q LOOP
        a := array_append(a, r::text);
    END LOOP;
    RETURN a;
END
$$;

-- Run a query with pg_dio.enable_index_prefetch on and off (and
-- pg_dio.enable_probe_prefetch as set, and off), in one transaction.  With
-- them on the plan must have PrefetchIndex(Only)Scan or ProbePrefetch nodes,
-- with them off none.  same_plan: apart from the node names the two plans must
-- be the same (lines compared sorted: a custom scan prints its Filter before
-- its Index Cond).  Rows are compared in output order (ordered), else as
-- multisets.  Says how many rows and which of our nodes, or what differs.
CREATE FUNCTION pf_compare(q text, ordered boolean DEFAULT true, same_plan boolean DEFAULT true)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    saved text := current_setting('pg_dio.enable_index_prefetch');
    saved_probe text := current_setting('pg_dio.enable_probe_prefetch');
    p_on text[];
    p_off text[];
    nodes text;
    r_on text[];
    r_on2 text[];
    r_off text[];
    d int;
    advice text := current_setting('pg_dio.index_prefetch_advice');
BEGIN
    PERFORM set_config('pg_dio.enable_index_prefetch', 'on', true);
    p_on := pf_plan(q);
    SELECT string_agg(m[1], ', ') INTO nodes
      FROM unnest(p_on) l, regexp_matches(l, 'Custom Scan \((PrefetchIndex\w*|ProbePrefetch)\)', 'g') m;
    r_on := pf_rows(q);
    -- the other way of reading (io_method=worker: advised reads by the scan
    -- itself with advice on, the read stream with it off) must agree
    PERFORM set_config('pg_dio.index_prefetch_advice', CASE advice WHEN 'on' THEN 'off' ELSE 'on' END, true);
    r_on2 := pf_rows(q);
    PERFORM set_config('pg_dio.index_prefetch_advice', advice, true);
    IF r_on2 IS DISTINCT FROM r_on THEN
        RETURN format('DIFFERENT with pg_dio.index_prefetch_advice %s and not: %s / %s rows',
                      advice, cardinality(r_on), cardinality(r_on2));
    END IF;
    PERFORM set_config('pg_dio.enable_index_prefetch', 'off', true);
    PERFORM set_config('pg_dio.enable_probe_prefetch', 'off', true);
    p_off := pf_plan(q);
    r_off := pf_rows(q);
    PERFORM set_config('pg_dio.enable_index_prefetch', saved, true);
    PERFORM set_config('pg_dio.enable_probe_prefetch', saved_probe, true);
    IF nodes IS NULL THEN
        RETURN 'no PrefetchIndex scan in the plan: ' || array_to_string(p_on, E'\n');
    END IF;
    IF array_to_string(p_off, E'\n') LIKE '%Prefetch%' THEN
        RETURN 'PrefetchIndex scan although disabled';
    END IF;
    IF same_plan AND
       (SELECT array_agg(l ORDER BY l) FROM unnest(dio_core_plan(p_on)) l)
       IS DISTINCT FROM (SELECT array_agg(l ORDER BY l) FROM unnest(p_off) l) THEN
        RETURN E'PLANS DIFFER\n' || array_to_string(p_on, E'\n') || E'\n---- core:\n' ||
               array_to_string(p_off, E'\n');
    END IF;
    IF NOT ordered THEN
        r_on := ARRAY(SELECT x FROM unnest(r_on) x ORDER BY x);
        r_off := ARRAY(SELECT x FROM unnest(r_off) x ORDER BY x);
    END IF;
    IF r_on IS DISTINCT FROM r_off THEN
        SELECT min(i) INTO d FROM generate_series(1, greatest(cardinality(r_on), cardinality(r_off))) i
         WHERE r_on[i] IS DISTINCT FROM r_off[i];
        RETURN format('DIFFERENT: %s rows prefetch, %s rows core; row %s: %s / %s',
                      cardinality(r_on), cardinality(r_off), d, r_on[d], r_off[d]);
    END IF;
    RETURN format('same: %s rows, %s', cardinality(r_on), nodes);
END
$$;

-- EXPLAIN (ANALYZE, FORMAT JSON) of a query: the figures of its index scan
-- nodes (ours and core's), summed over the nodes (rows: over the loops).
CREATE FUNCTION pf_stats(q text,
    OUT nodes int, OUT loops bigint, OUT actual_rows numeric, OUT heap_fetches bigint,
    OUT index_searches bigint, OUT recheck_removed numeric, OUT filter_removed numeric,
    OUT blocks_requested bigint, OUT blocks_read bigint, OUT prefetch_max int,
    OUT prefetch_capacity int, OUT blocks_advised bigint,
    OUT prefetch_restarts bigint, OUT index_tids bigint,
    OUT blocks_direct bigint, OUT blocks_direct_fallback bigint,
    OUT blocks_combined bigint)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
    SELECT count(*), sum((n->>'Actual Loops')::bigint),
           sum((n->>'Actual Rows')::numeric * (n->>'Actual Loops')::bigint),
           sum((n->>'Heap Fetches')::bigint), sum((n->>'Index Searches')::bigint),
           sum((n->>'Rows Removed by Index Recheck')::numeric * (n->>'Actual Loops')::bigint),
           sum((n->>'Rows Removed by Filter')::numeric * (n->>'Actual Loops')::bigint),
           -- heap blocks taken: from the stream, or read by the scan itself
           -- because the OS page cache had them (pg_dio.os_cache_check)
           sum((n->>'Heap Blocks Requested')::bigint +
               coalesce((n->>'Heap Blocks OS-Cached')::bigint, 0)),
           sum((n->>'Heap Blocks Read')::bigint),
           max((n->>'Prefetch Max')::int), max((n->>'Prefetch Capacity')::int),
           sum((n->>'Heap Blocks Advised')::bigint),
           sum((n->>'Prefetch Restarts')::bigint),
           sum((n->>'Index TIDs')::bigint),
           sum((n->>'Heap Blocks Direct')::bigint),
           sum((n->>'Heap Blocks Direct Fallback')::bigint),
           sum((n->>'Heap Blocks Combined')::bigint)
      INTO nodes, loops, actual_rows, heap_fetches, index_searches, recheck_removed,
           filter_removed, blocks_requested, blocks_read, prefetch_max, prefetch_capacity,
           blocks_advised,
           prefetch_restarts,
           index_tids, blocks_direct, blocks_direct_fallback, blocks_combined
      FROM jsonb_path_query(j, 'strict $.**?(@."Custom Plan Provider" starts with "PrefetchIndex" ||
                                              @."Node Type" == "Index Scan" ||
                                              @."Node Type" == "Index Only Scan")') n;
END
$$;

-- What EXPLAIN ANALYZE counts for the index scans of a query, with prefetch
-- on and off: rows, loops, Heap Fetches, Index Searches, Rows Removed by
-- Index Recheck and by Filter must be core's.
CREATE FUNCTION pf_counts(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    saved text := current_setting('pg_dio.enable_index_prefetch');
    a record;
    b record;
BEGIN
    PERFORM set_config('pg_dio.enable_index_prefetch', 'on', true);
    SELECT * INTO a FROM pf_stats(q);
    PERFORM set_config('pg_dio.enable_index_prefetch', 'off', true);
    SELECT * INTO b FROM pf_stats(q);
    PERFORM set_config('pg_dio.enable_index_prefetch', saved, true);
    IF a.blocks_requested IS NULL THEN
        RETURN 'no PrefetchIndex scan';
    END IF;
    IF (a.nodes, a.loops, a.actual_rows, a.heap_fetches, a.index_searches, a.recheck_removed, a.filter_removed)
       IS DISTINCT FROM
       (b.nodes, b.loops, b.actual_rows, b.heap_fetches, b.index_searches, b.recheck_removed, b.filter_removed) THEN
        RETURN format('DIFFERENT: prefetch %s, core %s',
                      row(a.nodes, a.loops, a.actual_rows, a.heap_fetches, a.index_searches, a.recheck_removed, a.filter_removed),
                      row(b.nodes, b.loops, b.actual_rows, b.heap_fetches, b.index_searches, b.recheck_removed, b.filter_removed));
    END IF;
    -- (how many heap fetches depends on the visibility map: just none or some)
    RETURN format('same: rows %s, loops %s, heap fetches %s, index searches %s, removed by recheck %s, by filter %s',
                  round(a.actual_rows), a.loops,
                  CASE WHEN a.heap_fetches IS NULL THEN '-' WHEN a.heap_fetches = 0 THEN 'none' ELSE 'some' END,
                  a.index_searches,
                  coalesce(round(a.recheck_removed)::text, '-'), coalesce(round(a.filter_removed)::text, '-'));
END
$$;

-- A data-modifying statement with RETURNING, run with prefetch on and off,
-- rolled back each time: our node must be in the plan with it on; the rows
-- returned (in order) and the table's contents after must be the same.
CREATE FUNCTION pf_compare_dml(q text, tbl text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    saved text := current_setting('pg_dio.enable_index_prefetch');
    plan text;
    r_on text[];
    r_off text[];
    t_on text[];
    t_off text[];
BEGIN
    BEGIN
        PERFORM set_config('pg_dio.enable_index_prefetch', 'on', true);
        plan := array_to_string(pf_plan(q), E'\n');
        r_on := pf_rows(q);
        t_on := pf_rows(format('SELECT * FROM %s x ORDER BY x::text', tbl));
        RAISE EXCEPTION USING ERRCODE = 'assert_failure';	-- roll back
    EXCEPTION WHEN assert_failure THEN
    END;
    BEGIN
        PERFORM set_config('pg_dio.enable_index_prefetch', 'off', true);
        IF array_to_string(pf_plan(q), E'\n') LIKE '%Prefetch%' THEN
            RAISE EXCEPTION 'PrefetchIndex scan although disabled';
        END IF;
        r_off := pf_rows(q);
        t_off := pf_rows(format('SELECT * FROM %s x ORDER BY x::text', tbl));
        RAISE EXCEPTION USING ERRCODE = 'assert_failure';
    EXCEPTION WHEN assert_failure THEN
    END;
    PERFORM set_config('pg_dio.enable_index_prefetch', saved, true);
    IF plan NOT LIKE '%PrefetchIndex%' THEN
        RETURN 'no PrefetchIndex scan in the plan: ' || plan;
    END IF;
    IF r_on IS DISTINCT FROM r_off THEN
        RETURN format('DIFFERENT rows: %s with prefetch, %s core', cardinality(r_on), cardinality(r_off));
    END IF;
    IF t_on IS DISTINCT FROM t_off THEN
        RETURN 'DIFFERENT table contents after';
    END IF;
    RETURN format('same: %s rows returned, %s rows after', cardinality(r_on), cardinality(t_on));
END
$$;

-- EXPLAIN (ANALYZE, FORMAT JSON) of a query, as it is.
CREATE FUNCTION pf_explain_json(q text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
    RETURN j;
END
$$;

-- EXPLAIN ANALYZE in text, for the shape of our lines (figures masked;
-- restarts are shown only when there were some).
CREATE FUNCTION pf_explain_masked(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
        RETURN NEXT replace(regexp_replace(l, '\d+(\.\d+)?', 'N', 'g'), ' restarts=N', '');
    END LOOP;
END
$$;

-- The table most tests use: heap order is not index order (ids are a
-- permutation of the insertion order), NULLs, mixed-case text, a varchar.
CREATE TABLE pf (id int NOT NULL, k int, n int, t text, flag boolean, v varchar(20), pad text)
    WITH (autovacuum_enabled = off, fillfactor = 90);
INSERT INTO pf
SELECT (g * 7919) % 20011, g % 50,
       CASE WHEN g % 7 = 0 THEN NULL ELSE g % 1000 END,
       CASE WHEN g % 3 = 0 THEN 'Abc' WHEN g % 3 = 1 THEN 'abd' ELSE 'ABE' END || (g % 97),
       g % 5 = 0, 'v' || (g % 300), repeat('x', 100 + g % 50)
  FROM generate_series(1, 20000) g;
CREATE UNIQUE INDEX pf_id ON pf (id);
CREATE INDEX pf_k_id ON pf (k, id);
CREATE INDEX pf_n ON pf (n NULLS FIRST);
CREATE INDEX pf_k_desc ON pf (k DESC, n DESC NULLS LAST);
CREATE INDEX pf_lower ON pf (lower(t));
CREATE INDEX pf_t_c ON pf (t COLLATE "C", id);
CREATE INDEX pf_part ON pf (id) WHERE flag;
CREATE INDEX pf_t_hash ON pf USING hash (t);
CREATE INDEX pf_v ON pf (v);
VACUUM (ANALYZE) pf;

--
-- btree
--
-- unique: ranges, equality, IN-lists and = ANY (also with NULLs, empty)
SELECT pf_compare('SELECT * FROM pf WHERE id BETWEEN 100 AND 2000');
SELECT pf_compare('SELECT ctid, xmin = xmin, tableoid::regclass, id, k, t FROM pf WHERE id < 50');
SELECT pf_compare('SELECT * FROM pf WHERE id = 4242');
SELECT pf_compare('SELECT * FROM pf WHERE id = -1');
SELECT pf_compare('SELECT * FROM pf WHERE id > 19000 ORDER BY id');
SELECT pf_compare('SELECT id, n FROM pf WHERE id IN (5, 17, 3, 20010, 99999, 17)');
SELECT pf_compare('SELECT id, n FROM pf WHERE id = ANY (ARRAY[7, NULL, 1, 400, 3000])');
SELECT pf_compare('SELECT id, n FROM pf WHERE id = ANY (''{}''::int[])');
SELECT pf_compare('SELECT id, n FROM pf WHERE id = 1 OR id = 2 OR id = 10000');
SELECT pf_compare('SELECT id, n FROM pf WHERE id <> ALL (ARRAY[1, 2]) AND id < 10');
SELECT pf_counts('SELECT id, n FROM pf WHERE id = ANY (ARRAY[7, NULL, 1, 400, 3000, 3001, 3002])');
-- a filter on top of the index condition
SELECT pf_compare('SELECT id, k, t FROM pf WHERE id < 3000 AND k = 7 AND t LIKE ''a%''');
SELECT pf_counts('SELECT id, k, t FROM pf WHERE id < 3000 AND k = 7 AND t LIKE ''a%''');
-- multi-column: prefix, both columns, IN-lists on both, row comparisons,
-- array from an initplan (a runtime key), skip scan (no condition on k)
SELECT pf_compare('SELECT id, k, n FROM pf WHERE k = 7');
SELECT pf_compare('SELECT id, k, n FROM pf WHERE k = 7 AND id > 10000');
SELECT pf_compare('SELECT id, k, n FROM pf WHERE k IN (3, 1, 2) AND id < 2000');
SELECT pf_compare('SELECT id, k, n FROM pf WHERE k IN (3, 4) AND id IN (10, 77, 161, 266, 700, 805, 12345)');
SELECT pf_compare('SELECT id, k, n FROM pf WHERE k BETWEEN 3 AND 5 AND id = ANY (ARRAY(SELECT generate_series(1, 20000, 37)))');
SELECT pf_compare('SELECT id, k, n FROM pf WHERE (k, id) > (48, 19000) ORDER BY k, id');
SELECT pf_compare('SELECT id, k, n FROM pf WHERE (k, id) >= (48, 19000) AND id < 19500');
SELECT pf_compare('SELECT k, id FROM pf WHERE id < 100 ORDER BY k, id');
SELECT pf_counts('SELECT k, id FROM pf WHERE id < 100 ORDER BY k, id');
SELECT pf_counts('SELECT id, k, n FROM pf WHERE k IN (3, 4) AND id IN (10, 77, 161, 266, 700, 805, 12345)');
-- NULLs, DESC, NULLS FIRST / LAST
SELECT pf_compare('SELECT id, n FROM pf WHERE n IS NULL');
SELECT pf_compare('SELECT n, id FROM pf WHERE n IS NOT NULL AND n < 20');
SELECT pf_compare('SELECT n, id FROM pf ORDER BY n NULLS FIRST LIMIT 3000');
SELECT pf_compare('SELECT k, n, id FROM pf WHERE k > 45 ORDER BY k DESC, n DESC NULLS LAST');
SELECT pf_compare('SELECT k, n, id FROM pf WHERE k = 45 AND n IS NULL');
SELECT pf_compare('SELECT k, n FROM pf WHERE k = 45 ORDER BY k DESC, n DESC NULLS LAST');
-- expression and partial indexes
SELECT pf_compare('SELECT id, t FROM pf WHERE lower(t) = ''abc7''');
SELECT pf_compare('SELECT id, t FROM pf WHERE lower(t) IN (''abd1'', ''abe2'', ''abc3'') ORDER BY lower(t)');
SELECT pf_compare('SELECT id, t FROM pf WHERE lower(t) LIKE ''abe9%''');
SELECT pf_compare('SELECT id, flag FROM pf WHERE flag AND id < 5000');
SELECT pf_compare('SELECT id FROM pf WHERE flag AND id BETWEEN 1000 AND 3000');
SELECT pf_compare('SELECT id, n FROM pf WHERE flag AND id < 3000 AND n > 500');
-- text with an explicit collation, varchar (the index column is relabeled)
SELECT pf_compare('SELECT t, id FROM pf WHERE t COLLATE "C" BETWEEN ''ABE5'' AND ''Abc2'' ORDER BY t COLLATE "C", id');
SELECT pf_compare('SELECT t, id, k FROM pf WHERE t COLLATE "C" > ''abd9'' AND id < 1000');
SELECT pf_compare('SELECT v, id FROM pf WHERE v BETWEEN ''v10'' AND ''v12'' ORDER BY v');
SELECT pf_compare('SELECT v, id FROM pf WHERE v = ''v7''');
SELECT pf_compare('SELECT v FROM pf WHERE v BETWEEN ''v28'' AND ''v3'' ORDER BY v');
-- hash (no = ANY for hash indexes: core's bitmap scan stays)
SELECT pf_compare('SELECT id, t FROM pf WHERE t = ''Abc3''', false);
SELECT pf_compare('SELECT id, t FROM pf WHERE t = ''nothing''');
SELECT dio_plan('SELECT * FROM pf WHERE t IN (''Abc3'', ''abd4'')');

--
-- GiST and SP-GiST
--
CREATE TABLE pf_geo (id int, pg polygon, pt point, b box, r int4range)
    WITH (autovacuum_enabled = off);
INSERT INTO pf_geo
SELECT g, polygon(circle(point(g % 100, g / 100), 1 + g % 4)),
       point(g % 100, g / 100), box(point(g % 100, g / 100), point(g % 100 + 2, g / 100 + 3)),
       int4range(g, g + g % 20)
  FROM generate_series(1, 10000) g ORDER BY (g * 37) % 101, g;
CREATE INDEX pf_geo_pg ON pf_geo USING gist (pg);
CREATE INDEX pf_geo_pt ON pf_geo USING gist (pt);
CREATE INDEX pf_geo_b ON pf_geo USING gist (b);
VACUUM ANALYZE pf_geo;
-- polygons are lossy (bounding boxes): rechecked on the heap tuple
SELECT pf_compare('SELECT id, pg FROM pf_geo WHERE pg && polygon(box(point(10, 10), point(13, 12)))', false);
SELECT pf_counts('SELECT id FROM pf_geo WHERE pg && polygon(box(point(10, 10), point(13, 12)))');
SELECT pf_compare('SELECT id FROM pf_geo WHERE pg @> polygon(box(point(50.2, 50.2), point(50.4, 50.3)))', false);
SELECT pf_counts('SELECT id FROM pf_geo WHERE pg @> polygon(box(point(50.2, 50.2), point(50.4, 50.3)))');
SELECT pf_compare('SELECT id, b FROM pf_geo WHERE b && box(point(10, 10), point(20, 12))', false);
-- index-only: GiST returns heap-format tuples
SELECT pf_compare('SELECT pt FROM pf_geo WHERE pt <@ box(point(10, 10), point(20, 15))', false);
SELECT pf_compare('SELECT pt FROM pf_geo WHERE pt <@ polygon(circle(point(30, 30), 6))', false);
SELECT pf_counts('SELECT pt FROM pf_geo WHERE pt <@ polygon(circle(point(30, 30), 6))');
-- ORDER BY distance (KNN): not ours
SELECT dio_plan('SELECT id FROM pf_geo ORDER BY pt <-> point(3, 3) LIMIT 5');
-- SP-GiST: a quad tree of points, ranges, text (reconstructed for
-- index-only scans)
DROP INDEX pf_geo_pt;
CREATE INDEX pf_geo_pt_sp ON pf_geo USING spgist (pt);
CREATE INDEX pf_geo_r ON pf_geo USING spgist (r);
SELECT pf_compare('SELECT id, pt FROM pf_geo WHERE pt <@ box(point(10, 10), point(20, 15))', false);
SELECT pf_compare('SELECT pt FROM pf_geo WHERE pt <@ box(point(10, 10), point(20, 15))', false);
SELECT pf_compare('SELECT id FROM pf_geo WHERE pt ~= point(7, 7)', false);
SELECT pf_compare('SELECT id, r FROM pf_geo WHERE r && int4range(100, 120)', false);
SELECT pf_compare('SELECT r FROM pf_geo WHERE r @> 5000', false);
CREATE TABLE pf_words (id int, w text) WITH (autovacuum_enabled = off);
INSERT INTO pf_words SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
CREATE INDEX pf_words_w ON pf_words USING spgist (w);
VACUUM ANALYZE pf_words;
SELECT pf_compare('SELECT w FROM pf_words WHERE w ^@ ''ab''', false);
SELECT pf_compare('SELECT id, w FROM pf_words WHERE w ^@ ''a1''', false);
SELECT pf_compare('SELECT w FROM pf_words WHERE w < ''05''', false);

--
-- narrow scan tuples: in a plain SELECT the scan's rows hold only the columns
-- the plan uses, taken straight from the heap tuple; the index quals are
-- rechecked on the heap row, also where the indexed column or expression is
-- not among those columns (every row of a hash index).  NULLs, toasted
-- values, a dropped column and a column added later with a default.
--
CREATE TABLE pf_nt (id int, junk int, name text, big text, h int)
    WITH (autovacuum_enabled = off);
INSERT INTO pf_nt
SELECT (g * 7919) % 5003, g, CASE WHEN g % 4 = 0 THEN NULL ELSE 'Name' || (g % 300) END,
       CASE WHEN g % 50 = 0 THEN repeat(md5(g::text), 300) ELSE 'b' || g END, g % 40
  FROM generate_series(1, 5000) g;
ALTER TABLE pf_nt DROP COLUMN junk;
ALTER TABLE pf_nt ADD COLUMN later int DEFAULT 42;
UPDATE pf_nt SET later = -id WHERE id % 3 = 0;
CREATE INDEX pf_nt_id ON pf_nt (id);
CREATE INDEX pf_nt_h ON pf_nt USING hash (h);
CREATE INDEX pf_nt_lower ON pf_nt USING hash (lower(name));
VACUUM ANALYZE pf_nt;
SELECT pf_compare('SELECT later, id FROM pf_nt WHERE h = 7', false);
SELECT pf_counts('SELECT later, id FROM pf_nt WHERE h = 7');
SELECT pf_compare('SELECT id FROM pf_nt WHERE lower(name) = ''name17''', false);
SELECT pf_compare('SELECT id, length(big), later FROM pf_nt WHERE id BETWEEN 100 AND 900');
SELECT pf_compare('SELECT big, name FROM pf_nt WHERE id < 1500 AND big LIKE ''b%''');
SELECT pf_compare('SELECT later FROM pf_nt WHERE id > 4000 AND name IS NULL');
SELECT pf_compare('SELECT count(*), sum(later), max(md5(big)) FROM pf_nt WHERE id < 3000');

--
-- index-only scans: INCLUDE columns, name (stored as cstring, returned
-- padded), boolean, catalogs
--
CREATE TABLE pf_inc (id int, k int, v text, nm name, b boolean) WITH (autovacuum_enabled = off);
INSERT INTO pf_inc SELECT g, g % 10, 'v' || g, 'name_' || (g % 500), g % 3 = 0 FROM generate_series(1, 5000) g;
CREATE INDEX pf_inc_k ON pf_inc (k) INCLUDE (v, id);
CREATE INDEX pf_inc_nm ON pf_inc (nm, id);
CREATE INDEX pf_inc_b ON pf_inc (b, id);
VACUUM ANALYZE pf_inc;
SELECT pf_compare('SELECT k, v, id FROM pf_inc WHERE k = 3');
SELECT pf_compare('SELECT v FROM pf_inc WHERE k IN (1, 2) AND id < 100');
SELECT pf_compare('SELECT nm, id FROM pf_inc WHERE nm > ''name_49'' AND nm < ''name_5''');
-- record_image_eq compares the images: a name not padded with zeros would differ
SELECT pf_compare('SELECT nm, length(nm), record_image_eq(ROW(nm), ROW(nm::text::name)) FROM pf_inc WHERE nm < ''name_11''');
SELECT pf_compare('SELECT DISTINCT nm FROM pf_inc WHERE nm < ''name_11''', false);
SELECT pf_compare('SELECT id FROM pf_inc WHERE b AND id < 50');
SELECT pf_compare('SELECT id FROM pf_inc WHERE NOT b AND id < 20');
SELECT pf_compare('SELECT id FROM pf_inc WHERE b IS NULL');
SELECT pf_compare('SELECT relname, record_image_eq(ROW(relname), ROW(relname::text::name)) FROM pg_class WHERE relname BETWEEN ''pf'' AND ''pf_v'' AND relnamespace = ''public''::regnamespace');
SELECT pf_compare('SELECT attname FROM pg_attribute WHERE attrelid = ''pf''::regclass AND attnum > 0');
-- an index with an expression column is left to core's index-only scan
CREATE TABLE pf_ex (a int, t text) WITH (autovacuum_enabled = off);
INSERT INTO pf_ex SELECT g, 'x' || g % 10 FROM generate_series(1, 1000) g;
CREATE INDEX pf_ex_lower_a ON pf_ex (lower(t), a);
VACUUM ANALYZE pf_ex;
SELECT dio_plan('SELECT a FROM pf_ex WHERE a = 5');
SELECT pf_compare('SELECT a, t FROM pf_ex WHERE lower(t) = ''x3'' AND a < 100');

-- a table partly all-visible: Heap Fetches only for the rest, as core's
CREATE TABLE pf_vm (id int, k int, pad text) WITH (autovacuum_enabled = off, fillfactor = 70);
INSERT INTO pf_vm SELECT (g * 7919) % 30011, g % 10, repeat('p', 40) FROM generate_series(1, 30000) g;
CREATE INDEX pf_vm_id ON pf_vm (id);
CREATE INDEX pf_vm_k_id ON pf_vm (k, id);
VACUUM (ANALYZE) pf_vm;
UPDATE pf_vm SET pad = 'changed' WHERE ctid >= '(20,0)' AND ctid < '(30,0)';	-- HOT
DELETE FROM pf_vm WHERE ctid >= '(40,0)' AND ctid < '(42,0)';
INSERT INTO pf_vm SELECT g, g % 10, 'new' FROM generate_series(30011, 30100) g;
SELECT all_visible > 0 AND all_visible < blocks AS partly_all_visible
  FROM pg_dio_residency('pf_vm') WHERE fork = 'main';
SELECT pf_compare('SELECT id FROM pf_vm WHERE id < 30200');
SELECT pf_compare('SELECT id FROM pf_vm WHERE id BETWEEN 1000 AND 2000');
SELECT pf_compare('SELECT k, id FROM pf_vm WHERE k = 3 AND id > 100');
SELECT pf_compare('SELECT count(*) FROM pf_vm WHERE id > 100');
SELECT pf_counts('SELECT id FROM pf_vm WHERE id < 30200');
SELECT pf_counts('SELECT k, id FROM pf_vm WHERE k IN (3, 4)');
SELECT heap_fetches > 0 AS some_fetched, heap_fetches < actual_rows AS not_all_fetched,
       blocks_requested BETWEEN 1 AND heap_fetches AS blocks_for_fetches
  FROM pf_stats('SELECT id FROM pf_vm WHERE id < 30200');
-- the same rows while all-visible again
VACUUM pf_vm;
SELECT heap_fetches, blocks_requested FROM pf_stats('SELECT id FROM pf_vm WHERE id < 30200');
SELECT pf_compare('SELECT id FROM pf_vm WHERE id < 30200');
UPDATE pf_vm SET pad = 'changed again' WHERE ctid >= '(100,0)' AND ctid < '(101,0)';

--
-- rescans
--
CREATE TABLE pf_outer (x int, kk int, arr int[]) WITH (autovacuum_enabled = off);
INSERT INTO pf_outer SELECT CASE WHEN g % 50 = 0 THEN NULL ELSE (g * 13) % 20500 END, g % 60,
       ARRAY[g, g * 2, NULL, g + 7]
  FROM generate_series(1, 600) g;
INSERT INTO pf_outer SELECT x, kk, arr FROM pf_outer WHERE x < 500;		-- duplicates
ANALYZE pf_outer;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
SET enable_seqscan = on;
-- nestloop inner with parameters: one rescan per outer row
SELECT dio_plan('SELECT o.x, p.k FROM pf_outer o JOIN pf p ON p.id = o.x');
SELECT pf_compare('SELECT o.x, p.k, p.t FROM pf_outer o JOIN pf p ON p.id = o.x');
SELECT pf_counts('SELECT o.x, p.k, p.t FROM pf_outer o JOIN pf p ON p.id = o.x');
SELECT pf_compare('SELECT o.x, p.id FROM pf_outer o JOIN pf p ON p.id = o.x');
SELECT pf_compare('SELECT o.x, o.kk, p.id FROM pf_outer o LEFT JOIN pf p ON p.k = o.kk AND p.id BETWEEN o.x AND o.x + 300');
SELECT pf_counts('SELECT o.x, o.kk, p.id FROM pf_outer o LEFT JOIN pf p ON p.k = o.kk AND p.id BETWEEN o.x AND o.x + 300');
SELECT pf_compare('SELECT o.x, p.id, p.n FROM pf_outer o JOIN pf p ON p.id = ANY (o.arr) WHERE o.x < 3000');
SELECT pf_compare('SELECT o.x, p.id FROM pf_outer o JOIN pf p ON p.id > o.x AND p.id < o.x + 3 AND p.flag');
SELECT pf_compare('SELECT o.x, v.id FROM pf_outer o JOIN pf_vm v ON v.id BETWEEN o.x AND o.x + 20');
SELECT pf_counts('SELECT o.x, v.id FROM pf_outer o JOIN pf_vm v ON v.id BETWEEN o.x AND o.x + 20');
-- LATERAL with ORDER BY ... LIMIT: the inner scan stops early, is rescanned
SELECT pf_compare('SELECT o.x, l.* FROM pf_outer o, LATERAL (SELECT id, n FROM pf WHERE id > o.x ORDER BY id LIMIT 3) l');
SELECT pf_compare('SELECT o.kk, l.* FROM pf_outer o, LATERAL (SELECT id FROM pf WHERE k = o.kk ORDER BY k, id LIMIT 2) l');
SELECT pf_compare('SELECT o.x, l.* FROM pf_outer o LEFT JOIN LATERAL (SELECT id, pad FROM pf_vm WHERE id >= o.x ORDER BY id LIMIT 4) l ON true');
-- an inner without parameters, rescanned as it is
SELECT pf_compare('SELECT o.kk, p.id FROM (SELECT DISTINCT kk FROM pf_outer) o, pf p WHERE p.id < 40 AND p.k <> o.kk');
-- correlated subqueries
SELECT pf_compare('SELECT o.x, (SELECT count(*) FROM pf WHERE k = o.kk AND id < o.x), (SELECT max(t) FROM pf WHERE id = o.x) FROM pf_outer o');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET enable_memoize;
SET enable_seqscan = off;
-- a generic plan: the keys come from parameters at run time
SET plan_cache_mode = force_generic_plan;
PREPARE pf_q(int, int[]) AS SELECT id, k FROM pf WHERE id > $1 AND k = ANY ($2);
EXPLAIN (COSTS OFF) EXECUTE pf_q(1, '{}');
EXECUTE pf_q(19900, '{1,2,3}');
EXECUTE pf_q(NULL, '{1,2,3}');
EXECUTE pf_q(19900, NULL);
EXECUTE pf_q(19900, '{NULL,1}');
DEALLOCATE pf_q;
RESET plan_cache_mode;

--
-- cursors: ours run forward only, so a cursor that may scroll keeps core's
-- scan (scan_plan.c); NO SCROLL gets ours
--
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT id, k, t FROM pf WHERE id BETWEEN 100 AND 200;
EXPLAIN (COSTS OFF) DECLARE c NO SCROLL CURSOR FOR SELECT id, k, t FROM pf WHERE id BETWEEN 100 AND 200;
EXPLAIN (COSTS OFF) DECLARE c CURSOR FOR SELECT id, k, t FROM pf WHERE id BETWEEN 100 AND 200;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, k, t FROM pf WHERE id BETWEEN 100 AND 200;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ABSOLUTE 50 FROM c;
FETCH RELATIVE -10 FROM c;
MOVE LAST IN c;
FETCH BACKWARD 2 FROM c;
FETCH FIRST FROM c;
FETCH PRIOR FROM c;
FETCH NEXT FROM c;
DECLARE c2 NO SCROLL CURSOR FOR SELECT id FROM pf_vm WHERE id > 29990;
FETCH 4 FROM c2;
FETCH 4 FROM c2;
MOVE 100 IN c2;
FETCH 1 FROM c2;
COMMIT;
-- a cursor declared neither SCROLL nor NO SCROLL may scroll if its plan can
-- scan backward (documented as plan-dependent), as core's index scan can: it
-- keeps core's scan, and scrolls
BEGIN;
DECLARE c4 CURSOR FOR SELECT id, k, t FROM pf WHERE id BETWEEN 100 AND 200;
SELECT is_scrollable FROM pg_cursors WHERE name = 'c4';
FETCH 2 FROM c4;
FETCH BACKWARD 1 FROM c4;
ROLLBACK;
BEGIN;
DECLARE c3 CURSOR WITH HOLD FOR SELECT id, k FROM pf WHERE id BETWEEN 20000 AND 20020;
FETCH 1 FROM c3;
COMMIT;
FETCH ALL FROM c3;
CLOSE c3;

--
-- merge join: an inner that needs mark/restore keeps core's index scan, which
-- marks and restores (ours cannot)
--
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.pad FROM pf_vm a JOIN pf_vm b ON a.id = b.id WHERE a.id < 5000;
SET pg_dio.enable_index_prefetch = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.pad FROM pf_vm a JOIN pf_vm b ON a.id = b.id WHERE a.id < 5000;
RESET pg_dio.enable_index_prefetch;
SELECT pf_compare('SELECT a.id, b.pad FROM pf_vm a JOIN pf_vm b ON a.id = b.id WHERE a.id < 5000', true, false);
SELECT pf_compare('SELECT a.id, b.id FROM pf a JOIN pf_vm b ON a.k = b.k WHERE a.id < 100 AND b.id < 300', true, false);
-- the outer side of a merge join is pg_dio's
EXPLAIN (COSTS OFF) SELECT a.id, b.k FROM pf a JOIN pf_vm b ON a.id = b.id WHERE a.id < 3000 AND b.k = 2;
SELECT pf_compare('SELECT a.id, b.k FROM pf a JOIN pf_vm b ON a.id = b.id WHERE a.id < 3000 AND b.k < 5');
SELECT pf_compare('SELECT a.id, a.t, b.id FROM pf a FULL JOIN pf_inc b ON a.id = b.id WHERE a.id < 6000 OR b.id > 4990', true, false);
RESET enable_hashjoin;
RESET enable_nestloop;

--
-- partitioned tables: an Append of our scans, one per partition
--
CREATE TABLE pf_parted (id int, k int, t text) PARTITION BY RANGE (id);
CREATE TABLE pf_parted_1 PARTITION OF pf_parted FOR VALUES FROM (MINVALUE) TO (5000) WITH (autovacuum_enabled = off);
CREATE TABLE pf_parted_2 PARTITION OF pf_parted FOR VALUES FROM (5000) TO (10000) WITH (autovacuum_enabled = off);
CREATE TABLE pf_parted_3 PARTITION OF pf_parted FOR VALUES FROM (10000) TO (MAXVALUE) WITH (autovacuum_enabled = off);
INSERT INTO pf_parted SELECT id, k, t FROM pf;
CREATE INDEX ON pf_parted (id);
CREATE INDEX ON pf_parted (k);
VACUUM ANALYZE pf_parted;
SELECT dio_plan('SELECT * FROM pf_parted WHERE id BETWEEN 4000 AND 11000 ORDER BY id');
SELECT pf_compare('SELECT * FROM pf_parted WHERE id BETWEEN 4000 AND 11000 ORDER BY id');
SELECT pf_compare('SELECT tableoid::regclass, * FROM pf_parted WHERE k = 3 ORDER BY k');
SELECT pf_compare('SELECT id FROM pf_parted WHERE id > 9000 ORDER BY id');
SELECT pf_compare('SELECT tableoid::regclass, * FROM pf_parted WHERE k IN (3, 4)', false);
-- partitionwise join: each partition's inner is reparameterized by its outer
CREATE TABLE pf_parted2 (id int, x int) PARTITION BY RANGE (id);
CREATE TABLE pf_parted2_1 PARTITION OF pf_parted2 FOR VALUES FROM (MINVALUE) TO (5000);
CREATE TABLE pf_parted2_2 PARTITION OF pf_parted2 FOR VALUES FROM (5000) TO (10000);
CREATE TABLE pf_parted2_3 PARTITION OF pf_parted2 FOR VALUES FROM (10000) TO (MAXVALUE);
INSERT INTO pf_parted2 SELECT g * 3, g FROM generate_series(1, 7000) g;
ANALYZE pf_parted2;
SET enable_partitionwise_join = on;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
SET enable_seqscan = on;
SELECT dio_plan('SELECT a.x, b.k FROM pf_parted2 a JOIN pf_parted b ON b.id = a.id WHERE a.x % 10 = 0');
SELECT pf_compare('SELECT a.x, b.k, b.t FROM pf_parted2 a JOIN pf_parted b ON b.id = a.id WHERE a.x % 10 = 0');
SELECT pf_counts('SELECT a.x, b.k, b.t FROM pf_parted2 a JOIN pf_parted b ON b.id = a.id WHERE a.x % 10 = 0');
SELECT pf_compare('SELECT a.x, b.id FROM pf_parted2 a LEFT JOIN pf_parted b ON b.id BETWEEN a.id AND a.id + 1 WHERE a.x < 3000');
-- a partition whose columns are in another order (and one dropped): the
-- index columns' numbers differ from the parent's
CREATE TABLE pf_pp (a int, b int, c text) PARTITION BY RANGE (a);
CREATE TABLE pf_pp1 PARTITION OF pf_pp FOR VALUES FROM (0) TO (1000);
CREATE TABLE pf_pp2 (junk int, c text, b int, a int);
ALTER TABLE pf_pp2 DROP COLUMN junk;
ALTER TABLE pf_pp ATTACH PARTITION pf_pp2 FOR VALUES FROM (1000) TO (3000);
INSERT INTO pf_pp SELECT g, g % 7, 'c' || g FROM generate_series(0, 2999) g;
CREATE INDEX ON pf_pp (b, a);
VACUUM ANALYZE pf_pp1, pf_pp2;
CREATE TABLE pf_qq (a int, b int) PARTITION BY RANGE (a);
CREATE TABLE pf_qq1 PARTITION OF pf_qq FOR VALUES FROM (0) TO (1000);
CREATE TABLE pf_qq2 PARTITION OF pf_qq FOR VALUES FROM (1000) TO (3000);
INSERT INTO pf_qq SELECT g, g % 7 FROM generate_series(0, 2999, 3) g;
ANALYZE pf_qq;
SELECT dio_plan('SELECT q.a, p.a, p.b FROM pf_qq q JOIN pf_pp p ON p.a = q.a AND p.b = q.b');
SELECT pf_compare('SELECT q.a, p.a, p.b FROM pf_qq q JOIN pf_pp p ON p.a = q.a AND p.b = q.b', false);
SELECT pf_compare('SELECT q.a, p.a, p.c FROM pf_qq q JOIN pf_pp p ON p.a = q.a AND p.b = q.b', false);
SELECT pf_compare('SELECT q.a, p.a FROM pf_qq q LEFT JOIN pf_pp p ON p.a = q.a AND p.b = q.b + 1', false);
RESET enable_partitionwise_join;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_memoize;
SET enable_seqscan = off;
SELECT pf_compare('SELECT a, b FROM pf_pp WHERE b = 3 AND a > 500 ORDER BY b, a');
SELECT pf_compare('SELECT a, b, c FROM pf_pp WHERE b IN (1, 2) AND a < 1500', false);
-- inheritance: the parent's own rows too
CREATE TABLE pf_inh (id int, k int) WITH (autovacuum_enabled = off);
CREATE TABLE pf_inh_child () INHERITS (pf_inh) WITH (autovacuum_enabled = off);
INSERT INTO pf_inh SELECT g, g % 7 FROM generate_series(1, 3000) g;
INSERT INTO pf_inh_child SELECT g, g % 7 FROM generate_series(2000, 6000) g;
CREATE INDEX ON pf_inh (id);
CREATE INDEX ON pf_inh_child (id);
VACUUM ANALYZE pf_inh, pf_inh_child;
SELECT pf_compare('SELECT tableoid::regclass, * FROM pf_inh WHERE id BETWEEN 2500 AND 3500 ORDER BY id');

--
-- UPDATE / DELETE / MERGE / SELECT FOR UPDATE with our scan as row source
--
EXPLAIN (COSTS OFF) UPDATE pf SET n = n + 1 WHERE id BETWEEN 10 AND 20;
EXPLAIN (COSTS OFF) DELETE FROM pf WHERE k = 3 AND id < 500;
EXPLAIN (COSTS OFF) SELECT id FROM pf WHERE id < 10 FOR UPDATE;
SELECT pf_compare_dml('UPDATE pf SET n = coalesce(n, 0) + 1 WHERE id BETWEEN 10 AND 2000 RETURNING id, n', 'pf');
SELECT pf_compare_dml('UPDATE pf SET k = k + 1 WHERE k = 3 AND id < 5000 RETURNING id, k', 'pf');
SELECT pf_compare_dml('DELETE FROM pf WHERE id = ANY (ARRAY[1, 50, 700, 12345]) RETURNING *', 'pf');
SELECT pf_compare_dml('UPDATE pf_vm SET pad = ''u'' FROM pf_outer o WHERE pf_vm.id = o.x RETURNING pf_vm.id, o.kk', 'pf_vm');
SELECT pf_compare_dml('DELETE FROM pf_parted WHERE id BETWEEN 4990 AND 5010 RETURNING tableoid::regclass, *', 'pf_parted');
SELECT pf_compare_dml('MERGE INTO pf t USING (SELECT DISTINCT x, kk FROM pf_outer WHERE kk < 10) o ON t.id = o.x
                       WHEN MATCHED THEN UPDATE SET t = o.kk RETURNING t.id, t.t', 'pf');
BEGIN;
SELECT pf_compare('SELECT id, k FROM pf WHERE id BETWEEN 100 AND 300 FOR UPDATE');
SELECT pf_compare('SELECT id, k FROM pf WHERE k = 7 AND id < 3000 FOR SHARE');
COMMIT;

--
-- the transaction's own changes, uncommitted: HOT and non-HOT updates,
-- deletes, inserts, a rolled-back subtransaction
--
BEGIN;
UPDATE pf SET pad = 'hot' WHERE id % 10 = 0;
UPDATE pf SET k = k + 100, n = NULL WHERE id % 10 = 1;
DELETE FROM pf WHERE id % 10 = 2;
INSERT INTO pf SELECT g, g % 50, g % 10, 'new', false, 'vnew', 'x' FROM generate_series(20011, 20500) g;
SAVEPOINT s;
UPDATE pf SET k = -5 WHERE id % 10 = 3;
INSERT INTO pf SELECT g, -5 FROM generate_series(30000, 30100) g;
ROLLBACK TO s;
SELECT pf_compare('SELECT * FROM pf WHERE id BETWEEN 100 AND 20300');
SELECT pf_compare('SELECT id, k FROM pf WHERE k > 100');
SELECT pf_compare('SELECT id, k FROM pf WHERE k < 0 OR k > 49');
SELECT pf_compare('SELECT id FROM pf WHERE id BETWEEN 0 AND 40000');
SELECT pf_counts('SELECT id FROM pf WHERE id BETWEEN 0 AND 40000');
SELECT pf_compare('SELECT n, id FROM pf WHERE n IS NULL');
-- a cursor does not see what its transaction changes after it was opened
DECLARE cur NO SCROLL CURSOR FOR SELECT id, k, pad = 'hot' AS hot FROM pf WHERE id BETWEEN 1000 AND 1030;
FETCH 3 FROM cur;
UPDATE pf SET k = -1, pad = 'after' WHERE id BETWEEN 1000 AND 1100;
DELETE FROM pf WHERE id BETWEEN 1010 AND 1020;
INSERT INTO pf (id, k) VALUES (1015, -2);
FETCH ALL FROM cur;
SELECT count(*), sum(id), sum(k) FROM pf WHERE id BETWEEN 1000 AND 1030;
ROLLBACK;

--
-- temporary tables (local buffers), a materialized view
--
CREATE TEMP TABLE pf_temp AS SELECT * FROM pf;
CREATE INDEX ON pf_temp (id);
VACUUM ANALYZE pf_temp;
SELECT pf_compare('SELECT * FROM pf_temp WHERE id BETWEEN 5000 AND 9000');
SELECT pf_compare('SELECT id FROM pf_temp WHERE id BETWEEN 5000 AND 9000');
UPDATE pf_temp SET k = k + 1 WHERE id % 3 = 0;
SELECT pf_compare('SELECT id, k FROM pf_temp WHERE id < 9000');
SELECT pf_counts('SELECT id FROM pf_temp WHERE id < 9000');
CREATE MATERIALIZED VIEW pf_mv AS SELECT id, k, t FROM pf;
CREATE INDEX ON pf_mv (k, id);
VACUUM ANALYZE pf_mv;
SELECT pf_compare('SELECT * FROM pf_mv WHERE k = 9');
SELECT pf_compare('SELECT k, id FROM pf_mv WHERE k < 3');

--
-- SERIALIZABLE: the same predicate locks as core's scans (heap tuples,
-- index pages; heap pages for all-visible index-only fetches)
--
CREATE FUNCTION pf_sireadlocks(q text, prefetch boolean) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    r text[];
BEGIN
    PERFORM set_config('pg_dio.enable_index_prefetch', prefetch::text, true);
    PERFORM pf_rows(q);
    SELECT array_agg(format('%s %s %s %s', locktype, relation::regclass, page, tuple)
                     ORDER BY locktype, relation::regclass::text, page, tuple)
      INTO r
      FROM pg_locks WHERE pid = pg_backend_pid() AND mode = 'SIReadLock';
    RETURN r;
END
$$;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT pf_sireadlocks('SELECT * FROM pf WHERE id BETWEEN 100 AND 104', true) AS locks \gset
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT l = :'locks' AS same_locks, cardinality(l) AS locks,
       (SELECT array_agg(DISTINCT split_part(x, ' ', 1) || ' ' || split_part(x, ' ', 2)) FROM unnest(l) x) AS kinds
  FROM pf_sireadlocks('SELECT * FROM pf WHERE id BETWEEN 100 AND 104', false) l;
COMMIT;
-- (a first scan: PostgreSQL 19's pruning on access may set visibility map
-- bits, which decide which heap pages an index-only scan locks)
SELECT cardinality(pf_rows('SELECT id FROM pf_vm WHERE id IN (10, 11, 1013, 1014, 5000)')) AS rows;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT pf_sireadlocks('SELECT id FROM pf_vm WHERE id IN (10, 11, 1013, 1014, 5000)', true) AS locks \gset
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT l = :'locks' AS same_locks, cardinality(l) > 0 AS locked
  FROM pf_sireadlocks('SELECT id FROM pf_vm WHERE id IN (10, 11, 1013, 1014, 5000)', false) l;
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT pf_compare('SELECT * FROM pf WHERE id BETWEEN 100 AND 3000');
SELECT pf_compare('SELECT id FROM pf_vm WHERE id BETWEEN 100 AND 3000');
COMMIT;

--
-- EXPLAIN: the title names the index where core's does; JSON "Index Name"
--
CREATE INDEX "PF Weird Idx" ON pf_inc (id);
EXPLAIN (COSTS OFF) SELECT * FROM pf_inc x WHERE id < 10;
EXPLAIN (COSTS OFF, VERBOSE) SELECT x.id, x.v FROM pf_inc x WHERE id < 10 AND v <> 'a';
EXPLAIN (COSTS OFF) SELECT a.id FROM pf_inc a JOIN pf b ON b.id = a.id WHERE a.id < 10;
EXPLAIN (COSTS OFF, FORMAT JSON) SELECT * FROM pf_inc x WHERE id < 10 AND v <> 'a';
EXPLAIN (COSTS OFF, FORMAT YAML) SELECT id FROM pf WHERE id < 10;
-- a string constant that looks like our title does not confuse it
EXPLAIN (COSTS OFF) SELECT * FROM pf WHERE id < 10 AND t = E'x\nCustom Scan (PrefetchIndexScan) y';
EXPLAIN (GENERIC_PLAN, COSTS OFF) SELECT * FROM pf WHERE id = $1;
-- EXPLAIN ANALYZE (figures masked)
SELECT pf_explain_masked('SELECT * FROM pf WHERE id < 1000');
SELECT pf_explain_masked('SELECT id FROM pf_vm WHERE id < 1000');
SELECT pf_explain_masked('SELECT id FROM pf_geo WHERE pg && polygon(box(point(10, 10), point(13, 12)))');
SELECT j->0->'Plan'->>'Index Name' AS index,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(j->0->'Plan') k
         WHERE k ~ '^(Heap|Index|Prefetch|Rows Removed|I/O)') AS keys
  FROM (SELECT pf_explain_json('SELECT id FROM pf_vm WHERE id < 1000') j) s;

--
-- where our scans are not used
--
-- backward, KNN (above), disabled index-only scans, when switched off
SELECT dio_plan('SELECT id FROM pf WHERE id < 100 ORDER BY id DESC');
SELECT dio_plan('SELECT * FROM pf WHERE id < 100 ORDER BY id DESC LIMIT 3');
SELECT dio_plan('SELECT k, n FROM pf WHERE k > 45 ORDER BY k, n NULLS FIRST');
SET enable_indexonlyscan = off;
SELECT dio_plan('SELECT id FROM pf WHERE id < 100');
RESET enable_indexonlyscan;
SET pg_dio.enable_index_prefetch = off;
SELECT dio_plan('SELECT * FROM pf WHERE id < 100');
SELECT dio_plan('SELECT id FROM pf WHERE id < 100');
RESET pg_dio.enable_index_prefetch;
-- a disabled index scan stays disabled
SET enable_indexscan = off;
SELECT pf_compare('SELECT id FROM pf WHERE id < 100');
RESET enable_indexscan;

--
-- parallel plans: parallel index scans stay core's; ours runs in the
-- workers as the inner of a nestloop, EXPLAIN ANALYZE counts all of it
--
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
SET enable_material = off;
SELECT dio_plan('SELECT count(*) FROM pf WHERE id < 10000');
SELECT dio_plan('SELECT sum(p.k), count(*) FROM pf_vm v JOIN pf p ON p.id = v.id WHERE v.k = 1');
SELECT pf_compare('SELECT sum(p.k), count(*) FROM pf_vm v JOIN pf p ON p.id = v.id WHERE v.k = 1');
SELECT pf_compare('SELECT sum(v.id), count(*) FROM pf_vm o JOIN pf_vm v ON v.id = o.id + 1 WHERE o.k = 2');
-- the figures of the nestloop's inner (whatever number of workers ran it)
CREATE FUNCTION pf_inner_counts(q text, prefetch boolean,
    OUT node text, OUT loops bigint, OUT heap_fetches bigint, OUT index_searches bigint)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    PERFORM set_config('pg_dio.enable_index_prefetch', prefetch::text, true);
    j := pf_explain_json(q);
    SELECT coalesce(n->>'Custom Plan Provider', n->>'Node Type'), (n->>'Actual Loops')::bigint,
           (n->>'Heap Fetches')::bigint, (n->>'Index Searches')::bigint
      INTO node, loops, heap_fetches, index_searches
      FROM jsonb_path_query(j, 'strict $.**?(@."Node Type" == "Nested Loop").Plans[*]?(@."Parent Relationship" == "Inner")') n;
    PERFORM set_config('pg_dio.enable_index_prefetch', 'on', true);
END
$$;
SELECT p.node, c.node, p.loops = c.loops AS same_loops, c.heap_fetches > 0 AS core_heap_fetches,
       p.heap_fetches IS NOT DISTINCT FROM c.heap_fetches AS same_heap_fetches,
       c.index_searches AS core_index_searches, p.index_searches = c.index_searches AS same_index_searches
  FROM pf_inner_counts('SELECT sum(p.k), count(*) FROM pf_vm v JOIN pf p ON p.id = v.id WHERE v.k = 1', true) p,
       pf_inner_counts('SELECT sum(p.k), count(*) FROM pf_vm v JOIN pf p ON p.id = v.id WHERE v.k = 1', false) c;
SELECT p.node, c.node, p.loops = c.loops AS same_loops, c.heap_fetches > 0 AS core_heap_fetches,
       p.heap_fetches IS NOT DISTINCT FROM c.heap_fetches AS same_heap_fetches,
       c.index_searches AS core_index_searches, p.index_searches = c.index_searches AS same_index_searches
  FROM pf_inner_counts('SELECT sum(v.id), count(*) FROM pf_vm o JOIN pf_vm v ON v.id = o.id + 1 WHERE o.k = 2', true) p,
       pf_inner_counts('SELECT sum(v.id), count(*) FROM pf_vm o JOIN pf_vm v ON v.id = o.id + 1 WHERE o.k = 2', false) c;
-- an EXPLAIN ANALYZE that fails keeps no entry for its workers' counters:
-- after eight failures at eight other plan nodes (1 to 8 Limits on top) the
-- workers' figures still add up
DO $$
BEGIN
    FOR k IN 1..8 LOOP
        BEGIN
            EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF) ' || repeat('SELECT * FROM (', k)
                || 'SELECT sum(p.k) / 0 FROM pf_vm v JOIN pf p ON p.id = v.id WHERE v.k = 1'
                || repeat(') s LIMIT 1000000', k);
            RAISE EXCEPTION 'EXPLAIN ANALYZE did not fail';
        EXCEPTION WHEN division_by_zero THEN
            NULL;
        END;
    END LOOP;
END
$$;
SELECT p.node, p.index_searches = c.index_searches AS same_index_searches_after_errors
  FROM pf_inner_counts('SELECT sum(p.k), count(*) FROM pf_vm v JOIN pf p ON p.id = v.id WHERE v.k = 1', true) p,
       pf_inner_counts('SELECT sum(p.k), count(*) FROM pf_vm v JOIN pf p ON p.id = v.id WHERE v.k = 1', false) c;
-- and the heap blocks our scan requested in the workers
SELECT blocks_requested > 0 AS workers_blocks_counted
  FROM pf_stats('SELECT sum(p.k), count(*) FROM pf_vm v JOIN pf p ON p.id = v.id WHERE v.k = 1');
DROP FUNCTION pf_inner_counts;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_index_scan_size;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_memoize;
RESET enable_material;
SET max_parallel_workers_per_gather = 0;

--
-- pg_dio.index_prefetch_min_rows (default 3): a scan that core expects to
-- fetch fewer heap tuples each time it runs keeps core's node -- a lookup of
-- one row, a nested loop's or a SubPlan's one-row probe, an index-only scan
-- of a table whose pages are all-visible -- and so does one whose rows, by
-- the index's correlation with the table's order, fall on one block
--
RESET pg_dio.index_prefetch_min_rows;
SHOW pg_dio.index_prefetch_min_rows;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
CREATE TABLE pf_gate (id int, g int, c int, h int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO pf_gate SELECT i, i * 7919 % 2500, i / 8, i * 7919 % 2500 % 100, repeat('g', 50)
  FROM generate_series(1, 20000) i;
CREATE UNIQUE INDEX pf_gate_id ON pf_gate (id);
CREATE INDEX pf_gate_g ON pf_gate (g);
CREATE INDEX pf_gate_c ON pf_gate (c);
VACUUM (ANALYZE) pf_gate;
-- one row: core's; eight rows: ours; eight rows next to each other: core's
SELECT dio_plan('SELECT pad FROM pf_gate WHERE id = 42');
SELECT dio_plan('SELECT pad FROM pf_gate WHERE g = 42');
SELECT dio_plan('SELECT pad FROM pf_gate WHERE c = 42');
SELECT dio_plan('SELECT pad FROM pf_gate WHERE c BETWEEN 40 AND 60');
-- a quarter or more of the table in its own order (id follows it): core's,
-- whose reads the kernel reads ahead; a tenth: ours
SELECT dio_plan('SELECT pad FROM pf_gate WHERE id <= 6000');
SELECT dio_plan('SELECT pad FROM pf_gate WHERE id <= 2000');
-- a nested loop's inner probe of one row keeps core's scan, of eight is ours
SELECT dio_plan('SELECT o.id, i.pad FROM pf_gate o JOIN pf_gate i ON i.id = o.id * 3 WHERE o.g = 7');
SELECT dio_plan('SELECT o.id, i.pad FROM pf_gate o JOIN pf_gate i ON i.g = o.id WHERE o.g = 7');
SELECT dio_plan('SELECT o.id, (SELECT i.pad FROM pf_gate i WHERE i.id = o.id + 1) FROM pf_gate o WHERE o.g = 7');
-- core multiplies the selectivities of g and h (= g % 100) as if they were
-- independent, to under a row; a run fetches the eight of g's value
CREATE INDEX pf_gate_gh ON pf_gate (g, h);
SELECT dio_plan('SELECT o.id, (SELECT max(i.pad) FROM pf_gate i WHERE i.g = o.id AND i.h = o.id % 100) FROM pf_gate o WHERE o.g = 7');
-- a unique index with every key column equal: one row at most
BEGIN;
DROP INDEX pf_gate_id, pf_gate_g, pf_gate_gh;
CREATE UNIQUE INDEX pf_gate_gid ON pf_gate (g, id);
SELECT dio_plan('SELECT pad FROM pf_gate WHERE g = 42 AND id = 339');
SELECT dio_plan('SELECT pad FROM pf_gate WHERE g = 42 AND id > 0');
ROLLBACK;
-- every page all-visible: an index-only scan fetches no heap tuple
SELECT dio_plan('SELECT id FROM pf_gate WHERE id < 5000');
UPDATE pf_gate SET pad = 'u' WHERE id % 2 = 0;
ANALYZE pf_gate;
SELECT dio_plan('SELECT id FROM pf_gate WHERE id < 5000');
-- 0: every scan that can be ours is, in core's plan
SET pg_dio.index_prefetch_min_rows = 0;
SELECT pf_compare('SELECT pad FROM pf_gate WHERE id = 42');
SELECT pf_compare('SELECT o.id, i.pad FROM pf_gate o JOIN pf_gate i ON i.id = o.id * 3 WHERE o.g = 7');
SELECT pf_compare('SELECT o.id, (SELECT i.pad FROM pf_gate i WHERE i.id = o.id + 1) FROM pf_gate o WHERE o.g = 7');
SET pg_dio.index_prefetch_min_rows = 100;
SELECT dio_plan('SELECT pad FROM pf_gate WHERE g = 42');
SET pg_dio.index_prefetch_min_rows = -1;
SET pg_dio.index_prefetch_min_rows = 0;
DROP TABLE pf_gate;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_memoize;

DROP TABLE pf, pf_geo, pf_words, pf_inc, pf_ex, pf_vm, pf_outer, pf_parted, pf_parted2, pf_pp, pf_qq, pf_inh
    CASCADE;
-- (the helpers stay for prefetch_prune and prefetch_selfread; the latter drops them)
