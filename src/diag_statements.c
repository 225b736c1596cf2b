/*-------------------------------------------------------------------------
 *
 * diag_statements.c
 *	  Per-statement I/O: what pg_dio read for each statement, keyed as
 *	  pg_stat_statements keys its entries (userid, dbid, toplevel, queryid),
 *	  kept in core's cumulative statistics as a custom kind.
 *
 * How a statement is charged: the planner and executor hooks (and
 * ProcessUtility for utility statements) take the change of dio_stmt_io
 * (diag.h), plus what this backend's parallel workers handed over, across
 * each part of the statement (planning, start, run, finish, end) at a
 * nesting level that pg_dio.track selects, and add it to the statement's
 * pending entry; core flushes pending entries to shared memory when the
 * backend goes idle.
 *
 * Locking and lifetime rules:
 *	- Entries live in core's shared statistics hash (pgstat_register_kind);
 *	  core keeps their memory, writes them out at a clean shutdown and reads
 *	  them back at start.  An entry's counters are changed under its entry
 *	  lock (pgstat_lock_entry), by the flush of a backend's pending entry.
 *	- The hash key is (kind, dboid = dbid, objid = a 64-bit hash of queryid,
 *	  userid and toplevel); the entry holds its full key, and a pending
 *	  entry whose full key differs from the shared one it hashed to (a hash
 *	  collision) is not added to it.
 *	- The number of entries is counted in our shared memory (an atomic,
 *	  recounted by a pass over the hash when it exceeds the limit or was
 *	  never counted since start); over pg_dio.max_statements, the least
 *	  called entries are dropped.
 *	- A parallel worker adds its figures to its leader's row of atomics
 *	  (par_in) when its top-level executor ends, which is before the leader
 *	  returns from waiting for its workers.  Only the leader reads its row.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/diag_statements.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/dshash.h"
#include "miscadmin.h"
#include "optimizer/planner.h"
#include "storage/proc.h"
#include "storage/procnumber.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/pgstat_internal.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "diag.h"

PG_FUNCTION_INFO_V1(pg_dio_statements);
PG_FUNCTION_INFO_V1(pg_dio_statements_reset);

/*
 * pg_dio's custom statistics kind.  IDs 24-32 are for extensions, and two
 * loaded together must not share one: see docs/internals.md.
 */
#define DIO_STMT_KIND			29

/* entries dropped at a time when over the limit: 5% (and at least 10) */
#define DIO_STMT_DEALLOC_PCT	5

DioStmtCounters dio_stmt_io;

typedef enum DioTrack
{
	DIO_TRACK_NONE,
	DIO_TRACK_TOP,
	DIO_TRACK_ALL,
} DioTrack;

static const struct config_enum_entry dio_track_options[] = {
	{"none", DIO_TRACK_NONE, false},
	{"top", DIO_TRACK_TOP, false},
	{"all", DIO_TRACK_ALL, false},
	{NULL, 0, false}
};

static int	dio_stmt_track = DIO_TRACK_TOP;
static int	dio_stmt_max = 5000;

/* One statement's figures: the pending entry and the shared entry's data. */
typedef struct DioStmtEntry
{
	Oid			userid;
	bool		toplevel;
	int64		queryid;		/* 0: not yet filled in (or reset by core) */
	int64		calls;
	DioStmtCounters c;
} DioStmtEntry;

typedef struct PgStatShared_DioStmt
{
	PgStatShared_Common header;
	DioStmtEntry stats;
} PgStatShared_DioStmt;

typedef struct DioStmtShared
{
	pg_atomic_uint32 nentries;	/* entries of our kind, about */
	pg_atomic_uint32 counted;	/* nentries was counted since start */
	int			nrows;
	/* par_in[procno * DIO_STMT_NCOUNTERS + i]: workers' figures, for leaders */
	pg_atomic_uint64 par_in[FLEXIBLE_ARRAY_MEMBER];
} DioStmtShared;

static DioStmtShared *dio_stmt_shared = NULL;

static int	dio_stmt_level = 0;
static DioStmtCounters dio_stmt_worker_start;	/* parallel worker */

static planner_hook_type prev_planner_hook = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

static bool dio_stmt_flush_cb(PgStat_EntryRef *entry_ref, bool nowait);

static const PgStat_KindInfo dio_stmt_kind_info = {
	.name = "pg_dio_statements",
	.fixed_amount = false,
	.accessed_across_databases = true,
	.write_to_file = true,
	.shared_size = sizeof(PgStatShared_DioStmt),
	.shared_data_off = offsetof(PgStatShared_DioStmt, stats),
	.shared_data_len = sizeof(DioStmtEntry),
	.pending_size = sizeof(DioStmtEntry),
	.flush_pending_cb = dio_stmt_flush_cb,
};

/* ---------- counters ---------- */

static void
dio_stmt_counters_add(DioStmtCounters *dst, const DioStmtCounters *src)
{
	uint64	   *d = (uint64 *) dst;
	const uint64 *s = (const uint64 *) src;

	StaticAssertStmt(sizeof(DioStmtCounters) % sizeof(uint64) == 0,
					 "DioStmtCounters must be made of uint64 only");
	for (size_t i = 0; i < DIO_STMT_NCOUNTERS; i++)
		d[i] += s[i];
}

static void
dio_stmt_counters_sub(DioStmtCounters *dst, const DioStmtCounters *a,
					  const DioStmtCounters *b)
{
	uint64	   *d = (uint64 *) dst;
	const uint64 *x = (const uint64 *) a;
	const uint64 *y = (const uint64 *) b;

	for (size_t i = 0; i < DIO_STMT_NCOUNTERS; i++)
		d[i] = x[i] - y[i];
}

/* What this backend and the workers of its parallel queries read so far. */
static void
dio_stmt_now(DioStmtCounters *now)
{
	uint64	   *d = (uint64 *) now;

	*now = dio_stmt_io;
	if (dio_stmt_shared == NULL || MyProcNumber < 0 || MyProcNumber >= dio_stmt_shared->nrows)
		return;
	for (size_t i = 0; i < DIO_STMT_NCOUNTERS; i++)
		d[i] += pg_atomic_read_u64(&dio_stmt_shared->par_in[MyProcNumber * DIO_STMT_NCOUNTERS + i]);
}

/* A parallel worker hands what it read to its leader. */
static void
dio_stmt_worker_handover(void)
{
	DioStmtCounters d;
	const uint64 *v = (const uint64 *) &d;
	ProcNumber	leader = ParallelLeaderProcNumber;

	if (dio_stmt_shared == NULL || leader < 0 || leader >= dio_stmt_shared->nrows)
		return;
	dio_stmt_counters_sub(&d, &dio_stmt_io, &dio_stmt_worker_start);
	for (size_t i = 0; i < DIO_STMT_NCOUNTERS; i++)
		if (v[i] != 0)
			pg_atomic_fetch_add_u64(&dio_stmt_shared->par_in[leader * DIO_STMT_NCOUNTERS + i], v[i]);
	dio_stmt_worker_start = dio_stmt_io;
}

/* ---------- entries ---------- */

static uint64
dio_stmt_objid(Oid userid, bool toplevel, int64 queryid)
{
	uint64		parts[2];

	parts[0] = (uint64) queryid;
	parts[1] = ((uint64) userid << 1) | (toplevel ? 1 : 0);
	return hash_bytes_extended((const unsigned char *) parts, sizeof(parts), 0);
}

/* flush_pending_cb: add a backend's pending figures to the shared entry. */
static bool
dio_stmt_flush_cb(PgStat_EntryRef *entry_ref, bool nowait)
{
	DioStmtEntry *p = (DioStmtEntry *) entry_ref->pending;
	DioStmtEntry *sh = &((PgStatShared_DioStmt *) entry_ref->shared_stats)->stats;

	if (!pgstat_lock_entry(entry_ref, nowait))
		return false;
	if (sh->queryid == 0)
	{
		sh->userid = p->userid;
		sh->toplevel = p->toplevel;
		sh->queryid = p->queryid;
	}
	if (sh->queryid == p->queryid && sh->userid == p->userid &&
		sh->toplevel == p->toplevel)
	{
		sh->calls += p->calls;
		dio_stmt_counters_add(&sh->c, &p->c);
	}
	pgstat_unlock_entry(entry_ref);
	return true;
}

/* An entry as copied out of core's statistics hash. */
typedef struct DioStmtRow
{
	Oid			dboid;
	uint64		objid;
	DioStmtEntry stats;
} DioStmtRow;

/*
 * Copy every entry of our kind, each under its entry lock while the shared
 * hash is scanned (partition lock, then entry lock, as core's reset does).
 * Returns how many; *rows is palloc'd.
 */
static int
dio_stmt_collect(DioStmtRow **rows)
{
	dshash_seq_status hstat;
	PgStatShared_HashEntry *p;
	int			n = 0;
	int			cap = 256;

	*rows = palloc(sizeof(DioStmtRow) * cap);
	dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
	while ((p = dshash_seq_next(&hstat)) != NULL)
	{
		PgStatShared_DioStmt *e;

		if (p->key.kind != DIO_STMT_KIND || p->dropped)
			continue;
		if (n == cap)
		{
			cap *= 2;
			*rows = repalloc(*rows, sizeof(DioStmtRow) * cap);
		}
		e = (PgStatShared_DioStmt *) dsa_get_address(pgStatLocal.dsa, p->body);
		(*rows)[n].dboid = p->key.dboid;
		(*rows)[n].objid = p->key.objid;
		LWLockAcquire(&e->header.lock, LW_SHARED);
		(*rows)[n].stats = e->stats;
		LWLockRelease(&e->header.lock);
		n++;
	}
	dshash_seq_term(&hstat);
	return n;
}

static int
dio_stmt_calls_cmp(const void *a, const void *b)
{
	int64		x = ((const DioStmtRow *) a)->stats.calls;
	int64		y = ((const DioStmtRow *) b)->stats.calls;

	return (x > y) - (x < y);
}

/*
 * Count our entries and, over pg_dio.max_statements, drop the least called
 * ones, never the entry 'keep_objid' in 'keep_dboid' (just created).
 */
static void
dio_stmt_count_and_dealloc(Oid keep_dboid, uint64 keep_objid)
{
	DioStmtRow *rows;
	int			n = dio_stmt_collect(&rows);
	int			ndrop = 0;

	if (n > dio_stmt_max)
	{
		int			want = Max(n - dio_stmt_max, Max(10, n * DIO_STMT_DEALLOC_PCT / 100));
		bool		gc = false;

		qsort(rows, n, sizeof(DioStmtRow), dio_stmt_calls_cmp);
		for (int i = 0; i < n && ndrop < want; i++)
		{
			if (rows[i].dboid == keep_dboid && rows[i].objid == keep_objid)
				continue;
			if (!dio_pgstat_drop_entry(DIO_STMT_KIND, rows[i].dboid, rows[i].objid))
				gc = true;
			ndrop++;
		}
		if (gc)
			pgstat_request_entry_refs_gc();
	}
	pg_atomic_write_u32(&dio_stmt_shared->nentries, (uint32) (n - ndrop));
	pg_atomic_write_u32(&dio_stmt_shared->counted, 1);
	pfree(rows);
}

/* Add a part of a statement's execution to its pending entry. */
static void
dio_stmt_charge(int64 queryid, bool toplevel, const DioStmtCounters *d, int64 calls)
{
	PgStat_EntryRef *entry_ref;
	DioStmtEntry *p;
	Oid			userid = GetUserId();
	uint64		objid = dio_stmt_objid(userid, toplevel, queryid);
	bool		created;

	entry_ref = pgstat_prep_pending_entry(DIO_STMT_KIND, MyDatabaseId, objid, &created);
	p = (DioStmtEntry *) entry_ref->pending;
	p->userid = userid;
	p->toplevel = toplevel;
	p->queryid = queryid;
	p->calls += calls;
	dio_stmt_counters_add(&p->c, d);

	if (created &&
		(pg_atomic_add_fetch_u32(&dio_stmt_shared->nentries, 1) > (uint32) dio_stmt_max ||
		 pg_atomic_read_u32(&dio_stmt_shared->counted) == 0))
		dio_stmt_count_and_dealloc(MyDatabaseId, objid);
}

/* ---------- hooks ---------- */

static bool
dio_stmt_tracked(int64 queryid)
{
	if (dio_stmt_shared == NULL || queryid == 0 || IsParallelWorker())
		return false;
	return dio_stmt_track == DIO_TRACK_ALL ||
		(dio_stmt_track == DIO_TRACK_TOP && dio_stmt_level == 0);
}

/*
 * Run 'call' (one part of a statement's execution) and charge what was read
 * meanwhile to the statement 'queryid' at the current level, if tracked,
 * with 'calls' more calls.  'nest': the part runs one level down.
 */
typedef struct DioExecCall
{
	enum
	{
		DIO_PART_START, DIO_PART_RUN, DIO_PART_FINISH, DIO_PART_END, DIO_PART_UTILITY,
	}			part;
	QueryDesc  *queryDesc;
	int			eflags;
	ScanDirection direction;
	uint64		count;
	/* ProcessUtility's arguments */
	PlannedStmt *pstmt;
	const char *queryString;
	bool		readOnlyTree;
	ProcessUtilityContext context;
	ParamListInfo params;
	QueryEnvironment *queryEnv;
	DestReceiver *dest;
	QueryCompletion *qc;
} DioExecCall;

static void
dio_stmt_call(const DioExecCall *c)
{
	switch (c->part)
	{
		case DIO_PART_START:
			if (prev_ExecutorStart)
				prev_ExecutorStart(c->queryDesc, c->eflags);
			else
				standard_ExecutorStart(c->queryDesc, c->eflags);
			break;
		case DIO_PART_RUN:
			if (prev_ExecutorRun)
				prev_ExecutorRun(c->queryDesc, c->direction, c->count);
			else
				standard_ExecutorRun(c->queryDesc, c->direction, c->count);
			break;
		case DIO_PART_FINISH:
			if (prev_ExecutorFinish)
				prev_ExecutorFinish(c->queryDesc);
			else
				standard_ExecutorFinish(c->queryDesc);
			break;
		case DIO_PART_END:
			if (prev_ExecutorEnd)
				prev_ExecutorEnd(c->queryDesc);
			else
				standard_ExecutorEnd(c->queryDesc);
			break;
		case DIO_PART_UTILITY:
			if (prev_ProcessUtility)
				prev_ProcessUtility(c->pstmt, c->queryString, c->readOnlyTree,
									c->context, c->params, c->queryEnv,
									c->dest, c->qc);
			else
				standard_ProcessUtility(c->pstmt, c->queryString, c->readOnlyTree,
										c->context, c->params, c->queryEnv,
										c->dest, c->qc);
			break;
	}
}

/* dio_stmt_call one level down; the level is restored on error. */
static void
dio_stmt_call_nested(const DioExecCall *c)
{
	dio_stmt_level++;
	PG_TRY();
	{
		dio_stmt_call(c);
	}
	PG_FINALLY();
	{
		dio_stmt_level--;
	}
	PG_END_TRY();
}

/* One part of a statement's execution being measured. */
typedef struct DioStmtPart
{
	int64		queryid;
	bool		tracked;
	bool		toplevel;
	DioStmtCounters before;
} DioStmtPart;

static void
dio_stmt_part_begin(DioStmtPart *part, int64 queryid)
{
	part->queryid = queryid;
	part->tracked = dio_stmt_tracked(queryid);
	part->toplevel = dio_stmt_level == 0;
	if (part->tracked)
		dio_stmt_now(&part->before);
}

/* Charge what was read since dio_stmt_part_begin, and 'calls' calls. */
static void
dio_stmt_part_end(const DioStmtPart *part, int64 calls)
{
	DioStmtCounters d;

	if (!part->tracked)
		return;
	dio_stmt_now(&d);
	dio_stmt_counters_sub(&d, &d, &part->before);
	dio_stmt_charge(part->queryid, part->toplevel, &d, calls);
}

static void
dio_stmt_measure(int64 queryid, bool nest, int64 calls, const DioExecCall *c)
{
	DioStmtPart part;

	dio_stmt_part_begin(&part, queryid);
	if (nest)
		dio_stmt_call_nested(c);
	else
		dio_stmt_call(c);
	dio_stmt_part_end(&part, calls);
}

/* Planning, one level down: what the planner runs is nested in it. */
static PlannedStmt *
dio_stmt_plan_nested(DIO_PLANNER_PARAMS)
{
	PlannedStmt *volatile result = NULL;

	dio_stmt_level++;
	PG_TRY();
	{
		if (prev_planner_hook)
			result = prev_planner_hook(DIO_PLANNER_ARGS);
		else
			result = standard_planner(DIO_PLANNER_ARGS);
	}
	PG_FINALLY();
	{
		dio_stmt_level--;
	}
	PG_END_TRY();
	return result;
}

/*
 * planner_hook: what planning reads (the functions it folds) is charged to
 * the statement planned, without a call.
 */
static PlannedStmt *
dio_stmt_planner(DIO_PLANNER_PARAMS)
{
	DioStmtPart part;
	PlannedStmt *result;

	dio_stmt_part_begin(&part, parse->queryId);
	result = dio_stmt_plan_nested(DIO_PLANNER_ARGS);
	dio_stmt_part_end(&part, 0);
	return result;
}

static void
dio_stmt_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	DioExecCall c = {.part = DIO_PART_START,.queryDesc = queryDesc,.eflags = eflags};

	if (IsParallelWorker() && dio_stmt_level == 0)
		dio_stmt_worker_start = dio_stmt_io;
	dio_stmt_measure(queryDesc->plannedstmt->queryId, true, 0, &c);
}

static void
dio_stmt_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction, uint64 count)
{
	DioExecCall c = {.part = DIO_PART_RUN,.queryDesc = queryDesc,
	.direction = direction,.count = count};

	dio_stmt_measure(queryDesc->plannedstmt->queryId, true, 0, &c);
}

static void
dio_stmt_ExecutorFinish(QueryDesc *queryDesc)
{
	DioExecCall c = {.part = DIO_PART_FINISH,.queryDesc = queryDesc};

	dio_stmt_measure(queryDesc->plannedstmt->queryId, true, 0, &c);
}

static void
dio_stmt_ExecutorEnd(QueryDesc *queryDesc)
{
	DioExecCall c = {.part = DIO_PART_END,.queryDesc = queryDesc};

	dio_stmt_measure(queryDesc->plannedstmt->queryId, true, 1, &c);
	if (IsParallelWorker() && dio_stmt_level == 0)
		dio_stmt_worker_handover();
}

/*
 * Utility statements are charged like pg_stat_statements tracks them:
 * EXECUTE and PREPARE are not (the executor charges the prepared statement,
 * as a statement at this level); any other runs what it contains one level
 * down.
 */
static void
dio_stmt_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
						bool readOnlyTree, ProcessUtilityContext context,
						ParamListInfo params, QueryEnvironment *queryEnv,
						DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		handled = !IsA(parsetree, ExecuteStmt) && !IsA(parsetree, PrepareStmt);
	DioExecCall c = {.part = DIO_PART_UTILITY,.pstmt = pstmt,.queryString = queryString,
		.readOnlyTree = readOnlyTree,.context = context,.params = params,
	.queryEnv = queryEnv,.dest = dest,.qc = qc};

	dio_stmt_measure(handled ? pstmt->queryId : 0, handled, 1, &c);
}

/* ---------- setup ---------- */

Size
dio_stmt_shmem_size(void)
{
	return add_size(offsetof(DioStmtShared, par_in),
					mul_size(mul_size(MaxBackends + NUM_AUXILIARY_PROCS, DIO_STMT_NCOUNTERS),
							 sizeof(pg_atomic_uint64)));
}

/* Called from the shmem_startup_hook, under AddinShmemInitLock. */
void
dio_stmt_shmem_startup(void)
{
	bool		found;

	dio_stmt_shared = ShmemInitStruct("pg_dio statements", dio_stmt_shmem_size(), &found);
	if (!found)
	{
		pg_atomic_init_u32(&dio_stmt_shared->nentries, 0);
		pg_atomic_init_u32(&dio_stmt_shared->counted, 0);
		dio_stmt_shared->nrows = MaxBackends + NUM_AUXILIARY_PROCS;
		for (size_t i = 0; i < dio_stmt_shared->nrows * DIO_STMT_NCOUNTERS; i++)
			pg_atomic_init_u64(&dio_stmt_shared->par_in[i], 0);
	}
}

/*
 * pg_dio.track always; pg_dio.max_statements, the statistics kind and the
 * hooks only when preloading (called from _PG_init).
 */
void
dio_stmt_init(void)
{
	DefineCustomEnumVariable("pg_dio.track",
							 "Selects which statements pg_dio's per-statement I/O statistics track.",
							 "top: top-level statements (those a client issued); all: nested "
							 "statements too (inside functions); none: nothing.",
							 &dio_stmt_track,
							 DIO_TRACK_TOP,
							 dio_track_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("pg_dio.max_statements",
							"Sets the most statements pg_dio's per-statement I/O statistics keep.",
							"Over it, the least called statements' entries are dropped.",
							&dio_stmt_max,
							5000,
							100,
							INT_MAX / 2,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	pgstat_register_kind(DIO_STMT_KIND, &dio_stmt_kind_info);

	prev_planner_hook = planner_hook;
	planner_hook = dio_stmt_planner;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = dio_stmt_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = dio_stmt_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = dio_stmt_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = dio_stmt_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = dio_stmt_ProcessUtility;
}

/* ---------- SQL ---------- */

#define DIO_STMT_COLS	(5 + 3 + DIO_SR_COUNT + DIO_NUM_FALLBACK + 4 + 3)

/* pg_dio_statements(): every entry. */
Datum
pg_dio_statements(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DioStmtRow *rows;
	int			n;

	dio_stats_require();
	InitMaterializedSRF(fcinfo, 0);
	n = dio_stmt_collect(&rows);

	for (int r = 0; r < n; r++)
	{
		const DioStmtEntry *s = &rows[r].stats;
		Datum		values[DIO_STMT_COLS];
		bool		nulls[DIO_STMT_COLS] = {0};
		int			i = 0;

		CHECK_FOR_INTERRUPTS();
		if (s->queryid == 0)
			continue;			/* never flushed, or zeroed by core's reset */
		values[i++] = ObjectIdGetDatum(s->userid);
		values[i++] = ObjectIdGetDatum(rows[r].dboid);
		values[i++] = BoolGetDatum(s->toplevel);
		values[i++] = Int64GetDatum(s->queryid);
		values[i++] = Int64GetDatum(s->calls);
		values[i++] = Int64GetDatum((int64) s->c.direct_blocks);
		values[i++] = Int64GetDatum((int64) s->c.direct_reads);
		values[i++] = Int64GetDatum((int64) s->c.direct_bytes);
		for (int k = 0; k < DIO_SR_COUNT; k++)
			values[i++] = Int64GetDatum((int64) s->c.buffered[k]);
		for (int k = 0; k < DIO_NUM_FALLBACK; k++)
			values[i++] = Int64GetDatum((int64) s->c.fallback[k]);
		values[i++] = Int64GetDatum((int64) s->c.pf_requested);
		values[i++] = Int64GetDatum((int64) s->c.pf_advised);
		values[i++] = Int64GetDatum((int64) s->c.pf_read);
		values[i++] = Int64GetDatum((int64) s->c.pf_os_cached);
		values[i++] = Float8GetDatum((double) s->c.wait_us / 1000.0);
		values[i++] = Float8GetDatum((double) s->c.read_us / 1000.0);
		values[i++] = Float8GetDatum((double) s->c.pf_wait_us / 1000.0);
		Assert(i == DIO_STMT_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

static bool
dio_stmt_is_ours(PgStatShared_HashEntry *entry, Datum arg)
{
	return entry->key.kind == DIO_STMT_KIND;
}

/* pg_dio_statements_reset(): drop every entry; returns when. */
Datum
pg_dio_statements_reset(PG_FUNCTION_ARGS)
{
	dio_stats_require();
	pgstat_drop_matching_entries(dio_stmt_is_ours, (Datum) 0);
	pg_atomic_write_u32(&dio_stmt_shared->nentries, 0);
	PG_RETURN_TIMESTAMPTZ(GetCurrentTimestamp());
}
