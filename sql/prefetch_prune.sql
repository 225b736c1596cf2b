--
-- prefetch_prune: arriving at a heap page, PrefetchIndexScan does what
-- core's index fetch does: it prunes the page opportunistically, and has the
-- index mark the entries of rows dead to everyone (kill_prior_tuple).  Uses
-- prefetch_scan's helpers, and pageinspect to look at the pages: without
-- it the suite says so and stops (expected/prefetch_prune_1.out).
--
SELECT NOT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'pageinspect') AS no_pageinspect \gset
\if :no_pageinspect
\echo 'skipped: needs the contrib module pageinspect, which this PostgreSQL does not have'
\quit
\endif
SET jit = off;
SET debug_parallel_query = off;
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET pg_dio.index_prefetch_min_rows = 0;	-- test scans are small

-- arriving at a heap page prunes it opportunistically, as core's index fetch
-- does: one row HOT-updated in one transaction (which cannot prune its own
-- versions) until its page is nearly full; after the commit PrefetchIndexScan
-- lookups alone (autovacuum is off for the table) free the page.  Retried: a
-- snapshot another backend holds can keep the dead versions for a while.
CREATE EXTENSION pageinspect;
CREATE TABLE pf_prune (id int PRIMARY KEY, v int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO pf_prune VALUES (1, 0, repeat('x', 200));
BEGIN;
DO $$
BEGIN
    FOR i IN 1..40 LOOP
        EXIT WHEN (SELECT upper - lower FROM page_header(get_raw_page('pf_prune', 0))) < current_setting('block_size')::int / 10;
        UPDATE pf_prune SET v = v + 1 WHERE id = 1;
    END LOOP;
END
$$;
COMMIT;
SELECT upper - lower < current_setting('block_size')::int / 10 AS nearly_full, pg_relation_size('pf_prune') = current_setting('block_size')::int AS one_page
  FROM page_header(get_raw_page('pf_prune', 0));
SELECT pf_plan('SELECT v FROM pf_prune WHERE id = 1');
DO $$
BEGIN
    FOR i IN 1..100 LOOP
        PERFORM v FROM pf_prune WHERE id = 1;
        EXIT WHEN (SELECT upper - lower FROM page_header(get_raw_page('pf_prune', 0))) > current_setting('block_size')::int / 2;
        PERFORM pg_sleep(0.1);
    END LOOP;
END
$$;
SELECT upper - lower > current_setting('block_size')::int / 2 AS pruned, (SELECT v > 0 FROM pf_prune WHERE id = 1) AS updated
  FROM page_header(get_raw_page('pf_prune', 0));
DROP TABLE pf_prune;

-- a TID whose row is dead to everyone gets its index entry marked dead, as
-- core's index fetch has the index do (kill_prior_tuple): half the rows
-- deleted, then PrefetchIndexScans alone (no VACUUM, autovacuum off) mark
-- their entries; the count stays right.  Retried as above.
CREATE TABLE pf_kill (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO pf_kill SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g;
CREATE INDEX pf_kill_id ON pf_kill (id);
DELETE FROM pf_kill WHERE id % 2 = 0;
CREATE FUNCTION pf_dead_entries() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FILTER (WHERE i.dead)
      FROM generate_series(1, pg_relation_size('pf_kill_id') / current_setting('block_size')::int - 1) b,
           bt_page_items('pf_kill_id', b::int) i
$$;
SELECT pf_dead_entries();
SELECT pf_plan('SELECT sum(length(pad)) FROM pf_kill WHERE id BETWEEN 1 AND 2000');
DO $$
BEGIN
    FOR i IN 1..100 LOOP
        PERFORM sum(length(pad)) FROM pf_kill WHERE id BETWEEN 1 AND 2000;
        EXIT WHEN pf_dead_entries() = 1000;
        PERFORM pg_sleep(0.1);
    END LOOP;
END
$$;
SELECT pf_dead_entries(), count(*) FROM pf_kill WHERE id BETWEEN 1 AND 2000;

-- ... all of them in one scan that reads the heap ahead of the rows it
-- returns (the table out of shared buffers), so that its trailing scan marks
-- them, after a checkpoint, so that the first mark on each leaf page writes
-- a full-page image where data checksums are on.  Each try on a fresh copy,
-- since another backend's snapshot can keep the rows.
DO $$
DECLARE
    dead bigint;
BEGIN
    FOR i IN 1..20 LOOP
        TRUNCATE pf_kill;
        INSERT INTO pf_kill SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g;
        COMMIT;
        DELETE FROM pf_kill WHERE id % 2 = 0;
        COMMIT;
        CHECKPOINT;
        PERFORM pg_dio_evict('pf_kill');
        PERFORM sum(length(pad)) FROM pf_kill WHERE id BETWEEN 1 AND 2000;
        dead := pf_dead_entries();
        EXIT WHEN dead = 1000;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RAISE NOTICE 'entries marked dead by one scan: %', dead;
END
$$;
DROP TABLE pf_kill;
DROP FUNCTION pf_dead_entries;
DROP EXTENSION pageinspect;
