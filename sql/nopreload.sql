--
-- nopreload: run by test/run_tests.sh against a cluster WITHOUT
-- shared_preload_libraries = 'pg_dio'.  The extension installs, its settings
-- exist, and every function says what is missing.
--
SHOW shared_preload_libraries;
CREATE EXTENSION pg_dio;
SHOW pg_dio.io_size;
CREATE TABLE t AS SELECT 1 AS a;
SELECT * FROM pg_dio_read('t');
SELECT * FROM pg_dio_backend_stats();
SELECT * FROM pg_dio_cluster_stats();
SELECT * FROM pg_dio_histogram();
SELECT * FROM pg_dio_inflight();
SELECT pg_dio_stats_reset();
SELECT * FROM pg_stat_aios;
SELECT * FROM pg_stat_dio_statements;
SELECT pg_dio_statements_reset();
SELECT * FROM pg_dio_evict('t');
SELECT * FROM pg_dio_residency('t');
\set VERBOSITY sqlstate
SELECT * FROM pg_dio_read('t');
