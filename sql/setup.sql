--
-- setup: the extension and helpers shared by the other tests
--
CREATE EXTENSION pg_dio;
SELECT extname, extversion FROM pg_extension WHERE extname = 'pg_dio';

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
SELECT pg_relation_size('dio_t') / 8192 AS dio_t_blocks;
