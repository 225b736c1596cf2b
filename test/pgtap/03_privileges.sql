-- Privileges: what an unprivileged role, a member of pg_read_all_stats and a
-- role with the privileges of the session's user may see and do.
--
-- All roles are created inside the transaction and rolled back with it.  The
-- session itself is always the superuser's (pg_prove connects as postgres):
-- SET ROLE changes the current user, not the session user, and core's backend
-- status (pg_stat_activity, and so pg_dio's per-backend views) records the
-- session user of each backend.
BEGIN;
SELECT plan(61);

CREATE ROLE dio_nobody NOLOGIN;
CREATE ROLE dio_stats_reader NOLOGIN IN ROLE pg_read_all_stats;
CREATE ROLE dio_session_peer NOLOGIN;
-- dio_session_peer has the privileges of the session user (postgres)
DO $$BEGIN EXECUTE format('GRANT %I TO dio_session_peer', session_user); END$$;

CREATE TABLE dio_priv_secret AS
    SELECT g, repeat('s', 200) AS pad FROM generate_series(1, 2000) g;
CREATE TABLE dio_priv_mine AS
    SELECT g, repeat('m', 200) AS pad FROM generate_series(1, 3000) g;
ALTER TABLE dio_priv_mine OWNER TO dio_nobody;
-- Write the pages out, so that the direct reads below read the rows rather
-- than the space the new files were extended with.
CHECKPOINT;

-- How many of pg_dio_backend_stats()'s 21 counters each backend shows.
CREATE TEMP VIEW dio_backend_visibility AS
    SELECT pid, backend_type,
           num_nonnulls(reads_submitted, reads_completed, bytes_read,
                        blocks_direct, blocks_fallback, fallback_io_error,
                        fallback_no_uring, fallback_no_odirect, fallback_no_fd,
                        fallback_verify, fallback_no_memory, errors, short_reads,
                        submit_calls, wait_calls, wait_time_ms, read_latency_ms,
                        bytes_requested, max_inflight, reads_in_flight,
                        io_memory) AS nonnull_counters
      FROM pg_dio_backend_stats();
GRANT SELECT ON dio_backend_visibility TO PUBLIC;

-- ===========================================================================
-- The superuser
-- ===========================================================================
SELECT is((SELECT direct_blocks FROM pg_dio_read('dio_priv_secret')),
          pg_relation_size('dio_priv_secret') / 8192,
          'superuser: pg_dio_read reads every block of a table directly');

SELECT set_eq(
    $$SELECT pid FROM pg_dio_backend_stats()$$,
    $$SELECT pid FROM pg_stat_activity$$,
    'superuser: pg_dio_backend_stats() lists the backends pg_stat_activity lists');
SELECT is((SELECT count(*)::int FROM dio_backend_visibility WHERE nonnull_counters <> 21),
          0, 'superuser: sees all 21 counters of every backend, auxiliary processes included');
SELECT cmp_ok((SELECT count(*)::int FROM dio_backend_visibility WHERE backend_type <> 'client backend'),
          '>', 0, 'superuser: (there are auxiliary processes in the list)');
SELECT ok((SELECT reads_submitted > 0 AND blocks_direct > 0
             FROM pg_dio_backend_stats(pg_backend_pid())),
          'superuser: sees its own backend''s counters, which count the read above');
SELECT cmp_ok((SELECT count(*)::int FROM pg_stat_aio_histogram WHERE pid = pg_backend_pid()),
          '=', 25 + 8, 'superuser: sees its own backend''s histograms');

-- ===========================================================================
-- An unprivileged role
-- ===========================================================================
SET ROLE dio_nobody;

SELECT lives_ok('SELECT * FROM pg_stat_aio_backends',
    'unprivileged: can SELECT pg_stat_aio_backends');
SELECT lives_ok('SELECT * FROM pg_stat_aio_histogram',
    'unprivileged: can SELECT pg_stat_aio_histogram');
SELECT throws_ok('SELECT * FROM pg_stat_aios', '42501',
    'permission denied for view pg_stat_aios',
    'unprivileged: cannot SELECT pg_stat_aios');
SELECT throws_ok('SELECT pg_dio_stats_reset()', '42501',
    'permission denied for function pg_dio_stats_reset',
    'unprivileged: cannot run pg_dio_stats_reset()');
SELECT throws_ok('SELECT * FROM pg_stat_dio_statements', '42501',
    'permission denied for view pg_stat_dio_statements',
    'unprivileged: cannot SELECT pg_stat_dio_statements (other roles'' statements)');
SELECT throws_ok('SELECT * FROM pg_dio_statements()', '42501',
    'permission denied for function pg_dio_statements',
    'unprivileged: cannot call pg_dio_statements()');
SELECT throws_ok('SELECT pg_dio_statements_reset()', '42501',
    'permission denied for function pg_dio_statements_reset',
    'unprivileged: cannot run pg_dio_statements_reset()');
SELECT throws_ok($$SET pg_dio.track = 'all'$$, '42501',
    'permission denied to set parameter "pg_dio.track"',
    'unprivileged: cannot SET pg_dio.track (superuser, like pg_stat_statements.track)');
SELECT throws_ok($$SET pg_dio.inject_fault = 'eio'$$, '42501',
    'permission denied to set parameter "pg_dio.inject_fault"',
    'unprivileged: cannot SET pg_dio.inject_fault');
SELECT throws_ok($$SET pg_dio.inject_delay = '1s'$$, '42501',
    'permission denied to set parameter "pg_dio.inject_delay"',
    'unprivileged: cannot SET pg_dio.inject_delay');
SELECT is(current_setting('pg_dio.inject_fault'), 'none',
    'unprivileged: pg_dio.inject_fault is unchanged');
SELECT lives_ok($$SET pg_dio.io_size = '64kB'$$, 'unprivileged: can SET pg_dio.io_size');
SELECT is(current_setting('pg_dio.io_size'), '64kB', 'unprivileged: pg_dio.io_size is now 64kB');
SELECT lives_ok($$SET pg_dio.queue_depth = 4$$, 'unprivileged: can SET pg_dio.queue_depth');

-- pg_dio_read needs SELECT on the table
SELECT throws_ok($$SELECT * FROM pg_dio_read('dio_priv_secret')$$, '42501',
    'permission denied for table dio_priv_secret',
    'unprivileged: pg_dio_read on a table without SELECT fails');
RESET ROLE;
GRANT SELECT (g) ON dio_priv_secret TO dio_nobody;
SET ROLE dio_nobody;
SELECT throws_ok($$SELECT * FROM pg_dio_read('dio_priv_secret')$$, '42501',
    'permission denied for table dio_priv_secret',
    'unprivileged: SELECT on some columns is not enough (pg_dio_read reads whole pages)');

-- ... and works on its own table, with its own settings
SELECT results_eq(
    $$SELECT blocks, bytes, direct_blocks + fallback_blocks, fallback_blocks,
             fallback_reasons, checksum_failures, reads
        FROM pg_dio_read('dio_priv_mine')$$,
    $$SELECT pg_relation_size('dio_priv_mine') / 8192, pg_relation_size('dio_priv_mine'),
             pg_relation_size('dio_priv_mine') / 8192, 0::bigint,
             '{}'::jsonb, 0::bigint, ceil(pg_relation_size('dio_priv_mine') / 65536.0)::bigint$$,
    'unprivileged: pg_dio_read on its own table reads all its blocks directly, 64kB at a time');
SELECT cmp_ok((SELECT avg_read_bytes FROM pg_dio_read('dio_priv_mine')), '<=', 65536::bigint,
    'unprivileged: reads are at most pg_dio.io_size');
SELECT cmp_ok(pg_relation_size('dio_priv_mine') / 8192, '>', 8::bigint,
    'unprivileged: (its table spans more than one read)');
SELECT is((SELECT direct_blocks + fallback_blocks FROM pg_dio_read('dio_priv_mine', 'fsm')),
          0::bigint, 'unprivileged: a fork that does not exist has no blocks');

-- Other backends: every backend here belongs to postgres (or, for auxiliary
-- processes, to no role), so the unprivileged role sees them all, but none of
-- their counters.
SELECT is((SELECT count(*)::int FROM dio_backend_visibility),
          (SELECT count(*)::int FROM pg_stat_activity),
          'unprivileged: pg_dio_backend_stats() still lists every backend');
-- like pg_stat_activity: the pid is shown, backend_type only where core shows it
SELECT is((SELECT count(*)::int FROM dio_backend_visibility v
             JOIN pg_stat_activity a USING (pid)
            WHERE v.pid IS NULL OR (v.backend_type IS NULL) <> (a.backend_type IS NULL)),
          0, 'unprivileged: pid shown for every backend, backend_type exactly where pg_stat_activity shows it');
SELECT is((SELECT count(*)::int FROM dio_backend_visibility WHERE nonnull_counters > 0),
          0, 'unprivileged: all counters of other roles'' backends are NULL');
SELECT is((SELECT count(*)::int FROM pg_stat_activity
            WHERE query IS DISTINCT FROM '<insufficient privilege>'),
          0, 'unprivileged: (just as core''s pg_stat_activity hides every backend''s query)');
SELECT is((SELECT count(*)::int FROM pg_stat_aio_backends
            WHERE num_nonnulls(reads_submitted, reads_in_flight, core_reads,
                               core_read_bytes, core_read_time, core_hits,
                               core_writes, core_write_bytes) > 0),
          0, 'unprivileged: pg_stat_aio_backends shows no counters (pg_dio''s or core''s) of them');

-- Its "own" backend: the session user is postgres, and (exactly like core's
-- pg_stat_activity, which decides on the backend's session user too) the
-- current user dio_nobody does not have postgres's privileges, so this
-- backend is another role's backend to it.
SELECT is((SELECT query FROM pg_stat_activity WHERE pid = pg_backend_pid()),
          '<insufficient privilege>',
          'unprivileged: core''s pg_stat_activity hides this backend''s query from it');
SELECT is((SELECT nonnull_counters FROM dio_backend_visibility WHERE pid = pg_backend_pid()),
          0, 'unprivileged: likewise pg_dio hides this backend''s counters (session user postgres)');
SELECT is((SELECT count(*)::int FROM pg_dio_histogram(pg_backend_pid())),
          0, 'unprivileged: and this backend''s histograms');
SELECT is((SELECT count(*)::int FROM pg_stat_aio_histogram WHERE pid IS NOT NULL),
          0, 'unprivileged: pg_stat_aio_histogram shows no backend''s histograms');
SELECT is((SELECT count(*)::int FROM pg_stat_aio_histogram WHERE pid IS NULL),
          25 + 8, 'unprivileged: pg_stat_aio_histogram shows the cluster-wide histograms');
SELECT ok((SELECT reads_submitted > 0 FROM pg_dio_cluster_stats()),
          'unprivileged: pg_dio_cluster_stats() shows the cluster totals');
SELECT lives_ok('SELECT * FROM pg_dio_inflight()',
    'unprivileged: can call pg_dio_inflight()');

RESET ROLE;

-- ===========================================================================
-- A role with the privileges of the session user (member of postgres)
-- ===========================================================================
SET ROLE dio_session_peer;
SELECT isnt((SELECT query FROM pg_stat_activity WHERE pid = pg_backend_pid()),
          '<insufficient privilege>',
          'session user''s peer: core''s pg_stat_activity shows this backend''s query');
SELECT is((SELECT nonnull_counters FROM dio_backend_visibility WHERE pid = pg_backend_pid()),
          21, 'session user''s peer: pg_dio shows this backend''s counters');
SELECT ok((SELECT core_reads IS NOT NULL FROM pg_stat_aio_backends WHERE pid = pg_backend_pid()),
          'session user''s peer: and core''s I/O counters beside them');
SELECT is((SELECT count(*)::int FROM pg_dio_histogram(pg_backend_pid())),
          25 + 8, 'session user''s peer: and this backend''s histograms');
SELECT is((SELECT count(*)::int FROM dio_backend_visibility
            WHERE nonnull_counters NOT IN (0, 21)),
          0, 'session user''s peer: every backend shows all counters or none');
SELECT set_eq(
    $$SELECT pid FROM dio_backend_visibility WHERE nonnull_counters = 21$$,
    $$SELECT pid FROM pg_stat_activity WHERE query IS DISTINCT FROM '<insufficient privilege>'$$,
    'session user''s peer: pg_dio shows the counters of exactly the backends whose query core shows');
SELECT cmp_ok((SELECT count(*)::int FROM dio_backend_visibility WHERE nonnull_counters = 0),
          '>', 0, 'session user''s peer: (auxiliary processes, which run as no role, stay hidden)');
SELECT lives_ok('SELECT * FROM pg_stat_aios',
    'session user''s peer: has the privileges of the views'' owner, so can SELECT pg_stat_aios');
RESET ROLE;

-- ===========================================================================
-- A member of pg_read_all_stats
-- ===========================================================================
SET ROLE dio_stats_reader;
SELECT lives_ok('SELECT * FROM pg_stat_aios',
    'pg_read_all_stats: can SELECT pg_stat_aios');
SELECT is((SELECT count(*)::int FROM pg_stat_aios WHERE source = 'pg_dio'),
          0, 'pg_read_all_stats: (no pg_dio read is in flight now)');
SELECT is((SELECT count(*)::int FROM dio_backend_visibility WHERE nonnull_counters <> 21),
          0, 'pg_read_all_stats: sees all counters of every backend');
SELECT is((SELECT count(*)::int FROM dio_backend_visibility),
          (SELECT count(*)::int FROM pg_stat_activity),
          'pg_read_all_stats: of every backend pg_stat_activity lists');
SELECT ok((SELECT blocks_direct > 0 FROM pg_dio_backend_stats(pg_backend_pid())),
          'pg_read_all_stats: sees this backend''s counters');
SELECT is((SELECT count(*)::int FROM pg_stat_aio_backends
            WHERE backend_type = 'client backend' AND core_reads IS NULL),
          0, 'pg_read_all_stats: and core''s I/O counters of every client backend');
SELECT is((SELECT count(*)::int FROM pg_stat_aio_histogram WHERE pid = pg_backend_pid()),
          25 + 8, 'pg_read_all_stats: sees this backend''s histograms');
SELECT throws_ok('SELECT pg_dio_stats_reset()', '42501',
    'permission denied for function pg_dio_stats_reset',
    'pg_read_all_stats: still cannot reset the statistics');
SELECT lives_ok('SELECT * FROM pg_stat_dio_statements',
    'pg_read_all_stats: can SELECT pg_stat_dio_statements');
SELECT ok((SELECT count(*) > 0 FROM pg_stat_dio_statements WHERE userid <> 'dio_stats_reader'::regrole),
    'pg_read_all_stats: sees other roles'' statements');
SELECT throws_ok('SELECT pg_dio_statements_reset()', '42501',
    'permission denied for function pg_dio_statements_reset',
    'pg_read_all_stats: still cannot reset the per-statement statistics');
SELECT throws_ok($$SET pg_dio.inject_fault = 'eio'$$, '42501',
    'permission denied to set parameter "pg_dio.inject_fault"',
    'pg_read_all_stats: still cannot SET pg_dio.inject_fault');
SELECT throws_ok($$SELECT * FROM pg_dio_read('dio_priv_secret')$$, '42501',
    'permission denied for table dio_priv_secret',
    'pg_read_all_stats: does not grant pg_dio_read on tables');
RESET ROLE;

-- and granting EXECUTE is how a role gets pg_dio_stats_reset
GRANT EXECUTE ON FUNCTION pg_dio_stats_reset() TO dio_nobody;
SET ROLE dio_nobody;
SELECT lives_ok('SELECT pg_dio_stats_reset()',
    'unprivileged with EXECUTE granted: can reset the statistics');
RESET ROLE;
SELECT is((SELECT reads_submitted FROM pg_dio_backend_stats(pg_backend_pid())),
          0::bigint, 'after a reset this backend''s counters read as zero');

SELECT * FROM finish();
ROLLBACK;
