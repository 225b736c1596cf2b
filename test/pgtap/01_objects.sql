-- pg_dio's SQL objects: functions (arguments, result types, properties),
-- views, the extension's member list and the settings in pg_settings.
BEGIN;
SELECT plan(76);

SELECT has_extension('pg_dio', 'extension pg_dio is installed');

-- ---------------------------------------------------------------------------
-- The extension owns exactly these objects (no more, no less).
-- ---------------------------------------------------------------------------
SELECT set_eq(
    $$SELECT pg_catalog.pg_describe_object(classid, objid, objsubid)
        FROM pg_catalog.pg_depend
       WHERE refclassid = 'pg_catalog.pg_extension'::regclass
         AND refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'pg_dio')
         AND deptype = 'e'
         AND classid <> 'pg_catalog.pg_type'::regclass$$,
    ARRAY['function pg_dio_read(regclass,text)',
          'function pg_dio_backend_stats(integer)',
          'function pg_dio_cluster_stats()',
          'function pg_dio_histogram(integer)',
          'function pg_dio_inflight()',
          'function pg_dio_stats_reset()',
          'function pg_dio_relation(oid,oid,oid)',
          'function pg_dio_aio_target(text)',
          'function pg_dio_evict(regclass,boolean)',
          'function pg_dio_residency(regclass)',
          'function pg_dio_statements()',
          'function pg_dio_statements_reset()',
          'view pg_stat_aios',
          'view pg_stat_aio_backends',
          'view pg_stat_aio_histogram',
          'view pg_stat_dio_statements'],
    'pg_dio owns exactly its 12 functions and 4 views');

-- ---------------------------------------------------------------------------
-- Functions: existence with their input argument types, result type.
-- ---------------------------------------------------------------------------
SELECT has_function('public', 'pg_dio_read', ARRAY['regclass', 'text'],
    'pg_dio_read(regclass, text) exists');
SELECT function_returns('public', 'pg_dio_read', ARRAY['regclass', 'text'], 'record',
    'pg_dio_read returns one record');

SELECT has_function('public', 'pg_dio_backend_stats', ARRAY['integer'],
    'pg_dio_backend_stats(integer) exists');
SELECT function_returns('public', 'pg_dio_backend_stats', ARRAY['integer'], 'setof record',
    'pg_dio_backend_stats returns a set of records');

SELECT has_function('public', 'pg_dio_cluster_stats', ARRAY[]::text[],
    'pg_dio_cluster_stats() exists');
SELECT function_returns('public', 'pg_dio_cluster_stats', ARRAY[]::text[], 'record',
    'pg_dio_cluster_stats returns one record');

SELECT has_function('public', 'pg_dio_histogram', ARRAY['integer'],
    'pg_dio_histogram(integer) exists');
SELECT function_returns('public', 'pg_dio_histogram', ARRAY['integer'], 'setof record',
    'pg_dio_histogram returns a set of records');

SELECT has_function('public', 'pg_dio_inflight', ARRAY[]::text[],
    'pg_dio_inflight() exists');
SELECT function_returns('public', 'pg_dio_inflight', ARRAY[]::text[], 'setof record',
    'pg_dio_inflight returns a set of records');

SELECT has_function('public', 'pg_dio_stats_reset', ARRAY[]::text[],
    'pg_dio_stats_reset() exists');
SELECT function_returns('public', 'pg_dio_stats_reset', ARRAY[]::text[], 'void',
    'pg_dio_stats_reset returns void');

SELECT has_function('public', 'pg_dio_statements', ARRAY[]::text[],
    'pg_dio_statements() exists');
SELECT function_returns('public', 'pg_dio_statements', ARRAY[]::text[], 'setof record',
    'pg_dio_statements returns a set of records');

SELECT has_function('public', 'pg_dio_statements_reset', ARRAY[]::text[],
    'pg_dio_statements_reset() exists');
SELECT function_returns('public', 'pg_dio_statements_reset', ARRAY[]::text[],
    'timestamp with time zone', 'pg_dio_statements_reset returns when it reset');

SELECT has_function('public', 'pg_dio_relation', ARRAY['oid', 'oid', 'oid'],
    'pg_dio_relation(oid, oid, oid) exists');
SELECT function_returns('public', 'pg_dio_relation', ARRAY['oid', 'oid', 'oid'], 'regclass',
    'pg_dio_relation returns regclass');

SELECT has_function('public', 'pg_dio_aio_target', ARRAY['text'],
    'pg_dio_aio_target(text) exists');
SELECT function_returns('public', 'pg_dio_aio_target', ARRAY['text'], 'record',
    'pg_dio_aio_target returns one record');

-- no other overloads
SELECT is((SELECT count(*)::int FROM pg_catalog.pg_proc
            WHERE proname LIKE 'pg\_dio\_%'
              AND pronamespace = 'public'::regnamespace),
          12, 'there are exactly 12 pg_dio_* functions (no stray overloads)');

-- argument defaults
SELECT is(pg_catalog.pg_get_function_arg_default('pg_dio_read(regclass,text)'::regprocedure, 2),
          '''main''::text', 'pg_dio_read''s fork defaults to ''main''');
SELECT is(pg_catalog.pg_get_function_arg_default('pg_dio_read(regclass,text)'::regprocedure, 1),
          NULL, 'pg_dio_read''s rel has no default');
SELECT is(pg_catalog.pg_get_function_arg_default('pg_dio_backend_stats(integer)'::regprocedure, 1),
          'NULL::integer', 'pg_dio_backend_stats''s pid defaults to NULL');
SELECT is(pg_catalog.pg_get_function_arg_default('pg_dio_histogram(integer)'::regprocedure, 1),
          'NULL::integer', 'pg_dio_histogram''s pid defaults to NULL');

-- ---------------------------------------------------------------------------
-- Function properties: language, strictness, volatility, parallel safety.
-- ---------------------------------------------------------------------------
SELECT function_lang_is('public', 'pg_dio_read', ARRAY['regclass', 'text'], 'c',
    'pg_dio_read is written in C');
SELECT function_lang_is('public', 'pg_dio_relation', ARRAY['oid', 'oid', 'oid'], 'sql',
    'pg_dio_relation is written in SQL');
SELECT function_lang_is('public', 'pg_dio_aio_target', ARRAY['text'], 'sql',
    'pg_dio_aio_target is written in SQL');

SELECT isnt_strict('public', 'pg_dio_read', ARRAY['regclass', 'text'],
    'pg_dio_read is not strict (it reports NULL arguments itself)');
SELECT isnt_strict('public', 'pg_dio_backend_stats', ARRAY['integer'],
    'pg_dio_backend_stats is not strict (NULL pid = every backend)');
SELECT isnt_strict('public', 'pg_dio_histogram', ARRAY['integer'],
    'pg_dio_histogram is not strict (NULL pid = cluster and every backend)');
SELECT isnt_strict('public', 'pg_dio_relation', ARRAY['oid', 'oid', 'oid'],
    'pg_dio_relation is not strict');
SELECT isnt_strict('public', 'pg_dio_aio_target', ARRAY['text'],
    'pg_dio_aio_target is not strict');
SELECT is_strict('public', 'pg_dio_cluster_stats', ARRAY[]::text[],
    'pg_dio_cluster_stats is strict');
SELECT is_strict('public', 'pg_dio_inflight', ARRAY[]::text[],
    'pg_dio_inflight is strict');
SELECT is_strict('public', 'pg_dio_stats_reset', ARRAY[]::text[],
    'pg_dio_stats_reset is strict');

SELECT volatility_is('public', 'pg_dio_read', ARRAY['regclass', 'text'], 'volatile',
    'pg_dio_read is volatile');
SELECT volatility_is('public', 'pg_dio_backend_stats', ARRAY['integer'], 'volatile',
    'pg_dio_backend_stats is volatile');
SELECT volatility_is('public', 'pg_dio_cluster_stats', ARRAY[]::text[], 'volatile',
    'pg_dio_cluster_stats is volatile');
SELECT volatility_is('public', 'pg_dio_histogram', ARRAY['integer'], 'volatile',
    'pg_dio_histogram is volatile');
SELECT volatility_is('public', 'pg_dio_inflight', ARRAY[]::text[], 'volatile',
    'pg_dio_inflight is volatile');
SELECT volatility_is('public', 'pg_dio_stats_reset', ARRAY[]::text[], 'volatile',
    'pg_dio_stats_reset is volatile');
SELECT volatility_is('public', 'pg_dio_relation', ARRAY['oid', 'oid', 'oid'], 'stable',
    'pg_dio_relation is stable');
SELECT volatility_is('public', 'pg_dio_aio_target', ARRAY['text'], 'stable',
    'pg_dio_aio_target is stable');

SELECT results_eq(
    $$SELECT proname::text COLLATE "default", proparallel::text, prosecdef
        FROM pg_catalog.pg_proc
       WHERE proname LIKE 'pg\_dio\_%' AND pronamespace = 'public'::regnamespace
       ORDER BY proname$$,
    $$VALUES ('pg_dio_aio_target', 's', false),
             ('pg_dio_backend_stats', 'r', false),
             ('pg_dio_cluster_stats', 'r', false),
             ('pg_dio_evict', 'u', false),
             ('pg_dio_histogram', 'r', false),
             ('pg_dio_inflight', 'r', false),
             ('pg_dio_read', 'r', false),
             ('pg_dio_relation', 's', false),
             ('pg_dio_residency', 'r', false),
             ('pg_dio_statements', 'r', false),
             ('pg_dio_statements_reset', 'r', false),
             ('pg_dio_stats_reset', 'r', false)$$,
    'parallel safety as declared, no SECURITY DEFINER function');

-- ---------------------------------------------------------------------------
-- Views
-- ---------------------------------------------------------------------------
SELECT has_view('public', 'pg_stat_aios', 'view pg_stat_aios exists');
SELECT has_view('public', 'pg_stat_aio_backends', 'view pg_stat_aio_backends exists');
SELECT has_view('public', 'pg_stat_aio_histogram', 'view pg_stat_aio_histogram exists');
SELECT has_view('public', 'pg_stat_dio_statements', 'view pg_stat_dio_statements exists');
SELECT view_owner_is('public', 'pg_stat_aios', current_user,
    'pg_stat_aios is owned by the extension''s owner (it reads pg_aios with the owner''s rights)');

-- The views work for the superuser and have the shape their functions say.
SELECT lives_ok('SELECT * FROM pg_stat_aios', 'pg_stat_aios can be queried');
SELECT lives_ok('SELECT * FROM pg_stat_aio_backends', 'pg_stat_aio_backends can be queried');
SELECT lives_ok('SELECT * FROM pg_stat_dio_statements', 'pg_stat_dio_statements can be queried');
SELECT is((SELECT count(*)::int FROM pg_stat_aio_histogram WHERE pid IS NULL),
          25 + 8, 'pg_stat_aio_histogram has 25 latency + 8 size buckets cluster-wide');
SELECT results_eq(
    $$SELECT kind, bucket, lower_bound, upper_bound FROM pg_stat_aio_histogram
       WHERE pid IS NULL AND kind = 'size' ORDER BY bucket$$,
    $$VALUES ('size', 0, 0::bigint, 16384::bigint),
             ('size', 1, 16384, 32768),
             ('size', 2, 32768, 65536),
             ('size', 3, 65536, 131072),
             ('size', 4, 131072, 262144),
             ('size', 5, 262144, 524288),
             ('size', 6, 524288, 1048576),
             ('size', 7, 1048576, NULL)$$,
    'size histogram buckets: [8kB * 2^i, 8kB * 2^(i+1)), first from 0, last open-ended');
SELECT results_eq(
    $$SELECT bucket, lower_bound, upper_bound FROM pg_stat_aio_histogram
       WHERE pid IS NULL AND kind = 'latency' AND bucket IN (0, 1, 10, 23, 24)
       ORDER BY bucket$$,
    $$VALUES (0, 0::bigint, 2::bigint),
             (1, 2, 4),
             (10, 1024, 2048),
             (23, 8388608, 16777216),
             (24, 16777216, NULL)$$,
    'latency histogram buckets: [2^i, 2^(i+1)) us, first from 0, last open-ended');

-- ---------------------------------------------------------------------------
-- pg_dio_relation: (tablespace, database, relfilenode) -> relation
-- ---------------------------------------------------------------------------
CREATE TABLE dio_obj_t (i int);
SELECT is(pg_dio_relation(
              (SELECT dattablespace FROM pg_catalog.pg_database WHERE datname = current_database()),
              (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database()),
              pg_catalog.pg_relation_filenode('dio_obj_t')),
          'dio_obj_t'::regclass, 'pg_dio_relation resolves a table of the current database');
SELECT is(pg_dio_relation(1664, 0, pg_catalog.pg_relation_filenode('pg_catalog.pg_database')),
          'pg_catalog.pg_database'::regclass, 'pg_dio_relation resolves a shared catalog');
SELECT is(pg_dio_relation(
              (SELECT dattablespace FROM pg_catalog.pg_database WHERE datname = current_database()),
              (SELECT oid FROM pg_catalog.pg_database WHERE datname = 'template1'),
              pg_catalog.pg_relation_filenode('dio_obj_t')),
          NULL, 'pg_dio_relation gives NULL for a file of another database');

-- ---------------------------------------------------------------------------
-- Settings
-- ---------------------------------------------------------------------------
SELECT results_eq(
    $$SELECT name, vartype, unit, min_val, max_val, context, boot_val
        FROM pg_catalog.pg_settings WHERE name LIKE 'pg\_dio.%' ORDER BY name$$,
    $$VALUES ('pg_dio.direct_scan_threshold', 'integer', '8kB', '0', '1073741823', 'user', '2048'),
             ('pg_dio.enable_direct_scan', 'bool', NULL, NULL, NULL, 'user', 'on'),
             ('pg_dio.enable_index_prefetch', 'bool', NULL, NULL, NULL, 'user', 'on'),
             ('pg_dio.enable_probe_prefetch', 'bool', NULL, NULL, NULL, 'user', 'on'),
             ('pg_dio.index_direct_read', 'bool', NULL, NULL, NULL, 'user', 'off'),
             ('pg_dio.index_prefetch_advice', 'bool', NULL, NULL, NULL, 'user', 'on'),
             ('pg_dio.index_prefetch_combine', 'bool', NULL, NULL, NULL, 'user', 'on'),
             ('pg_dio.index_prefetch_min_rows', 'integer', NULL, '0', '2147483647', 'user', '3'),
             ('pg_dio.io_size', 'integer', 'kB', '8', '1024', 'user', '1024'),
             ('pg_dio.max_io_memory', 'integer', 'kB', '2048', '2147483647', 'user', '262144'),
             ('pg_dio.max_statements', 'integer', NULL, '100', '1073741823', 'postmaster', '5000'),
             ('pg_dio.os_cache_check', 'bool', NULL, NULL, NULL, 'user', 'on'),
             ('pg_dio.probe_direct_read', 'bool', NULL, NULL, NULL, 'user', 'on'),
             ('pg_dio.probe_prefetch_distance', 'integer', NULL, '1', '1024', 'user', '64'),
             ('pg_dio.probe_shared_memory', 'integer', 'kB', '0', '65536', 'user', '0'),
             ('pg_dio.queue_depth', 'integer', NULL, '1', '128', 'user', '16'),
             ('pg_dio.resident_sweep', 'enum', NULL, NULL, NULL, 'user', 'auto'),
             ('pg_dio.track', 'enum', NULL, NULL, NULL, 'superuser', 'top')$$,
    'pg_dio''s settings: type, unit, range, context and default');
SELECT is((SELECT count(*) FROM pg_catalog.pg_settings WHERE name LIKE 'pg\_dio.inject\_%'),
          0::bigint, 'the test-only settings pg_dio.inject_fault and pg_dio.inject_delay are hidden');
SELECT is(current_setting('pg_dio.io_size'), '1MB', 'pg_dio.io_size shows as 1MB');
SELECT is(current_setting('pg_dio.inject_delay'), '200ms', 'pg_dio.inject_delay shows as 200ms');
SELECT is(current_setting('pg_dio.queue_depth'), '16', 'pg_dio.queue_depth is 16');
SELECT is(current_setting('pg_dio.inject_fault'), 'none', 'pg_dio.inject_fault is none');
SELECT is(current_setting('pg_dio.direct_scan_threshold'), '16MB', 'pg_dio.direct_scan_threshold shows as 16MB');
SELECT is(current_setting('pg_dio.enable_direct_scan'), 'on', 'pg_dio.enable_direct_scan is on');
SELECT is(current_setting('pg_dio.enable_index_prefetch'), 'on', 'pg_dio.enable_index_prefetch is on');

-- io_size must be a multiple of the block size and within range
SELECT throws_ok($$SET pg_dio.io_size = '12kB'$$, '22023', NULL,
    'pg_dio.io_size rejects a size that is not a multiple of 8kB');
SELECT throws_ok($$SET pg_dio.io_size = '2MB'$$, '22023', NULL,
    'pg_dio.io_size rejects more than 1MB');
SELECT throws_ok($$SET pg_dio.queue_depth = 0$$, '22023', NULL,
    'pg_dio.queue_depth rejects 0');
SELECT throws_ok($$SET pg_dio.queue_depth = 129$$, '22023', NULL,
    'pg_dio.queue_depth rejects 129');
SELECT throws_ok($$SET pg_dio.inject_fault = 'bogus'$$, '22023', NULL,
    'pg_dio.inject_fault rejects an unknown fault');
SELECT throws_ok($$SET pg_dio.no_such_setting = 1$$, '42602', NULL,
    'the pg_dio prefix is reserved: unknown pg_dio.* settings are rejected');

SELECT * FROM finish();
ROLLBACK;
