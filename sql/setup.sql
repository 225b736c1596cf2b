--
-- setup: the extension and helpers shared by the other tests
--
-- (make installcheck runs the suites against a running server: it must
-- preload pg_dio, and they run as a superuser)
SELECT 'pg_dio' = ANY (string_to_array(replace(current_setting('shared_preload_libraries'), ' ', ''), ','))
           AS preloaded,
       (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser;
CREATE EXTENSION pg_dio;
SELECT extname, extversion FROM pg_extension WHERE extname = 'pg_dio';

-- Every test session in this database gets the defaults of pg_dio's settings
-- and of the planner and I/O settings the tests' plans and figures depend
-- on, whatever the server's configuration says.
DO $$
DECLARE
    s record;
BEGIN
    FOR s IN SELECT name, boot_val FROM pg_settings
              WHERE context IN ('user', 'superuser')
                AND (name LIKE 'pg\_dio.%' OR name LIKE 'enable\_%' OR name LIKE '%parallel%'
                     OR name IN ('effective_io_concurrency', 'maintenance_io_concurrency', 'io_combine_limit',
                                 'work_mem', 'hash_mem_multiplier', 'jit', 'effective_cache_size',
                                 'random_page_cost', 'seq_page_cost', 'cpu_tuple_cost',
                                 'cpu_index_tuple_cost', 'cpu_operator_cost')) LOOP
        EXECUTE format('ALTER DATABASE %I SET %s = %L', current_database(), s.name, s.boot_val);
    END LOOP;
END
$$;

-- pg_dio computes query IDs (as pg_stat_statements does): EXPLAIN (VERBOSE)
-- would print them, and they are not the same from build to build; core's
-- regression mode keeps them out of EXPLAIN, as PostgreSQL's suites run.
DO $$BEGIN EXECUTE format('ALTER DATABASE %I SET compute_query_id = regress', current_database()); END$$;

-- Run a statement, return its SQLSTATE and message (or 'ok').
CREATE FUNCTION expect_error(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- Connection string to this server, for dblink.
CREATE FUNCTION self_conninfo() RETURNS text
LANGUAGE sql AS $$
    SELECT format('dbname=%s user=%s host=%s port=%s', current_database(), current_user,
                  split_part(current_setting('unix_socket_directories'), ',', 1),
                  current_setting('port'))
$$;

-- Poll a boolean query (up to 10 s, fresh statistics each time); its last value.
CREATE FUNCTION wait_for(cond text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    ok boolean;
BEGIN
    FOR i IN 1..1000 LOOP
        EXECUTE cond INTO ok;
        EXIT WHEN ok;
        PERFORM pg_sleep(0.01);
        PERFORM pg_stat_clear_snapshot();
    END LOOP;
    RETURN ok;
END
$$;

-- Wait until a backend has exited / has pg_dio reads in flight.
CREATE FUNCTION wait_for_exit(p int) RETURNS boolean
LANGUAGE sql AS $$
    SELECT wait_for(format('SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = %s)', p))
$$;
CREATE FUNCTION wait_for_inflight(p int) RETURNS boolean
LANGUAGE sql AS $$
    SELECT wait_for(format('SELECT EXISTS (SELECT FROM pg_stat_aios WHERE source = %L AND pid = %s)',
                           'pg_dio', p))
$$;

-- A table of a few MB, all-visible, autovacuum off so nothing changes it.
CREATE TABLE dio_t (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO dio_t SELECT g, repeat(md5(g::text), 4) FROM generate_series(1, 60000) g;
VACUUM (ANALYZE) dio_t;
-- (more than a full queue of the cancel test's reads: 32 of 256kB)
SELECT pg_relation_size('dio_t') > 32 * 256 * 1024 AS more_than_32_reads_of_256kb;

-- Run a query with DirectSeqScan on and off (same transaction); say whether
-- the first plan used it and the second did not, and whether the results are
-- the same multiset (ordered => also in the same order).
CREATE FUNCTION dio_compare(q text, ordered boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    saved text := current_setting('pg_dio.enable_direct_scan');
    plan text;
    agg text := CASE WHEN ordered THEN 'array_agg(x::text)'
                     ELSE 'array_agg(x::text ORDER BY x::text)' END;
    r_on text[];
    r_off text[];
BEGIN
    PERFORM set_config('pg_dio.enable_direct_scan', 'on', true);
    SELECT string_agg(p, E'\n') INTO plan FROM dio_plan(q) p;
    IF plan NOT LIKE '%DirectSeqScan%' THEN
        PERFORM set_config('pg_dio.enable_direct_scan', saved, true);
        RETURN 'no DirectSeqScan in the plan';
    END IF;
    EXECUTE format('SELECT %s FROM (%s) x', agg, q) INTO r_on;
    PERFORM set_config('pg_dio.enable_direct_scan', 'off', true);
    SELECT string_agg(p, E'\n') INTO plan FROM dio_plan(q) p;
    EXECUTE format('SELECT %s FROM (%s) x', agg, q) INTO r_off;
    PERFORM set_config('pg_dio.enable_direct_scan', saved, true);
    IF plan LIKE '%DirectSeqScan%' THEN
        RETURN 'DirectSeqScan although disabled';
    END IF;
    IF r_on IS NOT DISTINCT FROM r_off THEN
        RETURN format('same, %s rows', coalesce(cardinality(r_on), 0));
    END IF;
    RETURN format('DIFFERENT: %s rows direct, %s rows core',
                  coalesce(cardinality(r_on), 0), coalesce(cardinality(r_off), 0));
END
$$;

-- The plan of a query, one line a row, without costs.
-- (Subplans without their names, which PostgreSQL 19 changed: "SubPlan 1"
-- became "SubPlan expr_1".)
CREATE FUNCTION dio_plan(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        RETURN NEXT regexp_replace(line, '(SubPlan|InitPlan) \S+$', '\1');
    END LOOP;
END
$$;

-- A plan (one line an element) as core's: pg_dio's scans under core's names,
-- and a ProbePrefetch dropped with its own lines, its child moved up a level
-- in its place (EXPLAIN indents a level by six).
CREATE FUNCTION dio_core_plan(p text[]) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    r text[] := '{}';
    l text;
    ind int;
    cuts int[] := '{}';         -- indents of the ProbePrefetch nodes dropped ...
    kids boolean[] := '{}';     -- ... and whether their child has begun
    n int;
BEGIN
    FOREACH l IN ARRAY p LOOP
        ind := length(l) - length(ltrim(l));
        WHILE cardinality(cuts) > 0 AND ind <= cuts[cardinality(cuts)] LOOP
            cuts := cuts[1:cardinality(cuts) - 1];
            kids := kids[1:cardinality(kids) - 1];
        END LOOP;
        n := cardinality(cuts);
        IF n > 0 AND NOT kids[n] THEN
            IF ltrim(l) !~ '^->' THEN
                CONTINUE;
            END IF;
            kids[n] := true;
        END IF;
        IF l ~ '^\s*->  (Parallel )?Custom Scan \(ProbePrefetch\)' THEN
            cuts := cuts || ind;
            kids := kids || false;
            CONTINUE;
        END IF;
        r := r || replace(replace(replace(substr(l, 6 * n + 1),
                 'Custom Scan (PrefetchIndexScan)', 'Index Scan'),
                 'Custom Scan (PrefetchIndexOnlyScan)', 'Index Only Scan'),
                 'Custom Scan (DirectSeqScan)', 'Seq Scan');
    END LOOP;
    RETURN r;
END
$$;

-- What the DirectSeqScan nodes of a query did (EXPLAIN ANALYZE, summed).
CREATE FUNCTION dio_scan_stats(q text,
    OUT nodes int, OUT direct_blocks bigint, OUT direct_reads bigint,
    OUT buffered bigint, OUT resident bigint, OUT not_all_visible bigint,
    OUT isolation bigint, OUT verification bigint, OUT io_fallback bigint,
    OUT os_cached bigint, OUT parallel_nodes int)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || q INTO j;
    SELECT count(*), sum((n->>'Direct Blocks')::bigint), sum((n->>'Direct Reads')::bigint),
           sum((n->>'Buffered Blocks')::bigint), sum((n->>'Buffered Resident')::bigint),
           sum((n->>'Buffered Not All-Visible')::bigint), sum((n->>'Buffered Isolation')::bigint),
           sum((n->>'Buffered Verification')::bigint), sum((n->>'Buffered I/O Fallback')::bigint),
           sum((n->>'Buffered OS-Cached')::bigint),
           count(*) FILTER (WHERE (n->>'Parallel Aware')::boolean)
      INTO nodes, direct_blocks, direct_reads, buffered, resident, not_all_visible,
           isolation, verification, io_fallback, os_cached, parallel_nodes
      FROM jsonb_path_query(j, 'strict $.**?(@."Custom Plan Provider" == "DirectSeqScan")') n;
END
$$;
