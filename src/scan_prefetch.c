/*-------------------------------------------------------------------------
 *
 * scan_prefetch.c
 *	  PrefetchIndexScan and PrefetchIndexOnlyScan: forward index scans (and
 *	  index-only scans) whose heap fetches are read ahead of the consumer
 *	  (scan_readahead.c), so heap reads run concurrently while results still
 *	  come out in index order.
 *
 * How it works.  The node is the read-ahead's producer: when the look-ahead
 * asks for TIDs it reads them from the index and queues them (pf_fetch);
 * the consumer takes the queued TIDs in the same order, each with its heap
 * block at hand, and fetches each TID's visible tuple from it (following
 * HOT chains, as an index scan does).  For index-only scans the visibility
 * map decides once per queued TID, when it is queued: all-visible ones never
 * need their block and are returned from a copy of their index tuple.
 *
 * Why reading TIDs ahead is safe: only with an MVCC snapshot.  A TID that
 * VACUUM removes after we queued it can be reused only by a tuple inserted
 * after VACUUM ran, which our snapshot cannot see, so the heap fetch finds
 * nothing visible there.  With any other snapshot the node runs as core's
 * does: plain scans through index_getnext_slot(), index-only scans one TID at
 * a time.  The visibility-map test for an index-only scan is made right after
 * the TID is read from the index, the same ordering core's index-only scan
 * relies on (see nodeIndexonlyscan.c).
 *
 * Lifetime: the read-ahead holds a pin on the current group's buffer until
 * the consumer moves to the next group; tuples of plain scans are stored in
 * the scan slot with their own pin.  Index tuple copies live in a memory
 * context of their own; the one the slot points to is freed only after the
 * slot is cleared.  Rescan resets the read-ahead first (its stream, then its
 * queue), then runtime keys and the index scan.  On ERROR, pins go with the
 * resource owner and memory with the query.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_prefetch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type_d.h"
#include "commands/explain.h"
#include "commands/explain_format.h"
#include "executor/execScan.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "executor/nodeCustom.h"
#include "executor/nodeIndexscan.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "pgstat.h"
#include "access/parallel.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "compat.h"
#include "diag.h"
#include "scan_narrow.h"
#include "scan_prefetch.h"
#include "scan_readahead.h"

#define PF_SCAN_NAME		"PrefetchIndexScan"
#define PF_ONLY_NAME		"PrefetchIndexOnlyScan"

/* queue entry flags of ours (RA_PRODUCER_FLAGS) */
#define PF_RECHECK			0x0100	/* the index said: recheck the quals */
#define PF_HEAP_FORMAT		0x0200	/* copy is a HeapTuple (xs_hitup) */
#define PF_IN_SCAN			0x0400	/* no copy: the data is the index scan's */

/* PfScanState.latest: the TID last read from the index is ... */
#define PF_LATEST_NONE		0		/* ... not one the consumer will fetch */
#define PF_LATEST_QUEUED	1		/* ... the last one queued */
#define PF_LATEST_CUR		2		/* ... ra.cur, not queued (direct path) */

/*
 * EXPLAIN ANALYZE of a plan whose PrefetchIndexScan runs in parallel workers:
 * core gives DSM only to parallel-aware nodes, so workers add their counters
 * to an entry of their leader's row in shared memory (keyed by plan node id),
 * which the leader claims when it starts the node and reads when EXPLAIN
 * prints it (workers have ended by then).  Only one parallel query runs in a
 * leader at a time.  Entries are claimed and released by the leader only;
 * workers add with atomics.
 */
#define PF_PAR_ENTRIES	8

typedef struct PfParEntry
{
	pg_atomic_uint32 node;		/* plan_node_id + 1; 0 = free */
	pg_atomic_uint64 v[RA_NCOUNTERS];
} PfParEntry;

static PfParEntry *pf_par = NULL;	/* [MaxBackends + aux][PF_PAR_ENTRIES] */

typedef struct PfScanState
{
	CustomScanState css;

	/* from the plan */
	Oid			indexoid;
	bool		index_only;
	List	   *indexqualorig;	/* index quals for rechecks (and EXPLAIN) */
	ExprState  *qualorig;		/* ... evaluated on the heap row */
	List	   *filterqual;		/* the plan's filter (EXPLAIN) */
	ExprState  *filter;			/* ... evaluated on the scan tuple */

	/*
	 * Plain index scan with a narrow scan tuple (scan_narrow.c): rows are
	 * deformed from the heap tuple straight into the virtual scan slot, and
	 * rechecks run on heapslot, which has the relation's row.
	 */
	bool		plain_select;	/* no row marks, no EvalPlanQual */
	bool		narrow;
	DioNarrow	narrow_map;
	TupleTableSlot *heapslot;

	/* index scan */
	Relation	index;
	IndexScanDesc scan;
	IndexScanInstrumentation instr;
	ScanKey		keys;
	int			nkeys;
	IndexRuntimeKeyInfo *rtkeys;
	int			nrtkeys;
	bool		rtkeys_ready;
	ExprContext *rtcxt;

	/* index-only: which index columns the AM returns; name stored as cstring */
	int			nindexatts;
	bool	   *returnable;
	bool	   *name_cstring;
	bool		name_checked;
	bool		fixup;			/* a column is not returned or is a name */
	void	   *out_copy;		/* the copy the scan slot points into */
	MemoryContext qcxt;			/* the copies of queued entries */

	uint8		latest;			/* where the TID last read from the index is */
	uint64		scan_tids;		/* TIDs read from the index since (re)start */

	/* the trailing scan that marks dead index entries (pf_trail_kill) */
	IndexScanDesc trail;
	bool		trail_done;		/* it reached the end of the index range */
	uint64		trail_tids;		/* TIDs it has read */

	bool		started;
	bool		queued;			/* MVCC snapshot or index-only: TIDs are queued */
	RaState		ra;				/* the heap read-ahead: queue, look-ahead, blocks */

	/* instrumentation */
	PfParEntry *par;			/* leader: where workers add their counters */
} PfScanState;

bool		pg_dio_enable_index_prefetch = true;
bool		pg_dio_index_prefetch_advice = true;
bool		pg_dio_index_prefetch_combine = true;
/*
 * Off by default: a block read directly is cached nowhere, so a query run
 * again reads it from the device again where core's index scan finds it in
 * shared buffers, and on a device that bounds the scan it gains nothing cold
 * (docs/benchmarks.md).
 */
bool		pg_dio_index_direct_read = false;

static Node *pf_create_scan_state(CustomScan *cscan);
static void pf_begin_scan(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *pf_exec_scan(CustomScanState *node);
static void pf_end_scan(CustomScanState *node);
static void pf_rescan(CustomScanState *node);
static void pf_explain_scan(CustomScanState *node, List *ancestors,
							ExplainState *es);

static const CustomScanMethods pf_scan_methods = {
	.CustomName = PF_SCAN_NAME,
	.CreateCustomScanState = pf_create_scan_state,
};

static const CustomScanMethods pf_only_methods = {
	.CustomName = PF_ONLY_NAME,
	.CreateCustomScanState = pf_create_scan_state,
};

static const CustomExecMethods pf_exec_methods = {
	.CustomName = PF_SCAN_NAME,
	.BeginCustomScan = pf_begin_scan,
	.ExecCustomScan = pf_exec_scan,
	.EndCustomScan = pf_end_scan,
	.ReScanCustomScan = pf_rescan,
	.ExplainCustomScan = pf_explain_scan,
};

static const CustomExecMethods pf_only_exec_methods = {
	.CustomName = PF_ONLY_NAME,
	.BeginCustomScan = pf_begin_scan,
	.ExecCustomScan = pf_exec_scan,
	.EndCustomScan = pf_end_scan,
	.ReScanCustomScan = pf_rescan,
	.ExplainCustomScan = pf_explain_scan,
};

/* ======================================================================
 * Planner: substitution into core's finished plan (scan_plan.c)
 * ====================================================================== */

/*
 * Are the index's columns plain and distinct?  An index-only scan's tuple is
 * the index's columns, filled from the index tuple (pf_store_index_data).
 */
static bool
pf_index_plain_columns(Oid indexoid)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	Form_pg_index idx;
	bool		plain = true;

	if (!HeapTupleIsValid(tup))
		return false;
	idx = (Form_pg_index) GETSTRUCT(tup);
	for (int i = 0; i < idx->indnatts && plain; i++)
	{
		if (idx->indkey.values[i] == 0)
			plain = false;
		for (int j = 0; j < i; j++)
			if (idx->indkey.values[j] == idx->indkey.values[i])
				plain = false;
	}
	ReleaseSysCache(tup);
	return plain;
}

/*
 * A PrefetchIndexScan or PrefetchIndexOnlyScan in place of core's finished
 * IndexScan or IndexOnlyScan 'plan' (after setrefs.c), or NULL where it does
 * not apply: backward or ordered (KNN) scans, parallel index scans, index AMs
 * without amgettuple, relations other than heap tables and materialized
 * views, and index-only scans of indexes with expressions or repeated
 * columns.  The caller has ruled out positions where the scan must support
 * mark/restore or backward fetches.
 *
 * The node keeps the plan's fields (costs, target list, plan_node_id); its
 * filter moves into custom_exprs, to be evaluated and shown after the index
 * conditions, as core's index scans do.  custom_private = ((index OID,
 * index-only, plain SELECT)); custom_exprs = (index quals on index columns,
 * index quals for rechecks, filter).  A plain index scan in a plain SELECT
 * gets a narrow scan tuple (scan_narrow.c); an index-only scan's scan tuple
 * is the index's columns (indextlist), as in core.
 */
Plan *
pf_substitute(PlannedStmt *stmt, Plan *plan, bool plain)
{
	Scan	   *scan = (Scan *) plan;
	RangeTblEntry *rte = rt_fetch(scan->scanrelid, stmt->rtable);
	bool		index_only = IsA(plan, IndexOnlyScan);
	CustomScan *cscan;
	Oid			indexoid;
	List	   *filter = plan->qual;
	const IndexAmRoutine *am;
	bool		gettuple;

	if (!pg_dio_enable_index_prefetch || plan->parallel_aware)
		return NULL;
	if (rte->rtekind != RTE_RELATION || rte->inh ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW) ||
		get_rel_relam(rte->relid) != HEAP_TABLE_AM_OID)
		return NULL;
	if (index_only)
	{
		IndexOnlyScan *ios = (IndexOnlyScan *) plan;

		if (ios->indexorderby != NIL || ios->indexorderdir != ForwardScanDirection)
			return NULL;
		indexoid = ios->indexid;
		if (!pf_index_plain_columns(indexoid))
			return NULL;
	}
	else
	{
		IndexScan  *is = (IndexScan *) plan;

		if (is->indexorderby != NIL || is->indexorderdir != ForwardScanDirection)
			return NULL;
		indexoid = is->indexid;
	}
	am = GetIndexAmRoutineByAmId(get_rel_relam(indexoid), false);
	gettuple = am->amgettuple != NULL;
	dio_free_amroutine(am);
	if (!gettuple)
		return NULL;

	cscan = makeNode(CustomScan);
	cscan->scan = *scan;
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.plan.qual = NIL;
	cscan->flags = 0;
	cscan->custom_plans = NIL;
	cscan->custom_relids = bms_make_singleton(scan->scanrelid);
	if (index_only)
	{
		IndexOnlyScan *ios = (IndexOnlyScan *) plan;

		cscan->custom_private = list_make1(list_make3_oid(indexoid, 1, 0));
		cscan->custom_exprs = list_make3(ios->indexqual, ios->recheckqual, filter);
		cscan->custom_scan_tlist = ios->indextlist;
		cscan->methods = &pf_only_methods;
	}
	else
	{
		IndexScan  *is = (IndexScan *) plan;

		cscan->custom_private = list_make1(list_make3_oid(indexoid, 0, plain));
		cscan->custom_scan_tlist = NIL;
		if (plain)
		{
			/* the planner holds a lock on every relation of the plan */
			Relation	rel = table_open(rte->relid, NoLock);

			cscan->custom_scan_tlist =
				dio_narrow_substitute(scan->scanrelid, RelationGetNumberOfAttributes(rel),
									  &cscan->scan.plan.targetlist, &filter);
			table_close(rel, NoLock);
		}
		cscan->custom_exprs = list_make3(is->indexqual, is->indexqualorig, filter);
		cscan->methods = &pf_scan_methods;
	}
	return &cscan->scan.plan;
}

/* ======================================================================
 * Executor: the producer of the read-ahead (scan_readahead.c)
 * ====================================================================== */

/* The next TID from the index, NULL at its end. */
static ItemPointer
pf_read_tid(PfScanState *st)
{
	ItemPointer tid = index_getnext_tid(st->scan, ForwardScanDirection);

	st->latest = PF_LATEST_NONE;
	if (tid == NULL)
		st->ra.done = true;
	else
	{
		st->ra.c.tids++;
		st->scan_tids++;
	}
	return tid;
}

/*
 * Index-only: must the heap block of this TID be read?  The visibility map
 * decides, right after the TID was read from the index (see the file header).
 */
static inline bool
pf_needs_heap(PfScanState *st, ItemPointer tid)
{
	return !st->index_only ||
		!VM_ALL_VISIBLE(st->scan->heapRelation, ItemPointerGetBlockNumber(tid),
						&st->ra.vmbuf);
}

/* Queue the TID just read (index-only: with a copy of its index data). */
static RaEntry *
pf_queue_tid(PfScanState *st, ItemPointer tid, bool need_heap)
{
	IndexScanDesc scan = st->scan;
	RaEntry    *e = ra_push(&st->ra);

	st->latest = PF_LATEST_QUEUED;
	e->tid = *tid;
	e->flags = (scan->xs_recheck ? PF_RECHECK : 0) | (need_heap ? RA_NEED_HEAP : 0);
	e->copy = NULL;
	if (st->index_only)
	{
		MemoryContext old = MemoryContextSwitchTo(st->qcxt);

		if (scan->xs_hitup)
		{
			e->copy = heap_copytuple(scan->xs_hitup);
			e->flags |= PF_HEAP_FORMAT;
		}
		else if (scan->xs_itup)
			e->copy = CopyIndexTuple(scan->xs_itup);
		else
			elog(ERROR, "no data returned for index-only scan");
		MemoryContextSwitchTo(old);
		st->ra.copy_bytes += GetMemoryChunkSpace(e->copy);
	}
	return e;
}

/* Free an index-only copy of index data made by pf_queue_tid. */
static inline void
pf_free_copy(PfScanState *st, void *copy)
{
	st->ra.copy_bytes -= GetMemoryChunkSpace(copy);
	pfree(copy);
}

/* RaSetup.fetch: read the next TID from the index and queue it; NULL at the end. */
static RaEntry *
pf_fetch(void *arg)
{
	PfScanState *st = (PfScanState *) arg;
	ItemPointer tid = pf_read_tid(st);

	if (tid == NULL)
		return NULL;
	return pf_queue_tid(st, tid, pf_needs_heap(st, tid));
}

/*
 * Self-read mode while not looking ahead: the TID just read from the index
 * (which needs its heap block) is the consumer's next entry, with no queue
 * entry and no copy of its index data (PF_IN_SCAN), and its block is read
 * unless it is the current one (ra_take_now).
 */
static pg_attribute_always_inline RaEntry *
pf_current_entry(PfScanState *st, ItemPointer tid, bool top_up)
{
	st->latest = PF_LATEST_CUR;
	return ra_take_now(&st->ra, tid,
					   PF_IN_SCAN | (st->scan->xs_recheck ? PF_RECHECK : 0),
					   top_up);
}

/*
 * RaSetup.take, plain scans: the next TID straight from the index as the
 * consumer's entry.  (Index-only scans never need it: pf_ios_take does this
 * for them.)
 */
static RaEntry *
pf_take(void *arg)
{
	PfScanState *st = (PfScanState *) arg;
	ItemPointer tid = pf_read_tid(st);

	if (tid == NULL)
		return NULL;
	return pf_current_entry(st, tid, true);
}

static void pf_trail_end(PfScanState *st);

/*
 * Forget the copies of what was queued and end the trailing scan; the
 * read-ahead has been reset (its queue forgotten, the scan slot cleared).
 */
static void
pf_index_reset(PfScanState *st)
{
	MemoryContextReset(st->qcxt);
	st->out_copy = NULL;
	st->scan_tids = 0;
	pf_trail_end(st);
	st->latest = PF_LATEST_NONE;
}

/* ======================================================================
 * Executor: tuples
 * ====================================================================== */

/*
 * Index-only: fill the (index-shaped) virtual scan slot from the entry's copy
 * or, for PF_IN_SCAN, from the index scan itself.
 */
static pg_attribute_always_inline void
pf_store_index_data(PfScanState *st, TupleTableSlot *slot, RaEntry *e)
{
	IndexScanDesc scan = st->scan;
	TupleDesc	idesc;
	Datum	   *values = slot->tts_values;
	bool	   *isnull = slot->tts_isnull;

	ExecClearTuple(slot);
	if (st->out_copy)
		pf_free_copy(st, st->out_copy);
	st->out_copy = NULL;

	if (e->flags & PF_IN_SCAN)
	{
		/* valid until the next index_getnext_tid(), as in core's scan */
		if (scan->xs_hitup)
		{
			idesc = scan->xs_hitupdesc;
			heap_deform_tuple(scan->xs_hitup, idesc, values, isnull);
		}
		else
		{
			idesc = scan->xs_itupdesc;
			index_deform_tuple(scan->xs_itup, idesc, values, isnull);
		}
	}
	else
	{
		st->out_copy = e->copy;
		e->copy = NULL;
		if (e->flags & PF_HEAP_FORMAT)
		{
			idesc = scan->xs_hitupdesc;
			heap_deform_tuple((HeapTuple) st->out_copy, idesc, values, isnull);
		}
		else
		{
			idesc = scan->xs_itupdesc;
			index_deform_tuple((IndexTuple) st->out_copy, idesc, values, isnull);
		}
	}

	/* btree stores name as cstring: pad back to NAMEDATALEN, as core does */
	if (!st->name_checked)
	{
		TupleDesc	sdesc = slot->tts_tupleDescriptor;

		for (int i = 0; i < st->nindexatts && i < idesc->natts; i++)
		{
			st->name_cstring[i] = TupleDescAttr(idesc, i)->atttypid == CSTRINGOID &&
				TupleDescAttr(sdesc, i)->atttypid == NAMEOID;
			if (st->name_cstring[i] || !st->returnable[i])
				st->fixup = true;
		}
		st->name_checked = true;
	}

	for (int i = 0; st->fixup && i < st->nindexatts; i++)
	{
		if (!st->returnable[i])
			isnull[i] = true;
		else if (!isnull[i] && st->name_cstring[i])
		{
			Name		name = MemoryContextAlloc(st->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory,
												  NAMEDATALEN);

			namestrcpy(name, DatumGetCString(values[i]));
			values[i] = NameGetDatum(name);
		}
	}
	ExecStoreVirtualTuple(slot);
	/*
	 * The heap TID, for WHERE CURRENT OF: as core's index-only scan has it,
	 * the index's, or the fetched tuple's where the heap was read.
	 */
	slot->tts_tid = e->tid;
	slot->tts_tableOid = RelationGetRelid(st->css.ss.ss_currentRelation);
}

/* At the first row: the index scan, and the read-ahead's sources. */
static void
pf_start(PfScanState *st)
{
	ScanState  *ss = &st->css.ss;
	EState	   *estate = ss->ps.state;
	RaSetup		setup;

	st->scan = dio_index_beginscan(ss->ss_currentRelation, st->index,
								   estate->es_snapshot, &st->instr, st->nkeys,
								   dio_scan_read_only(ss));
	if (st->index_only)
		st->scan->xs_want_itup = true;
	if (st->nrtkeys == 0 || st->rtkeys_ready)
		index_rescan(st->scan, st->keys, st->nkeys, NULL, 0);

	setup.prefetch = IsMVCCSnapshot(estate->es_snapshot);
	st->queued = setup.prefetch || st->index_only;
	setup.heap = ss->ss_currentRelation;
	setup.snapshot = estate->es_snapshot;
	setup.read_only = dio_scan_read_only(ss);
	setup.queued = st->queued;
	setup.timing = ss->ps.instrument != NULL && DIO_INSTR_NEED_TIMER(ss->ps.instrument);
	setup.advice = pg_dio_index_prefetch_advice;
	setup.combine = pg_dio_index_prefetch_combine;
	/* index-only scans read only blocks that are not all-visible */
	setup.direct = pg_dio_index_direct_read && st->plain_select && !st->index_only;
	setup.copies = st->index_only;
	setup.fetch = pf_fetch;
	setup.take = st->index_only ? NULL : pf_take;
	setup.arg = st;
	ra_start(&st->ra, &setup);
	st->started = true;
}

/*
 * A row the index said to recheck: do the original index quals hold?  Counts
 * it as removed by recheck (core's Rows Removed by Index Recheck) if not.
 */
static inline bool
pf_recheck_quals(PfScanState *st, TupleTableSlot *slot)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;

	econtext->ecxt_scantuple = slot;
	if (ExecQualAndReset(st->qualorig, econtext))
		return true;
	InstrCountFiltered2(&st->css.ss, 1);
	return false;
}

/* Store heap tuple 'tuple' (its page pinned) in the narrow scan slot. */
static pg_attribute_always_inline void
pf_store_narrow(PfScanState *st, TupleTableSlot *slot, HeapTuple tuple)
{
	dio_narrow_store(&st->narrow_map, tuple->t_data, slot);
	slot->tts_tid = tuple->t_self;
	slot->tts_tableOid = RelationGetRelid(st->css.ss.ss_currentRelation);
}

/*
 * Store st->ra.tup, on the direct image, in a buffer heap tuple slot (the
 * relation's row): such a slot takes tuples of a buffer only, so a copy, and
 * the copy's TID and table go where the slot's readers take them from.
 */
static void
pf_store_direct(PfScanState *st, TupleTableSlot *slot)
{
	ExecForceStoreHeapTuple(&st->ra.tup, slot, false);
	slot->tts_tid = st->ra.tup.t_self;
	slot->tts_tableOid = st->ra.tup.t_tableOid;
}

/* pf_recheck_quals of st->ra.tup, in cur_buf or the direct image, for a narrow scan tuple. */
static bool
pf_recheck_narrow(PfScanState *st)
{
	bool		ok;

	if (st->ra.have_run)
		pf_store_direct(st, st->heapslot);
	else
		ExecStoreBufferHeapTuple(&st->ra.tup, st->heapslot, st->ra.cur_buf);
	ok = pf_recheck_quals(st, st->heapslot);
	ExecClearTuple(st->heapslot);
	return ok;
}

/*
 * The trailing scan: a second scan of the index with the same keys, which
 * follows the consumer to mark dead the index entries of TIDs that the
 * consumer found dead to everyone after the scan had read past them (core's
 * kill_prior_tuple, which an index AM applies only to the entry it returned
 * last).  Begun at the first such TID; it reads the index up to the TID
 * (never further than the scan has read) and sets kill_prior_tuple when it
 * returns it, to be applied at its next read, or at its end.  Marking an
 * entry whose heap tuples are dead to everyone is right whichever scan does
 * it.  Its reads are not counted in the index's statistics (core counts one
 * scan).
 */
/* The trailing scan's next TID, not counted in the index's statistics. */
static ItemPointer
pf_trail_next(PfScanState *st)
{
	Relation	index = st->index;
	bool		enabled = index->pgstat_enabled;
	struct PgStat_TableStatus *info = index->pgstat_info;
	ItemPointer t;

	index->pgstat_enabled = false;
	index->pgstat_info = NULL;
	PG_TRY();
	{
		t = index_getnext_tid(st->trail, ForwardScanDirection);
	}
	PG_FINALLY();
	{
		index->pgstat_enabled = enabled;
		index->pgstat_info = info;
	}
	PG_END_TRY();
	return t;
}

static void
pf_trail_kill(PfScanState *st, ItemPointer dead)
{
	if (st->trail_done)
		return;
	if (st->trail == NULL)
	{
		ScanState  *ss = &st->css.ss;
		MemoryContext old = MemoryContextSwitchTo(ss->ps.state->es_query_cxt);

		st->trail = dio_index_beginscan(ss->ss_currentRelation, st->index,
										ss->ps.state->es_snapshot, NULL, st->nkeys,
										dio_scan_read_only(ss));
		MemoryContextSwitchTo(old);
		index_rescan(st->trail, st->keys, st->nkeys, NULL, 0);
		st->trail_tids = 0;
	}

	while (st->trail_tids < st->scan_tids)
	{
		ItemPointer t;

		CHECK_FOR_INTERRUPTS();
		t = pf_trail_next(st);
		if (t == NULL)
		{
			st->trail_done = true;
			break;
		}
		st->trail_tids++;
		if (ItemPointerEquals(t, dead))
		{
			st->trail->kill_prior_tuple = true;
			break;
		}
	}
}

/* End the trailing scan, applying the mark it has pending. */
static void
pf_trail_end(PfScanState *st)
{
	if (st->trail == NULL)
		return;
	if (st->trail->kill_prior_tuple && !st->trail_done)
		(void) pf_trail_next(st);
	index_endscan(st->trail);
	st->trail = NULL;
	st->trail_done = false;
	st->trail_tids = 0;
}

/* Not an MVCC snapshot: exactly core's index scan. */
static TupleTableSlot *
pf_next_unqueued(PfScanState *st, TupleTableSlot *slot)
{
	TupleTableSlot *hslot = st->narrow ? st->heapslot : slot;

	while (index_getnext_slot(st->scan, ForwardScanDirection, hslot))
	{
		CHECK_FOR_INTERRUPTS();
		if (st->scan->xs_recheck && !pf_recheck_quals(st, hslot))
			continue;
		if (st->narrow)
		{
			/* the page stays pinned by heapslot until its next tuple */
			HeapTuple	tuple = ExecFetchSlotHeapTuple(hslot, false, NULL);

			pf_store_narrow(st, slot, tuple);
		}
		return slot;
	}
	if (st->narrow)
		ExecClearTuple(st->heapslot);
	return ExecClearTuple(slot);
}

/*
 * Index-only scan with nothing queued: as core's index-only scan, a TID
 * whose block is all-visible goes from the index straight to the slot, with
 * no queue entry and no copy (*result: the slot, or with *again set a row
 * the recheck dropped), and so does one that needs the heap in self-read
 * mode while not looking ahead (the entry returned).  Otherwise it is queued
 * and handed to the look-ahead (NULL).  At the end: *result, an empty slot.
 */
static RaEntry *
pf_ios_take(PfScanState *st, TupleTableSlot *slot, TupleTableSlot **result,
			bool *again)
{
	ItemPointer tid = pf_read_tid(st);

	if (tid == NULL)
	{
		*result = ExecClearTuple(slot);
		return NULL;
	}
	if (!pf_needs_heap(st, tid))
	{
		PredicateLockPage(st->css.ss.ss_currentRelation, ItemPointerGetBlockNumber(tid),
						  st->css.ss.ps.state->es_snapshot);
		st->ra.cur.tid = *tid;
		st->ra.cur.flags = PF_IN_SCAN;
		st->ra.cur.copy = NULL;
		pf_store_index_data(st, slot, &st->ra.cur);
		if (!st->scan->xs_recheck || pf_recheck_quals(st, slot))
			*result = slot;
		else
			*again = true;
		return NULL;
	}
	if (st->ra.selfread && st->ra.self_dist == 1)
		return pf_current_entry(st, tid, false);
	pf_queue_tid(st, tid, true);
	ra_feed(&st->ra);
	return NULL;
}

/*
 * Fetch the tuple of e's TID visible to the scan from its heap block (the
 * held direct image or cur_buf) into st->ra.tup (ra_fetch_tuple); e->tid
 * becomes the tuple's own TID, which may be further down its HOT chain.
 * False if none is visible.
 */
static bool
pf_heap_fetch(PfScanState *st, RaEntry *e)
{
	ItemPointerData tid = e->tid;
	bool		all_dead = false;
	bool		found;

	if (st->index_only)
		InstrCountTuples2(&st->css.ss, 1);	/* core's Heap Fetches */
	found = ra_fetch_tuple(&st->ra, &tid, st->css.ss.ps.state->es_snapshot,
						   &all_dead);

	/*
	 * As core's index fetch: a TID whose whole HOT chain is dead to everyone
	 * gets its index entry marked dead, by the index AM at its next read.
	 * That read must be the one right after this TID's: when nothing was read
	 * from the index since (no look-ahead beyond it), the scan's own; else
	 * the trailing scan's.
	 */
	if (all_dead && !st->scan->xactStartedInRecovery)
	{
		if (st->latest == PF_LATEST_CUR ||
			(st->latest == PF_LATEST_QUEUED && st->ra.head == st->ra.tail))
			st->scan->kill_prior_tuple = true;
		else
			pf_trail_kill(st, &tid);
	}
	if (!found)
	{
		if (e->copy)
		{
			pf_free_copy(st, e->copy);
			e->copy = NULL;
		}
		return false;
	}
	/* the index's idx_tup_fetch, as core's index fetch counts it */
	pgstat_count_heap_fetch(st->scan->indexRelation);
	e->tid = tid;
	return true;
}

static TupleTableSlot *
pf_next_tuple(ScanState *ss)
{
	PfScanState *st = (PfScanState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	Relation	heap = ss->ss_currentRelation;
	Snapshot	snapshot = ss->ps.state->es_snapshot;

	if (!st->started)
		pf_start(st);

	if (!st->queued)
		return pf_next_unqueued(st, slot);

	for (;;)
	{
		RaEntry    *e = NULL;

		CHECK_FOR_INTERRUPTS();

		if (unlikely(st->ra.topup_pending))
		{
			st->ra.topup_pending = false;
			ra_top_up(&st->ra);
		}

		if (st->index_only && st->ra.head == st->ra.tail && !st->ra.done)
		{
			TupleTableSlot *result = NULL;
			bool		again = false;

			e = pf_ios_take(st, slot, &result, &again);
			if (result != NULL)
				return result;
			if (again)
				continue;
		}

		if (e == NULL)
		{
			e = ra_next_entry(&st->ra);
			if (e == NULL)
				return ExecClearTuple(slot);
		}

		if (e->flags & RA_NEED_HEAP)
		{
			if (!pf_heap_fetch(st, e))
				continue;
			if (st->narrow)
			{
				/* the page stays pinned as cur_buf (or held) until the next call */
				if ((e->flags & PF_RECHECK) && !pf_recheck_narrow(st))
					continue;
				pf_store_narrow(st, slot, &st->ra.tup);
				return slot;
			}
			if (st->ra.have_run)
				pf_store_direct(st, slot);
			else if (!st->index_only)
				ExecStoreBufferHeapTuple(&st->ra.tup, slot, st->ra.cur_buf);
		}
		else
			PredicateLockPage(heap, ItemPointerGetBlockNumber(&e->tid), snapshot);

		if (st->index_only)
			pf_store_index_data(st, slot, e);

		if (!(e->flags & PF_RECHECK) || pf_recheck_quals(st, slot))
			return slot;
	}
}

/*
 * The next row that passes the plan's filter.  The filter is the node's own
 * (not ps.qual) so that EXPLAIN shows it after the index conditions, as core
 * does; it counts the rows it removes as core's scans do.
 */
static TupleTableSlot *
pf_next(ScanState *ss)
{
	PfScanState *st = (PfScanState *) ss;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	for (;;)
	{
		TupleTableSlot *slot = pf_next_tuple(ss);

		if (st->filter == NULL || TupIsNull(slot))
			return slot;
		econtext->ecxt_scantuple = slot;
		if (ExecQual(st->filter, econtext))
			return slot;
		InstrCountFiltered1(ss, 1);
		ResetExprContext(econtext);
	}
}

/*
 * EvalPlanQual: does the substituted tuple still satisfy the index quals and
 * the filter?
 */
static bool
pf_recheck(ScanState *ss, TupleTableSlot *slot)
{
	PfScanState *st = (PfScanState *) ss;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	if (st->index_only)
		elog(ERROR, "EvalPlanQual recheck is not supported in index-only scans");
	/* planned only for plain SELECTs, which EvalPlanQual never rechecks */
	if (st->narrow)
		elog(ERROR, "EvalPlanQual recheck of a narrow PrefetchIndexScan");
	econtext->ecxt_scantuple = slot;
	if (!ExecQualAndReset(st->qualorig, econtext))
		return false;
	econtext->ecxt_scantuple = slot;
	return st->filter == NULL || ExecQualAndReset(st->filter, econtext);
}

/* ======================================================================
 * Parallel workers' counters
 * ====================================================================== */

static int
pf_par_rows(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS;
}

Size
dio_prefetch_shmem_size(void)
{
	return mul_size(mul_size(pf_par_rows(), PF_PAR_ENTRIES), sizeof(PfParEntry));
}

/* Called from the shmem_startup_hook, under AddinShmemInitLock. */
void
dio_prefetch_shmem_startup(void)
{
	bool		found;

	pf_par = ShmemInitStruct("pg_dio prefetch parallel counters",
							 dio_prefetch_shmem_size(), &found);
	if (!found)
	{
		for (int i = 0; i < pf_par_rows() * PF_PAR_ENTRIES; i++)
		{
			pg_atomic_init_u32(&pf_par[i].node, 0);
			for (int j = 0; j < (int) RA_NCOUNTERS; j++)
				pg_atomic_init_u64(&pf_par[i].v[j], 0);
		}
	}
}

/* Leader, EXPLAIN ANALYZE: claim (or reclaim) the entry of this plan node. */
static void
pf_par_claim(PfScanState *st)
{
	PfParEntry *row;
	uint32		key = (uint32) st->css.ss.ps.plan->plan_node_id + 1;

	if (pf_par == NULL || IsParallelWorker() || MyProcNumber < 0 ||
		MyProcNumber >= pf_par_rows())
		return;
	row = &pf_par[MyProcNumber * PF_PAR_ENTRIES];
	for (int pass = 0; pass < 2 && st->par == NULL; pass++)
	{
		for (int i = 0; i < PF_PAR_ENTRIES; i++)
		{
			uint32		expected = pass == 0 ? key : 0;

			if (pg_atomic_compare_exchange_u32(&row[i].node, &expected, key))
			{
				st->par = &row[i];
				break;
			}
		}
	}
	if (st->par != NULL)
		for (int j = 0; j < (int) RA_NCOUNTERS; j++)
			pg_atomic_write_u64(&st->par->v[j], 0);
}

static void
pf_par_release(PfScanState *st)
{
	if (st->par != NULL)
		pg_atomic_write_u32(&st->par->node, 0);
	st->par = NULL;
}

/*
 * At the end of a top-level transaction no query of this backend runs any
 * more: free entries an ERROR kept the end-scan callback from releasing.
 */
static void
pf_par_xact_callback(XactEvent event, void *arg)
{
	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PREPARE)
		return;
	if (pf_par == NULL || IsParallelWorker() || MyProcNumber < 0 ||
		MyProcNumber >= pf_par_rows())
		return;
	for (int i = 0; i < PF_PAR_ENTRIES; i++)
		pg_atomic_write_u32(&pf_par[MyProcNumber * PF_PAR_ENTRIES + i].node, 0);
}

/* Worker, at the end of the node: add our counters to the leader's entry. */
static void
pf_par_publish(PfScanState *st)
{
	PGPROC	   *leader = MyProc ? MyProc->lockGroupLeader : NULL;
	uint32		key = (uint32) st->css.ss.ps.plan->plan_node_id + 1;
	RaCounters	c = st->ra.c;
	uint64	   *v = (uint64 *) &c;
	int			procno;

	if (pf_par == NULL || !IsParallelWorker() || leader == NULL || leader == MyProc)
		return;
	procno = GetNumberFromPGProc(leader);
	if (procno < 0 || procno >= pf_par_rows())
		return;
	c.nsearches = st->instr.nsearches;
	for (int i = 0; i < PF_PAR_ENTRIES; i++)
	{
		PfParEntry *e = &pf_par[procno * PF_PAR_ENTRIES + i];

		if (pg_atomic_read_u32(&e->node) != key)
			continue;
		for (int j = 0; j < (int) RA_NCOUNTERS - 1; j++)
			pg_atomic_fetch_add_u64(&e->v[j], v[j]);
		for (;;)
		{
			uint64		old = pg_atomic_read_u64(&e->v[RA_NCOUNTERS - 1]);

			if (old >= c.dist_max ||
				pg_atomic_compare_exchange_u64(&e->v[RA_NCOUNTERS - 1], &old, c.dist_max))
				break;
		}
		return;
	}
}

/* The leader's counters plus what its workers added. */
static RaCounters
pf_total_counters(PfScanState *st)
{
	RaCounters	c = st->ra.c;
	uint64	   *v = (uint64 *) &c;

	c.nsearches = st->instr.nsearches;
	if (st->par != NULL)
	{
		for (int j = 0; j < (int) RA_NCOUNTERS - 1; j++)
			v[j] += pg_atomic_read_u64(&st->par->v[j]);
		v[RA_NCOUNTERS - 1] = Max(v[RA_NCOUNTERS - 1],
								  pg_atomic_read_u64(&st->par->v[RA_NCOUNTERS - 1]));
	}
	return c;
}

/* ======================================================================
 * Executor: node callbacks
 * ====================================================================== */

/*
 * The index quals as written, compiled for rechecks on the heap row: the scan
 * slot itself, or heapslot when the scan tuple is narrow (the expression's
 * column fetches are compiled for the slot type they will see).
 */
static ExprState *
pf_init_recheck(PfScanState *st, List *quals)
{
	PlanState  *ps = &st->css.ss.ps;
	TupleDesc	desc = ps->scandesc;
	const TupleTableSlotOps *ops = ps->scanops;
	ExprState  *result;

	if (!st->narrow)
		return ExecInitQual(quals, ps);
	ps->scandesc = st->heapslot->tts_tupleDescriptor;
	ps->scanops = st->heapslot->tts_ops;
	result = ExecInitQual(quals, ps);
	ps->scandesc = desc;
	ps->scanops = ops;
	return result;
}

static Node *
pf_create_scan_state(CustomScan *cscan)
{
	PfScanState *st = (PfScanState *) newNode(sizeof(PfScanState), T_CustomScanState);
	List	   *oids = (List *) linitial(cscan->custom_private);
	bool		index_only = lsecond_oid(oids) != 0;

	st->index_only = index_only;
	st->plain_select = lthird_oid(oids) != 0;
	st->narrow = !index_only && cscan->custom_scan_tlist != NIL;
	st->css.methods = index_only ? &pf_only_exec_methods : &pf_exec_methods;
	st->css.slotOps = index_only || st->narrow ? &TTSOpsVirtual : &TTSOpsBufferHeapTuple;
	return (Node *) st;
}

static void
pf_begin_scan(CustomScanState *node, EState *estate, int eflags)
{
	PfScanState *st = (PfScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	LOCKMODE	lockmode;
	List	   *indexquals;

	st->indexoid = linitial_oid((List *) linitial(cscan->custom_private));
	if (st->narrow)
	{
		Relation	heap = node->ss.ss_currentRelation;

		dio_narrow_init(&st->narrow_map, RelationGetDescr(heap), cscan->custom_scan_tlist);
		st->heapslot = ExecInitExtraTupleSlot(estate, RelationGetDescr(heap),
											  &TTSOpsBufferHeapTuple);
	}
	indexquals = (List *) linitial(cscan->custom_exprs);
	st->indexqualorig = (List *) lsecond(cscan->custom_exprs);
	st->filterqual = (List *) lthird(cscan->custom_exprs);
	st->filter = ExecInitQual(st->filterqual, &node->ss.ps);
	st->qualorig = pf_init_recheck(st, st->indexqualorig);

	/* EXPLAIN without ANALYZE needs no index (an advisor's may not exist) */
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	lockmode = exec_rt_fetch(cscan->scan.scanrelid, estate)->rellockmode;
	st->index = index_open(st->indexoid, lockmode);
	if (estate->es_instrument)
		pf_par_claim(st);

	ExecIndexBuildScanKeys(&node->ss.ps, st->index, indexquals, false,
						   &st->keys, &st->nkeys,
						   &st->rtkeys, &st->nrtkeys,
						   NULL, NULL);
	if (st->nrtkeys != 0)
	{
		/* runtime keys get a context of their own, reset per rescan */
		ExprContext *std = node->ss.ps.ps_ExprContext;

		ExecAssignExprContext(estate, &node->ss.ps);
		st->rtcxt = node->ss.ps.ps_ExprContext;
		node->ss.ps.ps_ExprContext = std;
	}

	ra_init(&st->ra, estate->es_query_cxt, node->ss.ss_ScanTupleSlot);
	st->qcxt = AllocSetContextCreate(estate->es_query_cxt,
									 "pg_dio index prefetch queue",
									 ALLOCSET_DEFAULT_SIZES);

	if (st->index_only)
	{
		int			n = RelationGetNumberOfAttributes(st->index);

		if (n != node->ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts)
			elog(ERROR, "index %u does not match the index-only scan's tuple",
				 st->indexoid);
		st->nindexatts = n;
		st->returnable = palloc0(sizeof(bool) * n);
		st->name_cstring = palloc0(sizeof(bool) * n);
		for (int i = 0; i < n; i++)
			st->returnable[i] = index_can_return(st->index, i + 1);
	}
}

static TupleTableSlot *
pf_exec_scan(CustomScanState *node)
{
	PfScanState *st = (PfScanState *) node;

	if (st->nrtkeys != 0 && !st->rtkeys_ready)
		ExecReScan(&node->ss.ps);
	/* no qual, projection or EvalPlanQual: as core's scans, the short way */
	if (node->ss.ps.qual == NULL && node->ss.ps.ps_ProjInfo == NULL &&
		node->ss.ps.state->es_epq_active == NULL)
		return ExecScanExtended(&node->ss, pf_next, pf_recheck, NULL, NULL, NULL);
	return ExecScan(&node->ss, pf_next, pf_recheck);
}

static void
pf_rescan(CustomScanState *node)
{
	PfScanState *st = (PfScanState *) node;

	if (st->index == NULL)
		return;
	ra_reset(&st->ra);
	pf_index_reset(st);

	if (st->nrtkeys != 0)
	{
		ResetExprContext(st->rtcxt);
		ExecIndexEvalRuntimeKeys(st->rtcxt, st->rtkeys, st->nrtkeys);
	}
	st->rtkeys_ready = true;

	if (st->scan)
		index_rescan(st->scan, st->keys, st->nkeys, NULL, 0);
	ExecScanReScan(&node->ss);
}

static void
pf_end_scan(CustomScanState *node)
{
	PfScanState *st = (PfScanState *) node;

	if (st->index == NULL)
		return;
	if (node->ss.ps.state->es_instrument)
		pf_par_publish(st);
	pf_par_release(st);
	ra_end(&st->ra);
	pf_index_reset(st);
	if (st->scan)
		index_endscan(st->scan);
	index_close(st->index, NoLock);
}

/* ======================================================================
 * EXPLAIN
 * ====================================================================== */

/*
 * Core prints "Custom Scan (PrefetchIndexScan) on t"; put the index name where
 * core's index scans have it ("... using idx on t").  Every node printed
 * before ours has had its details printed already, so every earlier title of
 * ours has been completed: ours is the first line (after indentation and
 * "->  ") that still reads "Custom Scan (PrefetchIndexScan) on ".  (Lines of
 * our own Filter or Output, which may hold any text, come after it.)
 */
static void
pf_explain_title(PfScanState *st, ExplainState *es, const char *idxname)
{
	StringInfo	s = es->str;
	char		prefix[64];
	int			plen;
	int			ls = 0;

	snprintf(prefix, sizeof(prefix), "Custom Scan (%s) on ",
			 st->index_only ? PF_ONLY_NAME : PF_SCAN_NAME);
	plen = strlen(prefix);

	while (ls < s->len)
	{
		int			p = ls;
		char	   *nl;

		while (p < s->len && s->data[p] == ' ')
			p++;
		if (strncmp(s->data + p, "->  ", 4) == 0)
			p += 4;
		if (strncmp(s->data + p, prefix, plen) == 0)
		{
			int			at = p + plen - strlen(" on ");
			char	   *rest = pstrdup(s->data + at);

			s->len = at;
			s->data[at] = '\0';
			appendStringInfo(s, " using %s", quote_identifier(idxname));
			appendStringInfoString(s, rest);
			pfree(rest);
			return;
		}
		nl = memchr(s->data + ls, '\n', s->len - ls);
		if (nl == NULL)
			break;
		ls = nl - s->data + 1;
	}
}

/* A list of quals, as core's EXPLAIN shows a scan's (explain.c, show_qual). */
static void
pf_explain_qual(List *quals, const char *label, Plan *plan, List *ancestors,
				ExplainState *es)
{
	List	   *context;

	if (quals == NIL)
		return;
	context = set_deparse_context_plan(es->deparse_cxt, plan, ancestors);
	ExplainPropertyText(label,
						deparse_expression((Node *) make_ands_explicit(quals),
										   context, es->verbose, false),
						es);
}

/* Rows removed by the filter or a recheck, per loop, as core shows them. */
static void
pf_explain_count(const char *label, DioNodeInstr *instr, bool recheck,
				 ExplainState *es)
{
	double		n;

	if (!es->analyze || instr == NULL)
		return;
	n = recheck ? instr->nfiltered2 : instr->nfiltered1;
	if (n > 0 || es->format != EXPLAIN_FORMAT_TEXT)
		ExplainPropertyFloat(label, NULL, instr->nloops > 0 ? n / instr->nloops : 0.0,
							 0, es);
}

/*
 * EXPLAIN (IO), PostgreSQL 19: core's prefetch and I/O figures, in place of
 * pg_dio's own prefetch line: the read stream's, or in self-read mode the
 * scan's own (the blocks it took, how many it had advised ahead, its reads
 * and the advised reads in flight at each).
 */
static void
pf_explain_io(PfScanState *st, const RaCounters *c, ExplainState *es)
{
	DioIOStats	io = st->ra.iostats;

	if (!dio_explain_io(es))
		return;
	if (st->ra.selfread)
	{
		io.prefetch_count = c->blocks;
		io.distance_sum = c->dist_sum;
		io.distance_max = (int16) Min(c->dist_max, PG_INT16_MAX);
		io.distance_capacity = (int16) Min(st->ra.capacity, PG_INT16_MAX);
		io.wait_count = c->waits;
		io.io_count = io.io_nblocks = c->blocks_read;
		io.io_in_progress = c->io_inprog;
	}
	dio_explain_io_stats(es, &io);
}

/* The scan's prefetch and heap figures in text: one line each. */
static void
pf_explain_heap_text(PfScanState *st, const RaCounters *c, ExplainState *es)
{
	if (!dio_explain_io(es))
	{
		ExplainIndentText(es);
		appendStringInfo(es->str, "Prefetch: avg=%.1f max=" UINT64_FORMAT " capacity=%u",
						 c->blocks ? (double) c->dist_sum / c->blocks : 0.0,
						 c->dist_max, st->ra.capacity);
		if (c->restarts > 0)
			appendStringInfo(es->str, " restarts=" UINT64_FORMAT, c->restarts);
		appendStringInfoChar(es->str, '\n');
	}
	ExplainIndentText(es);
	appendStringInfo(es->str, "Heap Blocks: requested=" UINT64_FORMAT " read=" UINT64_FORMAT,
					 c->blocks, c->blocks_read);
	if (c->sync_blocks > 0)
		appendStringInfo(es->str, " os-cached=" UINT64_FORMAT, c->sync_blocks);
	if (c->advised > 0)
		appendStringInfo(es->str, " advised=" UINT64_FORMAT, c->advised);
	if (c->combined > 0)
		appendStringInfo(es->str, " combined=" UINT64_FORMAT, c->combined);
	if (c->direct > 0 || c->direct_fallback > 0)
		appendStringInfo(es->str, " direct=" UINT64_FORMAT, c->direct);
	if (c->direct_fallback > 0)
		appendStringInfo(es->str, " direct-fallback=" UINT64_FORMAT, c->direct_fallback);
	if (st->ra.timing)
		appendStringInfo(es->str, " waits=" UINT64_FORMAT " wait time=%.3f ms",
						 c->waits, (double) c->wait_us / 1000.0);
	if (dio_explain_io(es) && c->restarts > 0)
		appendStringInfo(es->str, " restarts=" UINT64_FORMAT, c->restarts);
	appendStringInfoChar(es->str, '\n');
}

/* The same figures as properties of the other formats. */
static void
pf_explain_heap_props(PfScanState *st, const RaCounters *c, ExplainState *es)
{
	if (!dio_explain_io(es))
	{
		ExplainPropertyFloat("Prefetch Average", NULL,
							 c->blocks ? (double) c->dist_sum / c->blocks : 0.0, 1, es);
		ExplainPropertyUInteger("Prefetch Max", NULL, c->dist_max, es);
		ExplainPropertyUInteger("Prefetch Capacity", NULL, st->ra.capacity, es);
	}
	ExplainPropertyUInteger("Prefetch Restarts", NULL, c->restarts, es);
	ExplainPropertyUInteger("Heap Blocks Requested", NULL, c->blocks, es);
	ExplainPropertyUInteger("Heap Blocks Read", NULL, c->blocks_read, es);
	ExplainPropertyUInteger("Heap Blocks OS-Cached", NULL, c->sync_blocks, es);
	ExplainPropertyUInteger("Heap Blocks Advised", NULL, c->advised, es);
	ExplainPropertyUInteger("Heap Blocks Combined", NULL, c->combined, es);
	ExplainPropertyUInteger("Heap Blocks Direct", NULL, c->direct, es);
	ExplainPropertyUInteger("Heap Blocks Direct Fallback", NULL, c->direct_fallback, es);
	ExplainPropertyUInteger("Index TIDs", NULL, c->tids, es);
	if (st->ra.timing)
	{
		if (!dio_explain_io(es))
			ExplainPropertyUInteger("I/O Waits", NULL, c->waits, es);
		ExplainPropertyFloat("I/O Wait Time", "ms", (double) c->wait_us / 1000.0, 3, es);
	}
}

static void
pf_explain_scan(CustomScanState *node, List *ancestors, ExplainState *es)
{
	PfScanState *st = (PfScanState *) node;
	Plan	   *plan = node->ss.ps.plan;
	char	   *idxname = get_rel_name(st->indexoid);
	DioNodeInstr *instr = node->ss.ps.instrument;
	RaCounters	total = pf_total_counters(st);
	RaCounters *c = &total;

	if (idxname == NULL)
		idxname = psprintf("%u", st->indexoid);
	if (es->format == EXPLAIN_FORMAT_TEXT)
		pf_explain_title(st, es, idxname);
	else
		ExplainPropertyText("Index Name", idxname, es);

	pf_explain_qual(st->index_only ? (List *) linitial(((CustomScan *) plan)->custom_exprs) :
					st->indexqualorig, "Index Cond", plan, ancestors, es);
	if (st->indexqualorig != NIL)
		pf_explain_count("Rows Removed by Index Recheck", instr, true, es);
	pf_explain_qual(st->filterqual, "Filter", plan, ancestors, es);
	if (st->filterqual != NIL)
		pf_explain_count("Rows Removed by Filter", instr, false, es);

	if (!es->analyze)
		return;

	if (st->index_only && instr != NULL)
		ExplainPropertyFloat("Heap Fetches", NULL, instr->ntuples2, 0, es);
	ExplainPropertyUInteger("Index Searches", NULL, c->nsearches, es);

	/* a leader that ran no part of a parallel scan began no stream */
	if (st->ra.capacity == 0 && c->blocks > 0)
		st->ra.capacity = ra_stream_capacity(st->css.ss.ss_currentRelation);

	pf_explain_io(st, c, es);
	if (es->format == EXPLAIN_FORMAT_TEXT)
		pf_explain_heap_text(st, c, es);
	else
		pf_explain_heap_props(st, c, es);
}

/* ======================================================================
 * Setup
 * ====================================================================== */

void
dio_prefetch_init(void)
{
	RegisterXactCallback(pf_par_xact_callback, NULL);

	DefineCustomBoolVariable("pg_dio.enable_index_prefetch",
							 "Enables PrefetchIndexScan in place of forward index scans and index-only scans of heap tables.",
							 NULL,
							 &pg_dio_enable_index_prefetch,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_dio.index_prefetch_advice",
							 "Enables PrefetchIndexScan's own heap reads, advised ahead, instead of a read stream.",
							 "The kernel reads the heap blocks ahead into the OS page cache (posix_fadvise), and the scan reads each block itself when it gets there.",
							 &pg_dio_index_prefetch_advice,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_dio.index_direct_read",
							 "Enables PrefetchIndexScan's direct heap reads.",
							 "The heap blocks it looks ahead at are read with O_DIRECT when they are all-visible and not in shared buffers (plain SELECTs, with the scan's own reads).",
							 &pg_dio_index_direct_read,
							 false,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_dio.index_prefetch_combine",
							 "Enables PrefetchIndexScan to advise neighbouring heap blocks together.",
							 "With the scan's own reads, it reads the index further ahead and has the kernel read the heap blocks next to one it advises together with it when the scan will want them later.",
							 &pg_dio_index_prefetch_combine,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	RegisterCustomScanMethods(&pf_scan_methods);
	RegisterCustomScanMethods(&pf_only_methods);
}
