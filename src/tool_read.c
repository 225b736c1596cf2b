/*-------------------------------------------------------------------------
 *
 * tool_read.c
 *	  pg_dio_read(rel, fork): read every block of a relation fork through
 *	  the read engine into private memory and verify each page.
 *
 * The pages read are never handed to anything: they are verified (header
 * sanity and, with data checksums, the checksum) and dropped.  So the
 * function reads a relation at device speed without touching shared buffers
 * or the OS page cache -- except for blocks the engine could not read or
 * whose image failed verification: those are read through the buffer manager
 * (with a bulk-read strategy), which verifies them the way core always does.
 * A direct image can fail verification without the relation being corrupt
 * when a write of the same block was in flight; the buffer manager's read
 * decides.
 *
 * Holds AccessShareLock on the relation for the duration: blocks cannot be
 * truncated away under us.  Blocks added concurrently are not read.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/tool_read.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_authid_d.h"
#include "catalog/pg_class_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/smgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "diag.h"
#include "engine.h"
#include "tools.h"

PG_FUNCTION_INFO_V1(pg_dio_read);

typedef struct DioReadTotals
{
	uint64		reads;
	uint64		read_bytes;
	uint64		direct;
	uint64		fallback[DIO_NUM_FALLBACK];
	uint64		checksum_failures;
} DioReadTotals;

/*
 * Open 'relid' for one of pg_dio's relation tools ('fn', the SQL function,
 * named in messages) with AccessShareLock.  Privileges are checked first, before
 * any lock is taken on someone else's relation: SELECT, or for DIO_PRIV_OWNER
 * ownership or pg_maintain.  Then: a relation with storage, not temporary
 * (local buffers), and with heap_only a heap table, materialized view or
 * TOAST table.
 */
Relation
dio_open_relation(Oid relid, const char *fn, DioPrivilege priv, bool heap_only)
{
	Relation	rel;
	char		relkind = get_rel_relkind(relid);
	bool		missing = (relkind == '\0');

	if (!missing && priv == DIO_PRIV_SELECT)
	{
		AclResult	aclresult = pg_class_aclcheck_ext(relid, GetUserId(), ACL_SELECT,
													  &missing);

		if (!missing && aclresult != ACLCHECK_OK)
			aclcheck_error(aclresult, get_relkind_objtype(relkind), get_rel_name(relid));
	}
	else if (!missing && priv == DIO_PRIV_OWNER &&
			 !object_ownercheck(RelationRelationId, relid, GetUserId()) &&
			 !has_privs_of_role(GetUserId(), ROLE_PG_MAINTAIN))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for relation \"%s\"", get_rel_name(relid)),
				 errdetail("Only the owner of the relation, members of pg_maintain and superusers may use %s().", fn)));

	rel = missing ? NULL : try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));

	relkind = rel->rd_rel->relkind;
	if (heap_only ? (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW &&
					 relkind != RELKIND_TOASTVALUE)
		: !RELKIND_HAS_STORAGE(relkind))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s() does not support relation \"%s\"", fn,
						RelationGetRelationName(rel)),
				 errdetail_relkind_not_supported(relkind)));

	if (RelationUsesLocalBuffers(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s() does not support temporary relation \"%s\"", fn,
						RelationGetRelationName(rel))));

	if (heap_only && rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s() does not support relation \"%s\"", fn,
						RelationGetRelationName(rel)),
				 errdetail("Only relations of table access method \"heap\" are supported.")));
	return rel;
}

/* Read one block through the buffer manager, which verifies it. */
static void
dio_read_buffered(Relation rel, ForkNumber fork, BlockNumber blk,
				  BufferAccessStrategy strategy)
{
	Buffer		buf = ReadBufferExtended(rel, fork, blk, RBM_NORMAL, strategy);

	ReleaseBuffer(buf);
}

/* Verify the pages of a completed run; fall back for the rest. */
static void
dio_consume_run(Relation rel, ForkNumber fork, DioRun *run,
				BufferAccessStrategy strategy, DioReadTotals *t)
{
	uint64		direct = 0;
	uint64		failed_verify = 0;

	for (int i = 0; i < run->nvalid; i++)
	{
		Page		page = (Page) (run->data + (size_t) i * BLCKSZ);
		bool		checksum_failure = false;

		if (PageIsVerified(page, run->first + i, 0, &checksum_failure))
			direct++;
		else
		{
			if (checksum_failure)
				t->checksum_failures++;
			failed_verify++;
			dio_read_buffered(rel, fork, run->first + i, strategy);
		}
	}
	for (int i = run->nvalid; i < run->nblocks; i++)
	{
		CHECK_FOR_INTERRUPTS();
		dio_read_buffered(rel, fork, run->first + i, strategy);
	}

	t->direct += direct;
	t->fallback[DIO_FB_VERIFY] += failed_verify;
	t->fallback[run->reason] += run->nblocks - run->nvalid;
	dio_stats_count_blocks(direct, DIO_FB_VERIFY, failed_verify);
	dio_stats_count_blocks(0, run->reason, run->nblocks - run->nvalid);
}

/* Read blocks [0, nblocks) of the fork through the engine, queue kept full. */
static void
dio_read_fork(Relation rel, ForkNumber fork, BlockNumber nblocks,
			  BufferAccessStrategy strategy, DioReadTotals *t)
{
	DioStream  *s = dio_stream_begin(rel, fork, 0);
	BlockNumber next = 0;
	DioRun		run;

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		while (next < nblocks && dio_stream_can_submit(s))
		{
			BlockNumber n = Min((BlockNumber) dio_stream_max_blocks(s), nblocks - next);

			n = Min(n, RELSEG_SIZE - next % RELSEG_SIZE);
			dio_stream_submit(s, next, (int) n);
			next += n;
		}

		if (!dio_stream_next(s, &run))
			break;
		if (run.issued)
		{
			t->reads++;
			t->read_bytes += (uint64) run.nblocks * BLCKSZ;
		}
		dio_consume_run(rel, fork, &run, strategy, t);
		dio_stream_release(s, &run);
	}
	dio_stream_end(s);
}

static Datum
dio_fallback_jsonb(const DioReadTotals *t)
{
	StringInfoData buf;
	bool		first = true;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int r = 0; r < DIO_NUM_FALLBACK; r++)
	{
		if (t->fallback[r] == 0)
			continue;
		appendStringInfo(&buf, "%s\"%s\": " UINT64_FORMAT,
						 first ? "" : ", ", dio_fallback_names[r], t->fallback[r]);
		first = false;
	}
	appendStringInfoChar(&buf, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

Datum
pg_dio_read(PG_FUNCTION_ARGS)
{
	Oid			relid;
	ForkNumber	fork;
	Relation	rel;
	BlockNumber nblocks;
	BufferAccessStrategy strategy;
	DioReadTotals t;
	instr_time	start,
				elapsed;
	double		ms;
	uint64		fallback = 0;
	TupleDesc	tupdesc;
	Datum		values[10];
	bool		nulls[10] = {0};

	dio_stats_require();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be NULL")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fork must not be NULL")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	relid = PG_GETARG_OID(0);
	fork = forkname_to_number(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	rel = dio_open_relation(relid, "pg_dio_read", DIO_PRIV_SELECT, true);

	nblocks = smgrexists(RelationGetSmgr(rel), fork) ?
		RelationGetNumberOfBlocksInFork(rel, fork) : 0;
	strategy = GetAccessStrategy(BAS_BULKREAD);
	memset(&t, 0, sizeof(t));

	INSTR_TIME_SET_CURRENT(start);
	dio_read_fork(rel, fork, nblocks, strategy, &t);
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);
	ms = INSTR_TIME_GET_MILLISEC(elapsed);

	FreeAccessStrategy(strategy);
	relation_close(rel, AccessShareLock);

	for (int r = 0; r < DIO_NUM_FALLBACK; r++)
		fallback += t.fallback[r];

	values[0] = Int64GetDatum((int64) nblocks);
	values[1] = Int64GetDatum((int64) nblocks * BLCKSZ);
	values[2] = Int64GetDatum((int64) t.reads);
	if (t.reads > 0)
		values[3] = Int64GetDatum((int64) (t.read_bytes / t.reads));
	else
		nulls[3] = true;
	values[4] = Int64GetDatum((int64) t.direct);
	values[5] = Int64GetDatum((int64) fallback);
	values[6] = dio_fallback_jsonb(&t);
	values[7] = Int64GetDatum((int64) t.checksum_failures);
	values[8] = Float8GetDatum(ms);
	if (ms > 0)
		values[9] = Float8GetDatum(((double) nblocks * BLCKSZ / (1024.0 * 1024.0)) / (ms / 1000.0));
	else
		nulls[9] = true;

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
