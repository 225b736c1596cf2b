--
-- cancel: reads in flight are cancelled 100 times in a row by a statement
-- timeout and 100 times by pg_cancel_backend, each time with the statement's
-- full queue in flight; every time the engine reaps them before their memory
-- is reused, and the backend goes on working.  Then a backend is terminated
-- with reads in flight.
--
-- Another session (dblink), the victim, runs the statements; this one
-- watches it.  256kB reads, 32 in flight (dio_t needs more reads than the
-- queue holds), held in flight by the delay injection far longer than the
-- test: a statement ends only by being cancelled.  Without dblink the suite
-- says so and stops (expected/cancel_1.out).
SELECT NOT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'dblink') AS no_dblink \gset
\if :no_dblink
\echo 'skipped: needs the contrib module dblink, which this PostgreSQL does not have'
\quit
\endif
CREATE EXTENSION dblink;
SELECT dblink_connect('victim', self_conninfo());
SELECT pid AS victim_pid FROM dblink('victim', 'SELECT pg_backend_pid()') AS t(pid int) \gset
SELECT dblink_exec('victim', 'SET pg_dio.io_size = ''256kB''; SET pg_dio.queue_depth = 32; '
                             'SET pg_dio.inject_fault = delay; SET pg_dio.inject_delay = ''30s''');
CREATE TEMP TABLE c0 AS SELECT * FROM pg_dio_backend_stats(:victim_pid);

-- Run pg_dio_read in the victim n times, each time until it is cancelled:
-- 'cancel', by pg_cancel_backend from here once pg_stat_aios lists its 32
-- reads (waited for up to 10 s); 'timeout', by its statement_timeout of
-- 50 ms.  The timer may fire before the statement has submitted its reads
-- (pg_dio_read checks for interrupts before it submits; a starved machine):
-- such a statement has had nothing in flight, so it is repeated (at most n
-- times in all), not counted.  Counted: the statements cancelled, those that
-- had exactly the full queue submitted (32 reads) when cancelled, and those
-- that ended with the expected error.
CREATE FUNCTION cancel_loop(kind text, n int, victim int,
    OUT statements int, OUT full_queue int, OUT expected_error int)
LANGUAGE plpgsql AS $$
DECLARE
    sub bigint;
    d bigint;
    misses int := 0;
    expected text := CASE kind WHEN 'cancel' THEN '%canceling statement due to user request%'
                               ELSE '%canceling statement due to statement timeout%' END;
BEGIN
    PERFORM set_config('client_min_messages', 'warning', true);	-- dblink's NOTICE of the remote error
    statements := 0;
    full_queue := 0;
    expected_error := 0;
    IF kind = 'timeout' THEN
        PERFORM dblink_exec('victim', 'SET statement_timeout = ''50ms''');
    END IF;
    WHILE statements < n LOOP
        SELECT reads_submitted INTO sub FROM pg_dio_backend_stats(victim);
        PERFORM dblink_send_query('victim', 'SELECT blocks FROM pg_dio_read(''dio_t'')');
        IF kind = 'cancel' THEN
            PERFORM wait_for(format('SELECT count(*) = 32 FROM pg_stat_aios WHERE source = %L AND pid = %s',
                                    'pg_dio', victim));
            PERFORM pg_cancel_backend(victim);
        END IF;
        PERFORM * FROM dblink_get_result('victim', false) AS t(blocks bigint);
        IF dblink_error_message('victim') LIKE expected THEN
            expected_error := expected_error + 1;
        END IF;
        PERFORM * FROM dblink_get_result('victim', false) AS t(blocks bigint);
        d := (SELECT reads_submitted FROM pg_dio_backend_stats(victim)) - sub;
        IF kind = 'timeout' AND d = 0 AND misses < n THEN
            misses := misses + 1;
            expected_error := expected_error - 1;
            CONTINUE;
        END IF;
        statements := statements + 1;
        IF d = 32 THEN
            full_queue := full_queue + 1;
        END IF;
    END LOOP;
    IF kind = 'timeout' THEN
        PERFORM dblink_exec('victim', 'RESET statement_timeout');
    END IF;
END
$$;
SELECT * FROM cancel_loop('timeout', 100, :victim_pid);
SELECT * FROM cancel_loop('cancel', 100, :victim_pid);

-- every read was reaped: nothing is left in flight, as the victim itself
-- sees it (its next statement runs after each abort), nor in the view
SELECT x.* FROM dblink('victim', 'SELECT reads_submitted, reads_completed, reads_in_flight, wait_calls
                                  FROM pg_dio_backend_stats(pg_backend_pid())')
    AS a(reads_submitted bigint, reads_completed bigint, reads_in_flight int, wait_calls bigint),
     LATERAL (SELECT a.reads_submitted - b.reads_submitted = 200 * 32 AS submitted_each_time,
                     a.reads_submitted = a.reads_completed AS all_reaped,
                     a.reads_in_flight,
                     a.wait_calls > b.wait_calls AS waited
                FROM c0 b) x;
SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio';

-- the victim still works, and the buffers hold what they should
SELECT * FROM dblink('victim', 'RESET pg_dio.inject_fault; RESET pg_dio.inject_delay;
                               RESET pg_dio.io_size; RESET pg_dio.queue_depth;
                               SELECT direct_blocks = blocks, fallback_blocks, checksum_failures
                                 FROM pg_dio_read(''dio_t'')')
    AS t(all_direct boolean, fallback_blocks bigint, checksum_failures bigint);

-- cancelled inside a subtransaction: the subtransaction's abort reaps, right
-- away, within the same statement
CREATE FUNCTION read_in_subxact() RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        PERFORM * FROM pg_dio_read('dio_t');
        RETURN 'not cancelled';
    EXCEPTION WHEN query_canceled THEN
    END;
    RETURN (SELECT format('cancelled; then in flight: %s, all reaped: %s',
                          reads_in_flight, reads_submitted = reads_completed)
              FROM pg_dio_backend_stats(pg_backend_pid()));
END
$$;
SELECT dblink_exec('victim', 'SET pg_dio.inject_fault = delay; SET pg_dio.inject_delay = ''30s''');
SELECT dblink_send_query('victim', 'SELECT read_in_subxact()');
SELECT wait_for_inflight(:victim_pid);
SELECT pg_cancel_backend(:victim_pid);
SELECT * FROM dblink_get_result('victim') AS t(result text);
SELECT * FROM dblink_get_result('victim') AS t(result text);
SELECT dblink_disconnect('victim');
DROP FUNCTION read_in_subxact, cancel_loop;

-- terminate a backend with reads in flight
SELECT dblink_connect('victim', self_conninfo());
SELECT pid AS victim_pid FROM dblink('victim', 'SELECT pg_backend_pid()') AS t(pid int) \gset
SELECT dblink_exec('victim', 'SET pg_dio.inject_fault = ''delay''');
SELECT dblink_exec('victim', 'SET pg_dio.inject_delay = ''10s''');
SELECT dblink_send_query('victim', 'SELECT blocks FROM pg_dio_read(''dio_t'')');
SELECT wait_for_inflight(:victim_pid);
SELECT count(*) > 0 AS victim_in_flight, bool_and(relation = 'dio_t'::regclass) AS right_relation
  FROM pg_stat_aios WHERE source = 'pg_dio' AND pid = :victim_pid;
SELECT pg_terminate_backend(:victim_pid, 10000);
SELECT wait_for_exit(:victim_pid);
SELECT dblink_disconnect('victim');
SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio';
SELECT count(*) FROM pg_dio_backend_stats(:victim_pid);
DROP EXTENSION dblink;
SELECT direct_blocks = blocks AS all_direct FROM pg_dio_read('dio_t');
