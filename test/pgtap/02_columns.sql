-- The columns of pg_dio's views and the OUT columns of its functions:
-- names, order and types.
BEGIN;
SELECT plan(63);

-- pg_stat_aios
SELECT columns_are('public', 'pg_stat_aios', ARRAY[
    'source',
    'pid',
    'io_id',
    'state',
    'operation',
    'relation',
    'fork',
    'block',
    'blocks',
    'bytes',
    'age',
    'query_id'],
    'pg_stat_aios has exactly the documented columns');
SELECT col_type_is('public', 'pg_stat_aios', c, t, 'pg_stat_aios.' || c || ' is ' || t)
  FROM (VALUES
    ('source', 'text'),
    ('pid', 'integer'),
    ('io_id', 'integer'),
    ('state', 'text'),
    ('operation', 'text'),
    ('relation', 'regclass'),
    ('fork', 'text'),
    ('block', 'bigint'),
    ('blocks', 'integer'),
    ('bytes', 'bigint'),
    ('age', 'interval'),
    ('query_id', 'bigint')) AS v(c, t);
SELECT is(ARRAY(SELECT attname::text FROM pg_catalog.pg_attribute
                WHERE attrelid = 'public.pg_stat_aios'::regclass AND attnum > 0 AND NOT attisdropped
                ORDER BY attnum),
          ARRAY['source', 'pid', 'io_id', 'state', 'operation', 'relation', 'fork', 'block', 'blocks', 'bytes', 'age', 'query_id'],
          'pg_stat_aios''s columns are in the documented order');

-- pg_stat_dio_statements: keyed as pg_stat_statements, to join with it
SELECT is(ARRAY(SELECT attname::text FROM pg_catalog.pg_attribute
                WHERE attrelid = 'public.pg_stat_dio_statements'::regclass AND attnum > 0 AND NOT attisdropped
                ORDER BY attnum),
          ARRAY[
    'userid',
    'dbid',
    'toplevel',
    'queryid',
    'calls',
    'direct_blocks',
    'direct_reads',
    'direct_read_bytes',
    'buffered_resident',
    'buffered_not_all_visible',
    'buffered_isolation',
    'buffered_verification',
    'buffered_io_fallback',
    'buffered_os_cached',
    'fallback_io_error',
    'fallback_no_uring',
    'fallback_no_odirect',
    'fallback_no_fd',
    'fallback_verify',
    'fallback_no_memory',
    'prefetch_blocks_requested',
    'prefetch_blocks_advised',
    'prefetch_blocks_read',
    'prefetch_blocks_os_cached',
    'wait_time_ms',
    'read_time_ms',
    'prefetch_wait_time_ms'],
          'pg_stat_dio_statements has the documented columns, in order');
SELECT results_eq(
    $$SELECT attname::text COLLATE "default", pg_catalog.format_type(atttypid, atttypmod)
        FROM pg_catalog.pg_attribute
       WHERE attrelid = 'public.pg_stat_dio_statements'::regclass AND attnum > 0 AND NOT attisdropped
       ORDER BY attnum$$,
    $$VALUES
             ('userid', 'oid'),
             ('dbid', 'oid'),
             ('toplevel', 'boolean'),
             ('queryid', 'bigint'),
             ('calls', 'bigint'),
             ('direct_blocks', 'bigint'),
             ('direct_reads', 'bigint'),
             ('direct_read_bytes', 'bigint'),
             ('buffered_resident', 'bigint'),
             ('buffered_not_all_visible', 'bigint'),
             ('buffered_isolation', 'bigint'),
             ('buffered_verification', 'bigint'),
             ('buffered_io_fallback', 'bigint'),
             ('buffered_os_cached', 'bigint'),
             ('fallback_io_error', 'bigint'),
             ('fallback_no_uring', 'bigint'),
             ('fallback_no_odirect', 'bigint'),
             ('fallback_no_fd', 'bigint'),
             ('fallback_verify', 'bigint'),
             ('fallback_no_memory', 'bigint'),
             ('prefetch_blocks_requested', 'bigint'),
             ('prefetch_blocks_advised', 'bigint'),
             ('prefetch_blocks_read', 'bigint'),
             ('prefetch_blocks_os_cached', 'bigint'),
             ('wait_time_ms', 'double precision'),
             ('read_time_ms', 'double precision'),
             ('prefetch_wait_time_ms', 'double precision')$$,
    'pg_stat_dio_statements''s column types');

-- pg_stat_aio_backends
SELECT columns_are('public', 'pg_stat_aio_backends', ARRAY[
    'pid',
    'backend_type',
    'reads_submitted',
    'reads_completed',
    'bytes_read',
    'blocks_direct',
    'blocks_fallback',
    'fallback_io_error',
    'fallback_no_uring',
    'fallback_no_odirect',
    'fallback_no_fd',
    'fallback_verify',
    'fallback_no_memory',
    'errors',
    'short_reads',
    'submit_calls',
    'wait_calls',
    'wait_time_ms',
    'read_latency_ms',
    'bytes_requested',
    'max_inflight',
    'reads_in_flight',
    'io_memory',
    'core_reads',
    'core_read_bytes',
    'core_read_time',
    'core_hits',
    'core_writes',
    'core_write_bytes'],
    'pg_stat_aio_backends has exactly the documented columns');
SELECT col_type_is('public', 'pg_stat_aio_backends', c, t, 'pg_stat_aio_backends.' || c || ' is ' || t)
  FROM (VALUES
    ('pid', 'integer'),
    ('backend_type', 'text'),
    ('reads_submitted', 'bigint'),
    ('reads_completed', 'bigint'),
    ('bytes_read', 'bigint'),
    ('blocks_direct', 'bigint'),
    ('blocks_fallback', 'bigint'),
    ('fallback_io_error', 'bigint'),
    ('fallback_no_uring', 'bigint'),
    ('fallback_no_odirect', 'bigint'),
    ('fallback_no_fd', 'bigint'),
    ('fallback_verify', 'bigint'),
    ('fallback_no_memory', 'bigint'),
    ('errors', 'bigint'),
    ('short_reads', 'bigint'),
    ('submit_calls', 'bigint'),
    ('wait_calls', 'bigint'),
    ('wait_time_ms', 'double precision'),
    ('read_latency_ms', 'double precision'),
    ('bytes_requested', 'bigint'),
    ('max_inflight', 'bigint'),
    ('reads_in_flight', 'integer'),
    ('io_memory', 'bigint'),
    ('core_reads', 'bigint'),
    ('core_read_bytes', 'bigint'),
    ('core_read_time', 'double precision'),
    ('core_hits', 'bigint'),
    ('core_writes', 'bigint'),
    ('core_write_bytes', 'bigint')) AS v(c, t);
SELECT is(ARRAY(SELECT attname::text FROM pg_catalog.pg_attribute
                WHERE attrelid = 'public.pg_stat_aio_backends'::regclass AND attnum > 0 AND NOT attisdropped
                ORDER BY attnum),
          ARRAY['pid', 'backend_type', 'reads_submitted', 'reads_completed', 'bytes_read', 'blocks_direct', 'blocks_fallback', 'fallback_io_error', 'fallback_no_uring', 'fallback_no_odirect', 'fallback_no_fd', 'fallback_verify', 'fallback_no_memory', 'errors', 'short_reads', 'submit_calls', 'wait_calls', 'wait_time_ms', 'read_latency_ms', 'bytes_requested', 'max_inflight', 'reads_in_flight', 'io_memory', 'core_reads', 'core_read_bytes', 'core_read_time', 'core_hits', 'core_writes', 'core_write_bytes'],
          'pg_stat_aio_backends''s columns are in the documented order');

-- pg_stat_aio_histogram
SELECT columns_are('public', 'pg_stat_aio_histogram', ARRAY[
    'pid',
    'kind',
    'bucket',
    'lower_bound',
    'upper_bound',
    'count'],
    'pg_stat_aio_histogram has exactly the documented columns');
SELECT col_type_is('public', 'pg_stat_aio_histogram', c, t, 'pg_stat_aio_histogram.' || c || ' is ' || t)
  FROM (VALUES
    ('pid', 'integer'),
    ('kind', 'text'),
    ('bucket', 'integer'),
    ('lower_bound', 'bigint'),
    ('upper_bound', 'bigint'),
    ('count', 'bigint')) AS v(c, t);
SELECT is(ARRAY(SELECT attname::text FROM pg_catalog.pg_attribute
                WHERE attrelid = 'public.pg_stat_aio_histogram'::regclass AND attnum > 0 AND NOT attisdropped
                ORDER BY attnum),
          ARRAY['pid', 'kind', 'bucket', 'lower_bound', 'upper_bound', 'count'],
          'pg_stat_aio_histogram''s columns are in the documented order');

-- pg_dio_read(regclass,text): every argument, in order (i = IN, o = OUT)
SELECT results_eq(
    $$SELECT a.n COLLATE "default", pg_catalog.format_type(a.t, NULL), a.m::text
        FROM pg_catalog.pg_proc p,
             unnest(p.proargnames, p.proallargtypes, p.proargmodes::text[])
               WITH ORDINALITY AS a(n, t, m, o)
       WHERE p.oid = 'public.pg_dio_read(regclass,text)'::regprocedure
       ORDER BY a.o$$,
    $$VALUES ('rel', 'regclass', 'i'),
             ('fork', 'text', 'i'),
             ('blocks', 'bigint', 'o'),
             ('bytes', 'bigint', 'o'),
             ('reads', 'bigint', 'o'),
             ('avg_read_bytes', 'bigint', 'o'),
             ('direct_blocks', 'bigint', 'o'),
             ('fallback_blocks', 'bigint', 'o'),
             ('fallback_reasons', 'jsonb', 'o'),
             ('checksum_failures', 'bigint', 'o'),
             ('elapsed_ms', 'double precision', 'o'),
             ('mb_per_s', 'double precision', 'o')$$,
    'pg_dio_read(regclass,text): argument and result column names, types and modes');

-- pg_dio_backend_stats(integer): every argument, in order (i = IN, o = OUT)
SELECT results_eq(
    $$SELECT a.n COLLATE "default", pg_catalog.format_type(a.t, NULL), a.m::text
        FROM pg_catalog.pg_proc p,
             unnest(p.proargnames, p.proallargtypes, p.proargmodes::text[])
               WITH ORDINALITY AS a(n, t, m, o)
       WHERE p.oid = 'public.pg_dio_backend_stats(integer)'::regprocedure
       ORDER BY a.o$$,
    $$VALUES ('pid', 'integer', 'i'),
             ('pid', 'integer', 'o'),
             ('backend_type', 'text', 'o'),
             ('reads_submitted', 'bigint', 'o'),
             ('reads_completed', 'bigint', 'o'),
             ('bytes_read', 'bigint', 'o'),
             ('blocks_direct', 'bigint', 'o'),
             ('blocks_fallback', 'bigint', 'o'),
             ('fallback_io_error', 'bigint', 'o'),
             ('fallback_no_uring', 'bigint', 'o'),
             ('fallback_no_odirect', 'bigint', 'o'),
             ('fallback_no_fd', 'bigint', 'o'),
             ('fallback_verify', 'bigint', 'o'),
             ('fallback_no_memory', 'bigint', 'o'),
             ('errors', 'bigint', 'o'),
             ('short_reads', 'bigint', 'o'),
             ('submit_calls', 'bigint', 'o'),
             ('wait_calls', 'bigint', 'o'),
             ('wait_time_ms', 'double precision', 'o'),
             ('read_latency_ms', 'double precision', 'o'),
             ('bytes_requested', 'bigint', 'o'),
             ('max_inflight', 'bigint', 'o'),
             ('reads_in_flight', 'integer', 'o'),
             ('io_memory', 'bigint', 'o')$$,
    'pg_dio_backend_stats(integer): argument and result column names, types and modes');

-- pg_dio_cluster_stats(): every argument, in order (i = IN, o = OUT)
SELECT results_eq(
    $$SELECT a.n COLLATE "default", pg_catalog.format_type(a.t, NULL), a.m::text
        FROM pg_catalog.pg_proc p,
             unnest(p.proargnames, p.proallargtypes, p.proargmodes::text[])
               WITH ORDINALITY AS a(n, t, m, o)
       WHERE p.oid = 'public.pg_dio_cluster_stats()'::regprocedure
       ORDER BY a.o$$,
    $$VALUES ('reads_submitted', 'bigint', 'o'),
             ('reads_completed', 'bigint', 'o'),
             ('bytes_read', 'bigint', 'o'),
             ('blocks_direct', 'bigint', 'o'),
             ('blocks_fallback', 'bigint', 'o'),
             ('fallback_io_error', 'bigint', 'o'),
             ('fallback_no_uring', 'bigint', 'o'),
             ('fallback_no_odirect', 'bigint', 'o'),
             ('fallback_no_fd', 'bigint', 'o'),
             ('fallback_verify', 'bigint', 'o'),
             ('fallback_no_memory', 'bigint', 'o'),
             ('errors', 'bigint', 'o'),
             ('short_reads', 'bigint', 'o'),
             ('submit_calls', 'bigint', 'o'),
             ('wait_calls', 'bigint', 'o'),
             ('wait_time_ms', 'double precision', 'o'),
             ('read_latency_ms', 'double precision', 'o'),
             ('bytes_requested', 'bigint', 'o'),
             ('max_inflight', 'bigint', 'o'),
             ('reads_in_flight', 'integer', 'o'),
             ('stats_reset', 'timestamp with time zone', 'o')$$,
    'pg_dio_cluster_stats(): argument and result column names, types and modes');

-- pg_dio_histogram(integer): every argument, in order (i = IN, o = OUT)
SELECT results_eq(
    $$SELECT a.n COLLATE "default", pg_catalog.format_type(a.t, NULL), a.m::text
        FROM pg_catalog.pg_proc p,
             unnest(p.proargnames, p.proallargtypes, p.proargmodes::text[])
               WITH ORDINALITY AS a(n, t, m, o)
       WHERE p.oid = 'public.pg_dio_histogram(integer)'::regprocedure
       ORDER BY a.o$$,
    $$VALUES ('pid', 'integer', 'i'),
             ('pid', 'integer', 'o'),
             ('kind', 'text', 'o'),
             ('bucket', 'integer', 'o'),
             ('lower_bound', 'bigint', 'o'),
             ('upper_bound', 'bigint', 'o'),
             ('count', 'bigint', 'o')$$,
    'pg_dio_histogram(integer): argument and result column names, types and modes');

-- pg_dio_inflight(): every argument, in order (i = IN, o = OUT)
SELECT results_eq(
    $$SELECT a.n COLLATE "default", pg_catalog.format_type(a.t, NULL), a.m::text
        FROM pg_catalog.pg_proc p,
             unnest(p.proargnames, p.proallargtypes, p.proargmodes::text[])
               WITH ORDINALITY AS a(n, t, m, o)
       WHERE p.oid = 'public.pg_dio_inflight()'::regprocedure
       ORDER BY a.o$$,
    $$VALUES ('pid', 'integer', 'o'),
             ('io_id', 'integer', 'o'),
             ('reltablespace', 'oid', 'o'),
             ('reldatabase', 'oid', 'o'),
             ('relfilenode', 'oid', 'o'),
             ('fork', 'text', 'o'),
             ('block', 'bigint', 'o'),
             ('blocks', 'integer', 'o'),
             ('bytes', 'bigint', 'o'),
             ('submitted_at', 'timestamp with time zone', 'o'),
             ('query_id', 'bigint', 'o')$$,
    'pg_dio_inflight(): argument and result column names, types and modes');

-- pg_dio_aio_target(text): every argument, in order (i = IN, o = OUT)
SELECT results_eq(
    $$SELECT a.n COLLATE "default", pg_catalog.format_type(a.t, NULL), a.m::text
        FROM pg_catalog.pg_proc p,
             unnest(p.proargnames, p.proallargtypes, p.proargmodes::text[])
               WITH ORDINALITY AS a(n, t, m, o)
       WHERE p.oid = 'public.pg_dio_aio_target(text)'::regprocedure
       ORDER BY a.o$$,
    $$VALUES ('target_desc', 'text', 'i'),
             ('reltablespace', 'oid', 'o'),
             ('reldatabase', 'oid', 'o'),
             ('relfilenode', 'oid', 'o'),
             ('fork', 'text', 'o'),
             ('block', 'bigint', 'o')$$,
    'pg_dio_aio_target(text): argument and result column names, types and modes');

-- the backend view is the function's columns plus core's per-backend I/O
SELECT is(
    ARRAY(SELECT attname::text FROM pg_catalog.pg_attribute
           WHERE attrelid = 'public.pg_stat_aio_backends'::regclass AND attnum > 0
           ORDER BY attnum LIMIT 23),
    ARRAY(SELECT a.n FROM pg_catalog.pg_proc p,
                 unnest(p.proargnames, p.proargmodes::text[]) WITH ORDINALITY AS a(n, m, o)
           WHERE p.oid = 'public.pg_dio_backend_stats(integer)'::regprocedure AND a.m = 'o'
           ORDER BY a.o),
    'pg_stat_aio_backends starts with all of pg_dio_backend_stats''s columns');
SELECT is(
    ARRAY(SELECT attname::text FROM pg_catalog.pg_attribute
           WHERE attrelid = 'public.pg_stat_aio_backends'::regclass AND attnum > 2
           ORDER BY attnum LIMIT 18),
    ARRAY(SELECT a.n FROM pg_catalog.pg_proc p,
                 unnest(p.proargnames, p.proargmodes::text[]) WITH ORDINALITY AS a(n, m, o)
           WHERE p.oid = 'public.pg_dio_cluster_stats()'::regprocedure AND a.m = 'o'
           ORDER BY a.o LIMIT 18),
    'per-backend and cluster-wide counters have the same names in the same order');

SELECT * FROM finish();
ROLLBACK;
