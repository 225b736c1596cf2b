/* src/pg_dio--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION pg_dio" to load this file. \quit

--
-- The read engine's workout: read (and verify) a relation fork with O_DIRECT.
--
CREATE FUNCTION pg_dio_read(rel regclass, fork text DEFAULT 'main',
    OUT blocks bigint,
    OUT bytes bigint,
    OUT reads bigint,
    OUT avg_read_bytes bigint,
    OUT direct_blocks bigint,
    OUT fallback_blocks bigint,
    OUT fallback_reasons jsonb,
    OUT checksum_failures bigint,
    OUT elapsed_ms double precision,
    OUT mb_per_s double precision)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_dio_read'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_dio_read(regclass, text) IS
'reads every block of a relation fork with O_DIRECT through io_uring and verifies it, bypassing shared buffers and the OS cache';

--
-- Statistics
--
CREATE FUNCTION pg_dio_backend_stats(pid integer DEFAULT NULL,
    OUT pid integer,
    OUT backend_type text,
    OUT reads_submitted bigint,
    OUT reads_completed bigint,
    OUT bytes_read bigint,
    OUT blocks_direct bigint,
    OUT blocks_fallback bigint,
    OUT fallback_io_error bigint,
    OUT fallback_no_uring bigint,
    OUT fallback_no_odirect bigint,
    OUT fallback_no_fd bigint,
    OUT fallback_verify bigint,
    OUT fallback_no_memory bigint,
    OUT errors bigint,
    OUT short_reads bigint,
    OUT submit_calls bigint,
    OUT wait_calls bigint,
    OUT wait_time_ms double precision,
    OUT read_latency_ms double precision,
    OUT bytes_requested bigint,
    OUT max_inflight bigint,
    OUT reads_in_flight integer,
    OUT io_memory bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_dio_backend_stats'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION pg_dio_cluster_stats(
    OUT reads_submitted bigint,
    OUT reads_completed bigint,
    OUT bytes_read bigint,
    OUT blocks_direct bigint,
    OUT blocks_fallback bigint,
    OUT fallback_io_error bigint,
    OUT fallback_no_uring bigint,
    OUT fallback_no_odirect bigint,
    OUT fallback_no_fd bigint,
    OUT fallback_verify bigint,
    OUT fallback_no_memory bigint,
    OUT errors bigint,
    OUT short_reads bigint,
    OUT submit_calls bigint,
    OUT wait_calls bigint,
    OUT wait_time_ms double precision,
    OUT read_latency_ms double precision,
    OUT bytes_requested bigint,
    OUT max_inflight bigint,
    OUT reads_in_flight integer,
    OUT stats_reset timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_dio_cluster_stats'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION pg_dio_histogram(pid integer DEFAULT NULL,
    OUT pid integer,
    OUT kind text,
    OUT bucket integer,
    OUT lower_bound bigint,
    OUT upper_bound bigint,
    OUT count bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_dio_histogram'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION pg_dio_inflight(
    OUT pid integer,
    OUT io_id integer,
    OUT reltablespace oid,
    OUT reldatabase oid,
    OUT relfilenode oid,
    OUT fork text,
    OUT block bigint,
    OUT blocks integer,
    OUT bytes bigint,
    OUT submitted_at timestamptz,
    OUT query_id bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_dio_inflight'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION pg_dio_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'pg_dio_stats_reset'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- Per statement, keyed as pg_stat_statements is: what pg_dio read for it.
CREATE FUNCTION pg_dio_statements(
    OUT userid oid,
    OUT dbid oid,
    OUT toplevel boolean,
    OUT queryid bigint,
    OUT calls bigint,
    OUT direct_blocks bigint,
    OUT direct_reads bigint,
    OUT direct_read_bytes bigint,
    OUT buffered_resident bigint,
    OUT buffered_not_all_visible bigint,
    OUT buffered_isolation bigint,
    OUT buffered_verification bigint,
    OUT buffered_io_fallback bigint,
    OUT buffered_os_cached bigint,
    OUT fallback_io_error bigint,
    OUT fallback_no_uring bigint,
    OUT fallback_no_odirect bigint,
    OUT fallback_no_fd bigint,
    OUT fallback_verify bigint,
    OUT fallback_no_memory bigint,
    OUT prefetch_blocks_requested bigint,
    OUT prefetch_blocks_advised bigint,
    OUT prefetch_blocks_read bigint,
    OUT prefetch_blocks_os_cached bigint,
    OUT wait_time_ms double precision,
    OUT read_time_ms double precision,
    OUT prefetch_wait_time_ms double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_dio_statements'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION pg_dio_statements_reset()
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'pg_dio_statements_reset'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- Resolve a relation from its file's tablespace and relfilenode, when it
-- lives in the current database (or is shared).
CREATE FUNCTION pg_dio_relation(spc oid, db oid, filenode oid)
RETURNS regclass
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN $2 = 0 OR $2 = d.oid THEN
            pg_catalog.pg_filenode_relation(
                CASE WHEN $1 = d.dattablespace THEN 0 ELSE $1 END, $3)
        END
    FROM pg_catalog.pg_database d
    WHERE d.datname = pg_catalog.current_database()
$$;

-- Take apart core's description of an AIO target, as pg_aios shows it.  Core
-- writes it in the server's message language (lc_messages): in English
-- 'blocks N..M in file "P"', 'block N in file "P"' or 'file "P"'; the
-- translations change the words and the quotes, and some name the blocks
-- after the file or in the other order.  So no word of it is read.  P is
-- found by its shape, which is never translated: base/<db>/<filenode> (in
-- pg_default, whatever the database's default tablespace),
-- global/<filenode> or pg_tblspc/<spc>/<version dir>/<db>/<filenode>, a
-- temporary relation's filenode written t<proc>_<filenode>, then _<fork>
-- (none for main) and possibly a .<segment>.  The integers outside P are the
-- blocks: one is the block, two a range, whose first block is the smaller;
-- any other count leaves block NULL.  Without such a path every column is
-- NULL.
CREATE FUNCTION pg_dio_aio_target(target_desc text,
    OUT reltablespace oid,
    OUT reldatabase oid,
    OUT relfilenode oid,
    OUT fork text,
    OUT block bigint)
RETURNS record
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p.m[1] = 'global' THEN 1664::oid
                WHEN p.m[3] IS NOT NULL THEN p.m[3]::oid
                WHEN p.m[2] IS NOT NULL THEN 1663::oid
           END,
           CASE WHEN p.m[1] = 'global' THEN 0::oid
                ELSE coalesce(p.m[2], p.m[4])::oid
           END,
           p.m[5]::oid,
           CASE WHEN p.m IS NOT NULL THEN coalesce(p.m[6], 'main') END,
           CASE pg_catalog.regexp_count(p.rest, '[0-9]+')
                WHEN 1 THEN pg_catalog.regexp_substr(p.rest, '[0-9]+')::bigint
                WHEN 2 THEN
                    least(pg_catalog.regexp_substr(p.rest, '[0-9]+', 1, 1)::bigint,
                          pg_catalog.regexp_substr(p.rest, '[0-9]+', 1, 2)::bigint)
           END
      FROM (SELECT q.m,
                   CASE WHEN q.m IS NOT NULL
                        THEN pg_catalog.regexp_replace($1, q.re, ' ')
                   END AS rest
              FROM (SELECT r.re, pg_catalog.regexp_match($1, r.re) AS m
                      FROM (SELECT '(?<![0-9A-Za-z_/])'
                                   '(global|base/([0-9]+)|pg_tblspc/([0-9]+)/[^/]+/([0-9]+))'
                                   '/(?:t[0-9]+_)?([0-9]+)(?:_([a-z]+))?(?:[.][0-9]+)?'
                                   '(?![0-9A-Za-z_/])'::text AS re) r) q) p
$$;

--
-- Views
--

-- I/Os in flight: core's (pg_aios) and pg_dio's direct reads.  query_id:
-- for pg_dio's, the top-level query ID of the process that issued the read,
-- recorded at submission (a parallel worker's is its leader's); for core's,
-- whose AIO handle records none, the one its owner reports now, as
-- pg_stat_activity shows it (a read-ahead left in flight by a suspended
-- cursor shows the owner's current statement).  NULL when there is none.
CREATE VIEW pg_stat_aios AS
    SELECT 'pg_dio'::text AS source,
           f.pid,
           f.io_id,
           'SUBMITTED'::text AS state,
           'read'::text AS operation,
           @extschema@.pg_dio_relation(f.reltablespace, f.reldatabase, f.relfilenode) AS relation,
           f.fork,
           f.block,
           f.blocks,
           f.bytes,
           pg_catalog.clock_timestamp() - f.submitted_at AS age,
           f.query_id
      FROM @extschema@.pg_dio_inflight() f
    UNION ALL
    SELECT 'core'::text,
           a.pid,
           a.io_id,
           a.state,
           a.operation,
           @extschema@.pg_dio_relation(t.reltablespace, t.reldatabase, t.relfilenode),
           t.fork,
           t.block,
           (a.length / pg_catalog.current_setting('block_size')::int)::int,
           a.length,
           NULL::interval,
           s.query_id
      FROM pg_catalog.pg_aios a
           CROSS JOIN LATERAL @extschema@.pg_dio_aio_target(a.target_desc) t
           LEFT JOIN pg_catalog.pg_stat_get_activity(NULL) s ON s.pid = a.pid;

-- Per backend: pg_dio's counters beside core's per-backend I/O totals.
CREATE VIEW pg_stat_aio_backends AS
    SELECT s.*,
           io.reads AS core_reads,
           io.read_bytes AS core_read_bytes,
           io.read_time AS core_read_time,
           io.hits AS core_hits,
           io.writes AS core_writes,
           io.write_bytes AS core_write_bytes
      FROM @extschema@.pg_dio_backend_stats() s
      LEFT JOIN LATERAL (
           SELECT sum(b.reads)::bigint AS reads,
                  sum(b.read_bytes)::bigint AS read_bytes,
                  sum(b.read_time) AS read_time,
                  sum(b.hits)::bigint AS hits,
                  sum(b.writes)::bigint AS writes,
                  sum(b.write_bytes)::bigint AS write_bytes
             FROM pg_catalog.pg_stat_get_backend_io(s.pid) b
            WHERE s.reads_submitted IS NOT NULL) io ON true;

-- What pg_dio read for each statement (pg_dio.track selects which), to join
-- with pg_stat_statements on (userid, dbid, toplevel, queryid).
CREATE VIEW pg_stat_dio_statements AS
    SELECT * FROM @extschema@.pg_dio_statements();

-- Latency (microseconds) and read-size (bytes) histograms, per backend and
-- cluster-wide (pid IS NULL).
CREATE VIEW pg_stat_aio_histogram AS
    SELECT * FROM @extschema@.pg_dio_histogram();

--
-- Privileges, the way core's statistics views have them: pg_aios (and so
-- pg_stat_aios) is for pg_read_all_stats; the others are public but show
-- other roles' backends' details only with pg_read_all_stats.
--
REVOKE ALL ON pg_stat_aios FROM PUBLIC;
GRANT SELECT ON pg_stat_aios TO pg_read_all_stats;
GRANT SELECT ON pg_stat_aio_backends TO PUBLIC;
GRANT SELECT ON pg_stat_aio_histogram TO PUBLIC;
REVOKE ALL ON FUNCTION pg_dio_stats_reset() FROM PUBLIC;
REVOKE ALL ON pg_stat_dio_statements FROM PUBLIC;
GRANT SELECT ON pg_stat_dio_statements TO pg_read_all_stats;
REVOKE ALL ON FUNCTION pg_dio_statements() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_dio_statements() TO pg_read_all_stats;
REVOKE ALL ON FUNCTION pg_dio_statements_reset() FROM PUBLIC;

--
-- Cold-cache experiments
--
CREATE FUNCTION pg_dio_evict(rel regclass, os_cache boolean DEFAULT true,
    OUT buffers_evicted integer,
    OUT buffers_flushed integer,
    OUT buffers_skipped integer,
    OUT os_cached_blocks_before bigint,
    OUT os_cached_blocks_after bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_dio_evict'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION pg_dio_evict(regclass, boolean) IS
'evicts every fork of a relation from shared buffers and, if asked, from the OS page cache (owner, pg_maintain or superuser)';

CREATE FUNCTION pg_dio_residency(rel regclass,
    OUT fork text,
    OUT blocks bigint,
    OUT shared_buffers bigint,
    OUT os_cache bigint,
    OUT all_visible bigint,
    OUT all_frozen bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_dio_residency'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_dio_residency(regclass) IS
'per fork: blocks, blocks in shared buffers, blocks in the OS page cache, blocks all-visible and all-frozen';
