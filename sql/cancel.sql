--
-- cancel: reads in flight are cancelled 100 times in a row; every time the
-- engine reaps them before their memory is reused, and the backend goes on
-- working.  Then a backend is terminated with reads in flight.
--
CREATE TEMP TABLE c0 AS SELECT * FROM pg_dio_backend_stats(pg_backend_pid());

-- 256kB reads, 32 in flight: dio_t needs more reads than the queue holds
SET pg_dio.io_size = '256kB';
SET pg_dio.queue_depth = 32;
SET pg_dio.inject_fault = 'delay';
SET pg_dio.inject_delay = '10s';	-- far longer than the timeout
SET statement_timeout = '50ms';
\set QUIET on
SELECT 'SELECT blocks FROM pg_dio_read(''dio_t'')' FROM generate_series(1, 100) \gexec
\set QUIET off
RESET statement_timeout;

-- every statement had its full queue in flight when it was cancelled, and
-- every read was reaped: nothing is left in flight, here or in the view
SELECT a.reads_submitted - b.reads_submitted >= 100 * 32 AS submitted_each_time,
       a.reads_submitted = a.reads_completed AS all_reaped,
       a.reads_in_flight,
       a.wait_calls > b.wait_calls AS waited
  FROM pg_dio_backend_stats(pg_backend_pid()) a, c0 b;
SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio';

-- the backend still works, and the buffers hold what they should
RESET pg_dio.inject_fault;
RESET pg_dio.inject_delay;
RESET pg_dio.io_size;
RESET pg_dio.queue_depth;
SELECT direct_blocks = blocks AS all_direct, fallback_blocks, checksum_failures
  FROM pg_dio_read('dio_t');

-- cancelled inside a subtransaction: the abort of the subtransaction reaps
SET pg_dio.inject_fault = 'delay';
SET pg_dio.inject_delay = '10s';
SET statement_timeout = '50ms';
DO $$
BEGIN
    BEGIN
        PERFORM * FROM pg_dio_read('dio_t');
    EXCEPTION WHEN query_canceled THEN
        RAISE NOTICE 'cancelled';
    END;
    -- still inside the same statement: the statement timeout has fired
END $$;
RESET statement_timeout;
SELECT reads_submitted = reads_completed AS all_reaped, reads_in_flight
  FROM pg_dio_backend_stats(pg_backend_pid());

-- terminate a backend with reads in flight
CREATE EXTENSION dblink;
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
RESET pg_dio.inject_fault;
RESET pg_dio.inject_delay;
SELECT direct_blocks = blocks AS all_direct FROM pg_dio_read('dio_t');
