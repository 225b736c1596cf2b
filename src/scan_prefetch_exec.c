/*-------------------------------------------------------------------------
 *
 * scan_prefetch_exec.c
 *	  PrefetchIndexScan's rows: the producer that feeds the heap read-ahead
 *	  (scan_readahead.c) TIDs from the index, the consumer that fetches each
 *	  TID's visible tuple from the block the read-ahead holds, index-only
 *	  data, rechecks, and the trailing scan that marks dead index entries.
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
 * Lifetime: the read-ahead holds a pin on the current group's buffer (or its
 * direct image) until the consumer moves to the next group; tuples of plain
 * scans are stored in the scan slot with their own pin.  Index tuple copies
 * live in a memory context of their own (qcxt); the one the slot points to
 * (out_copy) is freed only after the slot is cleared.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_prefetch_exec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/itup.h"
#include "access/relscan.h"
#include "access/visibilitymap.h"
#include "catalog/pg_type_d.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "diag.h"
#include "scan_narrow.h"
#include "scan_prefetch_internal.h"
#include "scan_readahead.h"

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
void
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
	/* under a Limit, neighbours wanted later may never be wanted */
	setup.combine = pg_dio_index_prefetch_combine && !st->bounded;
	/* plain SELECTs only: never index-only, whose blocks are not all-visible */
	setup.direct = pg_dio_index_direct_read && st->plain_select;
	setup.copies = st->index_only;
	setup.feed = st->feed;
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
TupleTableSlot *
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
bool
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
