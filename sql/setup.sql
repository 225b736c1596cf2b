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

-- Wait (up to 10 s) until a backend has exited; true if it did.
CREATE FUNCTION wait_for_exit(p int) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..1000 LOOP
        IF NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = p) THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.01);
        PERFORM pg_stat_clear_snapshot();
    END LOOP;
    RETURN false;
END
$$;

-- Wait (up to 10 s) until a backend has pg_dio reads in flight; true if so.
CREATE FUNCTION wait_for_inflight(p int) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..1000 LOOP
        IF EXISTS (SELECT FROM pg_stat_aios WHERE source = 'pg_dio' AND pid = p) THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.01);
        PERFORM pg_stat_clear_snapshot();
    END LOOP;
    RETURN false;
END
$$;

-- A table of a few MB, all-visible, autovacuum off so nothing changes it.
CREATE TABLE dio_t (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO dio_t SELECT g, repeat(md5(g::text), 4) FROM generate_series(1, 60000) g;
VACUUM (ANALYZE) dio_t;
SELECT pg_relation_size('dio_t') / 8192 AS dio_t_blocks;
