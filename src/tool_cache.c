/*-------------------------------------------------------------------------
 *
 * tool_cache.c
 *	  Tools for cold-cache experiments: pg_dio_evict(rel, os_cache) and
 *	  pg_dio_residency(rel).
 *
 * pg_dio_evict evicts every fork of a relation from shared buffers with core
 * 18's EvictRelUnpinnedBuffers() (dirty buffers are written first, pinned ones
 * are skipped and counted) and, if asked, from the OS page cache: each
 * segment file is fdatasync'ed (dirty pages cannot be dropped) and then
 * posix_fadvise(DONTNEED)'ed.  Nothing is lost: data is written, never
 * discarded.  pg_dio_residency counts, per fork, the blocks that are in shared
 * buffers (buffer headers scanned under their header locks, as
 * pg_buffercache does), in the OS page cache (cachestat(2) or mincore(2)) and,
 * for heap tables, all-visible per the visibility map.
 *
 * Both hold AccessShareLock on the relation while they work.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/tool_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/relation.h"
#include "access/visibilitymap.h"
#include "catalog/pg_class_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "diag.h"
#include "engine.h"
#include "tools.h"

PG_FUNCTION_INFO_V1(pg_dio_evict);
PG_FUNCTION_INFO_V1(pg_dio_residency);

/* The relation argument of the cache tools, checked and locked. */
static Relation
dio_tool_relation(FunctionCallInfo fcinfo, const char *fn, DioPrivilege priv)
{
	dio_stats_require();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be NULL")));
	return dio_open_relation(PG_GETARG_OID(0), fn, priv, false);
}

/* Blocks of a fork, 0 if it does not exist. */
static BlockNumber
dio_fork_blocks(Relation rel, ForkNumber fork)
{
	return smgrexists(RelationGetSmgr(rel), fork) ?
		RelationGetNumberOfBlocksInFork(rel, fork) : 0;
}

/*
 * Visit each segment file of a fork: 'fn' gets an fd opened O_RDONLY, the
 * segment's length in bytes and its path.  Returns the sum of what 'fn'
 * returns (-1 as soon as one says -1).  The fd is a transient file: closed at
 * abort when 'fn' raises an error.
 */
typedef int64 (*dio_segment_fn) (int fd, size_t len, const char *path);

static int64
dio_for_each_segment(Relation rel, ForkNumber fork, BlockNumber nblocks, dio_segment_fn fn)
{
	int64		sum = 0;

	/* 64-bit: the block after the last segment may not fit a BlockNumber */
	for (uint64 seg = 0; seg * RELSEG_SIZE < (uint64) nblocks; seg++)
	{
		char		segpath[MAXPGPATH];
		BlockNumber n = (BlockNumber) Min((uint64) RELSEG_SIZE, nblocks - seg * RELSEG_SIZE);
		int			fd;
		int64		r;

		CHECK_FOR_INTERRUPTS();
		dio_segment_path(rel->rd_locator, fork, (BlockNumber) seg, segpath);
		fd = OpenTransientFile(segpath, O_RDONLY | PG_BINARY);
		if (fd < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", segpath)));
		r = fn(fd, (size_t) n * BLCKSZ, segpath);
		CloseTransientFile(fd);
		if (r < 0)
			return -1;
		sum += r;
	}
	return sum;
}

static int64
dio_segment_cached(int fd, size_t len, const char *path)
{
	return dio_os_cached_bytes(fd, 0, len);
}

/*
 * Drop a segment's pages from the OS page cache.  The kernel does not drop
 * dirty pages, so they are written first, whatever the fsync setting (the
 * eviction is the point).  A failed write-back is what a failed fsync of
 * core's is: the kernel may have given up the dirty pages and cleared the
 * error, so the checkpointer's next fsync would succeed with the write lost.
 * Hence data_sync_elevel(ERROR), PANIC unless data_sync_retry is on, as core.
 */
static int64
dio_segment_drop(int fd, size_t len, const char *path)
{
	int			rc;

	if (pg_dio_inject_fault == DIO_FAULT_FSYNC)
	{
		errno = EIO;
		rc = -1;
	}
	else
		rc = fdatasync(fd);
	if (rc != 0)
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(),
				 errmsg("could not fdatasync file \"%s\": %m", path)));
	(void) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return 0;
}

/* OS-cached blocks of all forks, or -1 if unknown. */
static int64
dio_rel_os_cached_blocks(Relation rel)
{
	int64		blocks = 0;

	for (ForkNumber fork = 0; fork <= MAX_FORKNUM; fork++)
	{
		BlockNumber n = dio_fork_blocks(rel, fork);
		int64		bytes = dio_for_each_segment(rel, fork, n, dio_segment_cached);

		if (bytes < 0)
			return -1;
		blocks += bytes / BLCKSZ;
	}
	return blocks;
}

Datum
pg_dio_evict(PG_FUNCTION_ARGS)
{
	Relation	rel;
	bool		os_cache;
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {0};
	int32		evicted = 0,
				flushed = 0,
				skipped = 0;
	int64		before = -1,
				after = -1;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("os_cache must not be NULL")));
	os_cache = PG_GETARG_BOOL(1);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	rel = dio_tool_relation(fcinfo, "pg_dio_evict", DIO_PRIV_OWNER);

	EvictRelUnpinnedBuffers(rel, &evicted, &flushed, &skipped);

	if (os_cache)
	{
		before = dio_rel_os_cached_blocks(rel);
		for (ForkNumber fork = 0; fork <= MAX_FORKNUM; fork++)
			(void) dio_for_each_segment(rel, fork, dio_fork_blocks(rel, fork),
										dio_segment_drop);
		after = dio_rel_os_cached_blocks(rel);
	}
	relation_close(rel, AccessShareLock);

	values[0] = Int32GetDatum(evicted);
	values[1] = Int32GetDatum(flushed);
	values[2] = Int32GetDatum(skipped);
	if (before >= 0)
		values[3] = Int64GetDatum(before);
	else
		nulls[3] = true;
	if (after >= 0)
		values[4] = Int64GetDatum(after);
	else
		nulls[4] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

Datum
pg_dio_residency(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	int64		shared[MAX_FORKNUM + 1] = {0};
	int64		os[MAX_FORKNUM + 1] = {0};
	BlockNumber nblocks[MAX_FORKNUM + 1] = {0};
	bool		exists[MAX_FORKNUM + 1] = {0};
	char		relkind;

	rel = dio_tool_relation(fcinfo, "pg_dio_residency", DIO_PRIV_SELECT);
	relkind = rel->rd_rel->relkind;

	InitMaterializedSRF(fcinfo, 0);

	/* shared buffers: one pass over the buffer headers */
	for (int i = 0; i < NBuffers; i++)
	{
		BufferDesc *desc = GetBufferDescriptor(i);
		DioBufState state;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		state = LockBufHdr(desc);
		if ((state & BM_VALID) &&
			BufTagMatchesRelFileLocator(&desc->tag, &rel->rd_locator))
			shared[BufTagGetForkNum(&desc->tag)]++;
		dio_unlock_buf_hdr(desc, state);
	}

	/* the OS cache first: counting all-visible blocks reads the VM fork */
	for (ForkNumber fork = 0; fork <= MAX_FORKNUM; fork++)
	{
		if (!smgrexists(RelationGetSmgr(rel), fork))
		{
			exists[fork] = false;
			continue;
		}
		exists[fork] = true;
		nblocks[fork] = dio_fork_blocks(rel, fork);
		os[fork] = dio_for_each_segment(rel, fork, nblocks[fork], dio_segment_cached);
	}

	for (ForkNumber fork = 0; fork <= MAX_FORKNUM; fork++)
	{
		Datum		values[6];
		bool		nulls[6] = {0};

		if (!exists[fork])
			continue;
		values[0] = CStringGetTextDatum(forkNames[fork]);
		values[1] = Int64GetDatum((int64) nblocks[fork]);
		values[2] = Int64GetDatum(shared[fork]);
		if (os[fork] >= 0)
			values[3] = Int64GetDatum(Min(os[fork] / BLCKSZ, (int64) nblocks[fork]));
		else
			nulls[3] = true;
		if (fork == MAIN_FORKNUM &&
			(relkind == RELKIND_RELATION || relkind == RELKIND_MATVIEW ||
			 relkind == RELKIND_TOASTVALUE))
		{
			BlockNumber all_visible,
						all_frozen;

			visibilitymap_count(rel, &all_visible, &all_frozen);
			values[4] = Int64GetDatum((int64) all_visible);
			values[5] = Int64GetDatum((int64) all_frozen);
		}
		else
			nulls[4] = nulls[5] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	relation_close(rel, AccessShareLock);
	PG_RETURN_VOID();
}
