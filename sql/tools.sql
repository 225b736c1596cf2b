--
-- tools: pg_dio_evict and pg_dio_residency
--
CREATE TABLE tl (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO tl SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g;
VACUUM (FREEZE) tl;
CREATE INDEX tl_id ON tl (id);
SELECT current_setting('block_size')::int AS bs \gset
SELECT pg_relation_size('tl') / :bs AS tl_blocks \gset

-- read: every block is in shared buffers (small table: no ring)
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
SELECT count(*) FROM tl;
SELECT fork, blocks = pg_relation_size('tl', fork) / :bs AS blocks_ok,
       shared_buffers = blocks AS all_shared, all_visible = blocks AS all_visible,
       all_frozen = blocks AS all_frozen
  FROM pg_dio_residency('tl') ORDER BY fork;

-- evict from shared buffers and the OS page cache: nothing is resident after
SELECT buffers_evicted >= :tl_blocks AS evicted_all, buffers_skipped,
       os_cached_blocks_after
  FROM pg_dio_evict('tl');
SELECT fork, shared_buffers, os_cache FROM pg_dio_residency('tl') ORDER BY fork;

-- a read makes it resident again
SELECT count(*) FROM tl;
SELECT shared_buffers = blocks AS all_shared, os_cache > 0 AS os_cached
  FROM pg_dio_residency('tl') WHERE fork = 'main';

-- only from shared buffers: the OS keeps its copy
SELECT buffers_evicted >= :tl_blocks AS evicted, os_cached_blocks_before, os_cached_blocks_after
  FROM pg_dio_evict('tl', false);
SELECT shared_buffers, os_cache > 0 AS still_os_cached FROM pg_dio_residency('tl') WHERE fork = 'main';

-- dirty buffers are written, not lost
UPDATE tl SET pad = 'y' WHERE id <= 100;
SELECT buffers_flushed > 0 AS flushed, os_cached_blocks_after FROM pg_dio_evict('tl');
SELECT count(*) FROM tl WHERE pad = 'y';

-- indexes: no visibility map
RESET enable_indexscan;
SELECT count(*) FROM tl WHERE id = 5;
SELECT fork, blocks > 0 AS has_blocks, all_visible FROM pg_dio_residency('tl_id');
SELECT buffers_evicted > 0 AS evicted FROM pg_dio_evict('tl_id');

-- bad input
SELECT expect_error($$SELECT * FROM pg_dio_evict(NULL)$$);
SELECT expect_error($$SELECT * FROM pg_dio_evict('tl', NULL)$$);
SELECT expect_error($$SELECT * FROM pg_dio_residency(NULL)$$);
SELECT expect_error($$SELECT * FROM pg_dio_residency(0)$$);
CREATE VIEW tl_view AS SELECT * FROM tl;
SELECT expect_error($$SELECT * FROM pg_dio_evict('tl_view')$$);
SELECT expect_error($$SELECT * FROM pg_dio_residency('tl_view')$$);
CREATE TEMP TABLE tl_temp (a int);
SELECT expect_error($$SELECT * FROM pg_dio_evict('tl_temp')$$);

-- privileges: eviction for the owner, pg_maintain and superusers;
-- residency for whoever may SELECT
CREATE ROLE regress_dio_tools_user;
CREATE ROLE regress_dio_tools_maint IN ROLE pg_maintain;
GRANT CREATE ON SCHEMA public TO regress_dio_tools_user;
SET ROLE regress_dio_tools_user;
SELECT expect_error($$SELECT * FROM pg_dio_evict('tl')$$);
SELECT expect_error($$SELECT * FROM pg_dio_residency('tl')$$);
CREATE TABLE tl_mine AS SELECT 1 AS a;
SELECT buffers_skipped FROM pg_dio_evict('tl_mine');
SELECT fork, blocks FROM pg_dio_residency('tl_mine') WHERE fork = 'main';
DROP TABLE tl_mine;
RESET ROLE;
SET ROLE regress_dio_tools_maint;
SELECT buffers_skipped FROM pg_dio_evict('tl');
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_dio_tools_user;
DROP ROLE regress_dio_tools_user, regress_dio_tools_maint;
DROP VIEW tl_view;
DROP TABLE tl;
