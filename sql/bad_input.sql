--
-- bad_input: wrong arguments give clear errors with SQLSTATEs, never a crash
--
SELECT expect_error($$SELECT * FROM pg_dio_read(NULL)$$);
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_t', NULL)$$);
SELECT expect_error($$SELECT * FROM pg_dio_read(0)$$);
SELECT expect_error($$SELECT * FROM pg_dio_read(4294967295)$$);
SELECT expect_error($$SELECT * FROM pg_dio_read('no_such_table')$$);
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_t', 'bogus')$$);
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_t', '')$$);

-- a dropped relation's OID
CREATE TABLE dio_dropped (a int);
SELECT 'dio_dropped'::regclass::oid AS dropped_oid \gset
DROP TABLE dio_dropped;
SELECT regexp_replace(expect_error(format('SELECT * FROM pg_dio_read(%s)', :dropped_oid)), '\d+', 'N', 'g');

-- relation kinds without heap storage of their own
CREATE INDEX dio_t_id ON dio_t (id);
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_t_id')$$);
CREATE VIEW dio_view AS SELECT * FROM dio_t;
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_view')$$);
CREATE SEQUENCE dio_seq;
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_seq')$$);
CREATE FOREIGN DATA WRAPPER dio_fdw;
CREATE SERVER dio_server FOREIGN DATA WRAPPER dio_fdw;
CREATE FOREIGN TABLE dio_foreign (a int) SERVER dio_server;
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_foreign')$$);
CREATE TABLE dio_parted (a int) PARTITION BY RANGE (a);
CREATE TABLE dio_part1 PARTITION OF dio_parted FOR VALUES FROM (0) TO (100);
INSERT INTO dio_parted VALUES (1);
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_parted')$$);
SELECT blocks, direct_blocks FROM pg_dio_read('dio_part1');
CREATE TYPE dio_composite AS (a int);
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_composite')$$);

-- temporary tables live in local buffers
CREATE TEMP TABLE dio_temp AS SELECT 1 AS a;
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_temp')$$);

-- privileges: SELECT on the table is required
CREATE ROLE regress_dio_nobody;
SET ROLE regress_dio_nobody;
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_t')$$);
-- privileges are checked before the relation is locked or its kind looked at
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_t_id')$$);
SELECT expect_error($$SELECT * FROM pg_dio_read('dio_view')$$);
SELECT expect_error($$SELECT pg_dio_stats_reset()$$);
SELECT expect_error($$SELECT count(*) FROM pg_stat_aios$$);
RESET ROLE;
GRANT SELECT ON dio_t TO regress_dio_nobody;
SET ROLE regress_dio_nobody;
SELECT direct_blocks = blocks AS all_direct FROM pg_dio_read('dio_t');
RESET ROLE;
REVOKE SELECT ON dio_t FROM regress_dio_nobody;
DROP ROLE regress_dio_nobody;

-- histogram and stats functions with odd pids return no rows
SELECT count(*) FROM pg_dio_histogram(-5);
SELECT count(*) FROM pg_dio_histogram(2147483647);
SELECT count(*) FROM pg_dio_backend_stats(2147483647);

DROP INDEX dio_t_id;
DROP VIEW dio_view;
DROP SEQUENCE dio_seq;
DROP FOREIGN TABLE dio_foreign;
DROP SERVER dio_server;
DROP FOREIGN DATA WRAPPER dio_fdw;
DROP TABLE dio_parted;
DROP TYPE dio_composite;
