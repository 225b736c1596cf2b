/*-------------------------------------------------------------------------
 *
 * scan_prefetch.c
 *	  PrefetchIndexScan and PrefetchIndexOnlyScan: forward index scans (and
 *	  index-only scans) whose heap fetches are fed to a core read stream ahead
 *	  of the consumer, so heap reads run concurrently while results still come
 *	  out in index order.
 *
 * How it works.  The index is read ahead of the consumer into a queue of
 * TIDs.  The read stream's callback pulls TIDs from the index (appending them
 * to the queue) and hands the stream one heap block per run of consecutive
 * TIDs on the same block ("group"); the consumer walks the queue in the same
 * order, takes one buffer from the stream at each group start and fetches each
 * TID's visible tuple from it (following HOT chains, as an index scan does).
 * For index-only scans the visibility map decides once per queued TID, when it
 * is queued: all-visible ones never go to the stream and are returned from a
 * copy of their index tuple.
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
 * Look-ahead: the stream asks for more blocks only as its own distance grows
 * (it starts at one block and doubles when it has to wait for I/O), so an
 * ORDER BY ... LIMIT or a nestloop inner does not over-read.  Runs of TIDs
 * that need no block (all-visible, index-only) are capped per callback call;
 * at the cap the callback ends the stream, the consumer drains the queue,
 * resets the stream and doubles the cap.  Same-block TIDs are bounded by the
 * page.  A hard cap on queued TIDs bounds memory.  In self-read mode, once
 * it looks ahead, the index is read further ahead than the look-ahead (a
 * bounded multiple of the TIDs looked at) so that neighbouring heap blocks
 * the scan will want are advised together (pf_deep_fill, pf_advise); the
 * consumer never takes a TID the look-ahead has not looked at.
 *
 * Lifetime: the consumer holds a pin on the current group's buffer until it
 * moves to the next group; tuples of plain scans are stored in the scan slot
 * with their own pin.  Index tuple copies live in a memory context of their
 * own; the one the slot points to is freed only after the slot is cleared.
 * Rescan resets the stream first, then the queue, runtime keys and the index
 * scan.  On ERROR, pins go with the resource owner and memory with the query.
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
#include "access/xlog.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type_d.h"
#include "common/hashfn.h"
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
#include "portability/instr_time.h"
#include "access/parallel.h"
#include "storage/aio.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/predicate.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/smgr.h"
#include "storage/read_stream.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/spccache.h"
#include "utils/syscache.h"

#include "compat.h"
#include "diag.h"
#include "engine.h"
#include "safety.h"
#include "scan_narrow.h"
#include "scan_prefetch.h"

#define PF_SCAN_NAME		"PrefetchIndexScan"
#define PF_ONLY_NAME		"PrefetchIndexOnlyScan"

/* TIDs needing no block that one callback call may queue, at first and at most */
#define PF_MIN_RUN			32
#define PF_MAX_RUN			8192
/* hard cap on queued TIDs (memory) */
#define PF_MAX_QUEUED		262144
/*
 * TIDs read from the index ahead of the look-ahead: at most, per TID looked
 * at, and the memory each may take: a queue entry (16 bytes) and an entry of
 * st->ahead (12 bytes), each in a table that doubles as it grows.  Bounded
 * by hash_mem (work_mem x hash_mem_multiplier) as a hash table of core's:
 * the defaults (8MB) allow PF_DEEP_MAX.
 */
#define PF_DEEP_MAX			131072
#define PF_DEEP_MULT		16
#define PF_DEEP_BYTES		56
/* no direct reads of relations larger than this (pf_direct_block's bitmap) */
#define PF_DIRECT_MAX_BLOCKS	((BlockNumber) 64 * 1024 * 1024)
/* a call of read_stream_next_buffer() longer than this counts as a wait */
#define PF_WAIT_US			20

/* queue entry flags */
#define PF_NEED_HEAP		0x01	/* the heap block must be read */
#define PF_GROUP_START		0x02	/* first TID of a stream block */
#define PF_RECHECK			0x04	/* the index said: recheck the quals */
#define PF_HEAP_FORMAT		0x08	/* copy is a HeapTuple (xs_hitup) */
#define PF_IN_SCAN			0x10	/* no copy: the data is the index scan's */
#define PF_SYNC				0x20	/* group start read by the consumer itself */
#define PF_OS_CACHED		0x40	/* ... because the OS page cache has it */
#define PF_ADVISED			0x80	/* ... after advising the kernel to read it */
#define PF_DIRECT			0x100	/* ... its direct read submitted (pf_direct_block) */
#define PF_EARLY			0x200	/* ... advised with a neighbour's read earlier */
#define PF_COUNTED			0x400	/* counted in st->ahead (pf_deep_fill) */

/* PfScanState.latest: the TID last read from the index is ... */
#define PF_LATEST_NONE		0		/* ... not one the consumer will fetch */
#define PF_LATEST_QUEUED	1		/* ... the last one queued */
#define PF_LATEST_CUR		2		/* ... st->cur, not queued (direct path) */

typedef struct PfEntry
{
	ItemPointerData tid;
	uint16		flags;
	void	   *copy;			/* index-only: copy of the index data */
} PfEntry;

typedef struct PfCounters
{
	uint64		tids;			/* TIDs read from the index */
	uint64		blocks;			/* heap blocks requested from the stream */
	uint64		blocks_read;	/* of those, read from storage */
	uint64		dist_sum;		/* look-ahead (blocks) summed at each block */
	uint64		waits;
	uint64		wait_us;
	uint64		restarts;		/* stream ended at a cap and was reset */
	uint64		nsearches;		/* parallel workers' index searches */
	uint64		sync_blocks;	/* OS-cached blocks read by the consumer */
	uint64		advised;		/* blocks posix_fadvise'd ahead */
	uint64		direct;			/* blocks read and used directly */
	uint64		direct_fallback;	/* direct reads given to the buffer manager */
	uint64		combined;		/* of those, advised with a neighbour (pf_advise) */
	uint64		io_inprog;		/* selfread: advised reads in flight, summed at each read */
	uint64		dist_max;		/* keep last: maximum, not a sum */
} PfCounters;

#define PF_NCOUNTERS	(sizeof(PfCounters) / sizeof(uint64))

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
	pg_atomic_uint64 v[PF_NCOUNTERS];
} PfParEntry;

static PfParEntry *pf_par = NULL;	/* [MaxBackends + aux][PF_PAR_ENTRIES] */

/*
 * Heap blocks of the TIDs queued beyond the look-ahead (pf_deep_fill), with
 * how many queued TIDs want each, and whether it was advised already as part
 * of a neighbour's read (pf_advise).
 */
typedef struct PfAhead
{
	BlockNumber blk;
	uint32		count;
	bool		early;
	char		status;
} PfAhead;

#define SH_PREFIX		pfahead
#define SH_ELEMENT_TYPE	PfAhead
#define SH_KEY_TYPE		BlockNumber
#define SH_KEY			blk
#define SH_HASH_KEY(tb, key) murmurhash32(key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

typedef struct PfScanState
{
	CustomScanState css;

	/* from the plan */
	Oid			indexoid;
	bool		index_only;
	uint32		capacity;		/* most blocks the stream may look ahead */
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
	Buffer		vmbuf;
	void	   *out_copy;		/* the copy the scan slot points into */

	/*
	 * The TID queue: entries [head, tail) in a ring of qsize (a power of two);
	 * the callback has looked at [head, examined) (group starts marked).
	 */
	PfEntry    *q;
	PfEntry		cur;			/* the entry the consumer works on */
	uint32		qsize;
	uint64		head;
	uint64		examined;
	uint64		tail;
	MemoryContext qcxt;
	int			run_cap;
	bool		index_done;
	bool		stream_ended;	/* the callback returned InvalidBlockNumber */
	BlockNumber last_blk;		/* block of the last group start */
	int			groups_ahead;	/* group starts handed out, not consumed */
	uint8		latest;			/* where the TID last read from the index is */
	uint64		scan_tids;		/* TIDs read from the index since (re)start */

	/* the trailing scan that marks dead index entries (pf_trail_kill) */
	IndexScanDesc trail;
	bool		trail_done;		/* it reached the end of the index range */
	uint64		trail_tids;		/* TIDs it has read */

	/* heap side */
	bool		started;
	bool		prefetch;		/* MVCC snapshot: read ahead */
	bool		queued;			/* prefetch or index-only: TIDs are queued */
	bool		advice;			/* also posix_fadvise each block handed out */
	bool		selfread;		/* advise ahead, read every block ourselves */
	bool		combine;		/* selfread: read the index deeper (pf_deep_fill) */
	uint32		deep_max;		/* ... by at most this many TIDs */
	Size		deep_copy_max;	/* ... and index-only copies of at most this */
	Size		copy_bytes;		/* memory of the copies queued (pf_free_copy) */
	int			self_ahead;		/* selfread: group starts queued, not consumed */
	int			self_ios;		/* selfread: of those, advised */
	int			self_dist;		/* selfread: advised blocks wanted ahead */
	int			self_max;		/* selfread: its maximum, the I/O concurrency */
	pfahead_hash *ahead;		/* selfread: blocks queued beyond the look-ahead */
	bool		topup_pending;	/* selfread: look ahead at the next call */
	DioStream  *oscheck;		/* pg_dio stream, for its fds: cachestat */
	bool		engine_off;		/* no pg_dio stream to be had */
	bool		oscheck_off;	/* not available (or not wanted) */
	int			os_skip;		/* blocks to pass before the next check */
	int			os_checked;		/* checks in the current window of 32 */
	int			os_found;		/* ... that found the block cached */
	bool		os_sparse;		/* few found lately: check every 16th */
	bool		os_dense;		/* nearly all found: check every 8th */
	ReadStream *stream;
	DioIOStats	iostats;		/* the stream's, for EXPLAIN (IO), PostgreSQL 19 */

	/*
	 * Direct reads (pf_direct_block): the consumer's current group is either
	 * cur_buf or, while have_run, the engine's image of block dblk, which
	 * stays held until the consumer moves on (the scan slot is cleared first).
	 */
	bool		direct;			/* may read blocks directly */
	DioStream  *dstream;		/* the engine stream, begun at the first one */
	XLogRecPtr	lsn_bound;		/* newest usable image LSN (recovery only) */
	DioRun		run;
	bool		have_run;
	BlockNumber dblk;
	uint64	   *dseen;			/* blocks read directly so far, a bit each */
	BlockNumber dseen_nblocks;
	uint64		dfirst;			/* direct candidates seen the first time */
	uint64		dagain;			/* ... and again */

	Buffer		cur_buf;		/* buffer of the consumer's current group */
	Buffer		pending_buf;	/* buffer fetched for the next group start */
	HeapTupleData tup;

	/* instrumentation */
	PfParEntry *par;			/* leader: where workers add their counters */
	bool		timing;
	uint64		cb_us;			/* time spent in the callback's index reads */
	uint64		cb_reads;		/* blocks read by the callback (index, VM) */
	PfCounters	c;
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
 * Executor: the TID queue
 * ====================================================================== */

static inline PfEntry *
pf_entry(PfScanState *st, uint64 pos)
{
	return &st->q[pos & (st->qsize - 1)];
}

/* Room for one more entry at the tail; grows the ring when full. */
static PfEntry *
pf_push(PfScanState *st)
{
	if (st->tail - st->head == st->qsize)
	{
		uint32		nsize = st->qsize * 2;
		PfEntry    *nq = MemoryContextAlloc(GetMemoryChunkContext(st->q),
											sizeof(PfEntry) * nsize);
		uint64		n = st->tail - st->head;

		for (uint64 i = 0; i < n; i++)
			nq[i] = *pf_entry(st, st->head + i);
		pfree(st->q);
		st->q = nq;
		st->qsize = nsize;
		st->examined -= st->head;
		st->head = 0;
		st->tail = n;
	}
	return pf_entry(st, st->tail++);
}

static inline uint64
pf_blocks_read_now(void)
{
	return pgBufferUsage.shared_blks_read + pgBufferUsage.local_blks_read;
}

/* The next TID from the index, NULL at its end. */
static ItemPointer
pf_read_tid(PfScanState *st)
{
	ItemPointer tid = index_getnext_tid(st->scan, ForwardScanDirection);

	st->latest = PF_LATEST_NONE;
	if (tid == NULL)
		st->index_done = true;
	else
	{
		st->c.tids++;
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
						&st->vmbuf);
}

/* Queue the TID just read (index-only: with a copy of its index data). */
static PfEntry *
pf_queue_tid(PfScanState *st, ItemPointer tid, bool need_heap)
{
	IndexScanDesc scan = st->scan;
	PfEntry    *e = pf_push(st);

	st->latest = PF_LATEST_QUEUED;
	e->tid = *tid;
	e->flags = (scan->xs_recheck ? PF_RECHECK : 0) | (need_heap ? PF_NEED_HEAP : 0);
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
		st->copy_bytes += GetMemoryChunkSpace(e->copy);
	}
	return e;
}

/* Free an index-only copy of index data made by pf_queue_tid. */
static inline void
pf_free_copy(PfScanState *st, void *copy)
{
	st->copy_bytes -= GetMemoryChunkSpace(copy);
	pfree(copy);
}

/* Read the next TID from the index and queue it; NULL at the end. */
static PfEntry *
pf_fetch(PfScanState *st)
{
	ItemPointer tid = pf_read_tid(st);

	if (tid == NULL)
		return NULL;
	return pf_queue_tid(st, tid, pf_needs_heap(st, tid));
}

/*
 * Is the heap block in the OS page cache?  Asked with cachestat(2) on the
 * segment through a pg_dio stream's fds (opened lazily, closed at the end of
 * the scan, cleaned up by the resource owner on error).  False whenever it
 * cannot be known cheaply: no cachestat, temporary relation, pg_dio not
 * preloaded, no stream slot, pg_dio.os_cache_check off.
 */
static DioStream *
pf_engine_stream(PfScanState *st)
{
	Relation	heap = st->scan->heapRelation;

	if (st->oscheck == NULL && !st->engine_off)
	{
		if (!dio_stats_available() || RelationUsesLocalBuffers(heap) ||
			!dio_stream_slot_free())
			st->engine_off = true;
		else
			st->oscheck = dio_stream_begin_oscheck(heap);
	}
	return st->oscheck;
}

static bool
pf_block_os_cached(PfScanState *st, BlockNumber blk)
{
	int			n;

	if (st->oscheck_off)
		return false;
	if (!pg_dio_os_cache_check || !dio_cachestat_available() ||
		pf_engine_stream(st) == NULL)
	{
		st->oscheck_off = true;
		return false;
	}
	/*
	 * A cold scan finds little: then ask for every 16th block only (and send
	 * the others to the stream).  A scan of an OS-cached table finds nearly
	 * everything: then ask for every 8th only and take the others as cached
	 * (one that is not is read synchronously, as core's index scan reads
	 * every block).  Judged over windows of 32 checks.
	 */
	if (st->os_skip > 0)
	{
		st->os_skip--;
		return st->os_dense;
	}
	n = dio_stream_os_cached(st->oscheck, blk, 1);
	if (n < 0 || !dio_cachestat_available())
	{
		st->oscheck_off = true;
		return false;
	}
	st->os_found += (n > 0);
	if (++st->os_checked == 32)
	{
		st->os_sparse = st->os_found * 4 < st->os_checked;
		st->os_dense = st->os_found * 8 >= st->os_checked * 7;
		st->os_checked = st->os_found = 0;
	}
	if (st->os_sparse && n == 0)
		st->os_skip = 15;
	else if (st->os_dense && n > 0)
		st->os_skip = 7;
	return n > 0;
}

/*
 * Read heap block 'blk' directly, bypassing shared buffers and the OS page
 * cache: submit an O_DIRECT read of it to pg_dio's engine if the scan may
 * (st->direct, see pf_start), the visibility map says all-visible and the
 * block is not in shared buffers -- DirectSeqScan's rules 1-3
 * (docs/design.md): a block not resident at submission has
 * on disk every change our snapshot can see.  The consumer takes the image in
 * queue order (pf_direct_take) and uses it only if it passes rule 4, so that
 * every normal tuple on it is visible to us; otherwise it reads the block
 * through the buffer manager.  False (read it buffered) also when the engine
 * has no free request: at most the look-ahead's I/Os plus the held one.
 *
 * A block read directly is not in shared buffers afterwards, so a scan that
 * comes back to it would read it from the device again where a buffered
 * scan finds it there.  So each block is read directly at most once per scan
 * (st->dseen), later visits read it through the buffer manager, and once a
 * quarter as many direct candidates are such visits as first ones (a range
 * whose rows share few blocks; judged from 64 on) the scan reads no more
 * blocks directly: at most about 1.25 times the reads of a buffered scan.  (The bench's 1%
 * random range comes back to ~10% of its blocks.)
 */
static bool
pf_direct_block(PfScanState *st, BlockNumber blk)
{
	Relation	heap = st->scan->heapRelation;
	uint64		bit;

	if (!st->direct)
		return false;
	if (st->dseen == NULL)
	{
		BlockNumber nblocks = RelationGetNumberOfBlocks(heap);

		if (nblocks > PF_DIRECT_MAX_BLOCKS || !dio_stream_slot_free())
		{
			st->direct = false;
			return false;
		}
		st->dseen_nblocks = nblocks;
		st->dseen = MemoryContextAllocZero(GetMemoryChunkContext(st->q),
										   sizeof(uint64) * (nblocks / 64 + 1));
	}
	if (blk >= st->dseen_nblocks)
		return false;			/* added since: left to the buffer manager */
	bit = UINT64CONST(1) << (blk % 64);
	if (st->dseen[blk / 64] & bit)
	{
		if (++st->dagain * 4 > st->dfirst && st->dfirst + st->dagain >= 64)
			st->direct = false;
		return false;
	}
	if (!VM_ALL_VISIBLE(heap, blk, &st->vmbuf) || dio_block_resident(heap, blk))
		return false;
	if (st->dstream == NULL)
	{
		if (!dio_stream_slot_free())
		{
			st->direct = false;
			return false;
		}
		st->dstream = dio_stream_begin(heap, MAIN_FORKNUM, st->self_max + 1);
	}
	if (!dio_stream_can_submit(st->dstream))
		return false;
	st->dseen[blk / 64] |= bit;
	st->dfirst++;
	dio_stream_submit(st->dstream, blk, 1);
	return true;
}

/* Give the held direct image back (the scan slot may point into it). */
static void
pf_direct_release(PfScanState *st)
{
	ExecClearTuple(st->css.ss.ss_ScanTupleSlot);
	dio_stream_release(st->dstream, &st->run);
	st->have_run = false;
}

/*
 * The consumer arrived at a group start whose block pf_direct_block
 * submitted: take the image (waiting for it) and keep it as the current
 * group if it is usable.  False if the block must be read through the buffer
 * manager after all (I/O fault or failed check: counted, never an ERROR).
 */
static bool
pf_direct_take(PfScanState *st, BlockNumber blk)
{
	Relation	heap = st->scan->heapRelation;

	if (!dio_stream_next(st->dstream, &st->run) || st->run.first != blk)
		elog(ERROR, "direct read of heap block %u out of step", blk);
	st->have_run = true;
	if (st->run.nvalid < 1 ||
		!dio_direct_image_usable(heap, (Page) st->run.data, blk, st->lsn_bound))
	{
		dio_stats_count_blocks(0, st->run.nvalid < 1 ? st->run.reason : DIO_FB_VERIFY, 1);
		st->c.direct_fallback++;
		pf_direct_release(st);
		return false;
	}
	dio_stats_count_blocks(1, DIO_FB_VERIFY, 0);
	st->c.direct++;
	if (BufferIsValid(st->cur_buf))
		ReleaseBuffer(st->cur_buf);
	st->cur_buf = InvalidBuffer;
	st->dblk = blk;
	return true;
}

/*
 * The visible tuple of 'tid' on the held direct image, into st->tup: what
 * heap_hot_search_buffer finds on an all-visible page, where every normal
 * tuple is visible, so the first one the chain reaches is it: the TID's own
 * tuple, or the one its redirect points to.  A heap-only tuple reached
 * without a redirect is not one an index entry points to (its slot was
 * reused): nothing.
 */
static bool
pf_direct_fetch(PfScanState *st, ItemPointer tid)
{
	Page		page = (Page) st->run.data;
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	bool		redirected = false;
	ItemId		lp;
	HeapTupleHeader htup;

	if (off < FirstOffsetNumber || off > maxoff)
		return false;
	lp = PageGetItemId(page, off);
	if (ItemIdIsRedirected(lp))
	{
		off = ItemIdGetRedirect(lp);
		redirected = true;
		if (off < FirstOffsetNumber || off > maxoff)
			return false;
		lp = PageGetItemId(page, off);
	}
	if (!ItemIdIsNormal(lp))
		return false;
	htup = (HeapTupleHeader) PageGetItem(page, lp);
	if (!redirected && HeapTupleHeaderIsHeapOnly(htup))
		return false;
	st->tup.t_data = htup;
	st->tup.t_len = ItemIdGetLength(lp);
	ItemPointerSet(&st->tup.t_self, st->dblk, off);
	st->tup.t_tableOid = RelationGetRelid(st->scan->heapRelation);
	return true;
}

/*
 * Self-read mode: read the index further ahead than the look-ahead, so that
 * pf_advise can see which blocks near the one it advises the scan will want
 * later and have the kernel read them with it, in one request, as a bitmap
 * heap scan's read stream combines neighbouring blocks.  At most
 * PF_DEEP_MULT TIDs ahead per TID looked at so far, so the index is read
 * ahead of demand by a bounded factor (a LIMIT stops it early), and at most
 * st->deep_max (hash_mem).  The heap blocks still go to the kernel only as
 * the look-ahead reaches them (or a neighbour of theirs).
 *
 * Only while the scan looks ahead (it has had to read), has advised blocks
 * it has not reached yet and finds few blocks in the OS page cache: a range
 * the OS page cache holds gains nothing from it.  Not while the scan may
 * read blocks directly (pg_dio.index_direct_read): those would be advised as
 * neighbours instead.
 */
static void
pf_deep_fill(PfScanState *st)
{
	uint64		looked;
	uint64		want;

	if (st->self_dist <= 1 || st->self_ios == 0 || st->index_done ||
		st->os_dense || st->direct || !st->combine)
		return;
	if (st->ahead == NULL)
		st->ahead = pfahead_create(GetMemoryChunkContext(st->q), 1024, NULL);
	looked = st->c.tids - (st->tail - st->examined);
	want = Min(looked * PF_DEEP_MULT, st->deep_max);
	while (st->tail - st->examined < want && st->tail - st->head < PF_MAX_QUEUED)
	{
		PfEntry    *e;

		CHECK_FOR_INTERRUPTS();
		/* index-only: the copies of index data count against hash_mem too */
		if (st->copy_bytes > st->deep_copy_max)
			break;
		if ((e = pf_fetch(st)) == NULL)
			break;
		/* one more queued TID wants its block (pf_ahead_forget: one fewer) */
		if (e->flags & PF_NEED_HEAP)
		{
			bool		found;
			PfAhead    *a = pfahead_insert(st->ahead,
										   ItemPointerGetBlockNumber(&e->tid), &found);

			if (!found)
			{
				a->count = 0;
				a->early = false;
			}
			a->count++;
			e->flags |= PF_COUNTED;
		}
	}
}

/*
 * The look-ahead passes a TID counted in st->ahead: one fewer wants its
 * block.  True if the block was advised already with a neighbour's read.
 */
static bool
pf_ahead_forget(PfScanState *st, BlockNumber blk)
{
	PfAhead    *a = pfahead_lookup(st->ahead, blk);
	bool		early;

	if (unlikely(a == NULL || a->count == 0))
		elog(ERROR, "index prefetch lost count of heap block %u", blk);
	early = a->early;
	if (--a->count == 0)
		pfahead_delete_item(st->ahead, a);
	return early;
}

/* Is 'blk' wanted by a TID queued beyond the look-ahead and not advised yet? */
static bool
pf_ahead_take(PfScanState *st, BlockNumber blk)
{
	PfAhead    *a = pfahead_lookup(st->ahead, blk);

	if (a == NULL || a->early ||
		dio_block_resident(st->scan->heapRelation, blk))
		return false;
	a->early = true;
	return true;
}

/*
 * Advise the kernel to read heap block 'blk' (self-read mode) unless it is
 * in shared buffers; false if it is.  With TIDs queued beyond the look-ahead
 * (pf_deep_fill), the blocks right before and after it that they want and
 * that are not in shared buffers are advised with it, up to io_combine_limit
 * blocks in one posix_fadvise: one larger request to the device instead of
 * several (fio, this VM, random reads at depth 16: 8 kB 58k IOPS, 16 kB
 * 52k).  Those blocks are read only because the scan will read them anyway;
 * when the look-ahead reaches them they are not advised again (PF_EARLY).
 */
static bool
pf_advise(PfScanState *st, BlockNumber blk)
{
	Relation	heap = st->scan->heapRelation;
	BlockNumber lo = blk;
	BlockNumber hi = blk;
	int			limit = Max(io_combine_limit, 1);
	PfAhead    *a;

	if (st->ahead == NULL || (io_direct_flags & IO_DIRECT_DATA))
	{
		PrefetchBufferResult pr = PrefetchBuffer(heap, MAIN_FORKNUM, blk);

		if (BufferIsValid(pr.recent_buffer))
			return false;
		if (pr.initiated_io)
			st->c.advised++;
		return true;
	}
	if (dio_block_resident(heap, blk))
		return false;
	while (hi - lo + 1 < (BlockNumber) limit && hi + 1 < MaxBlockNumber &&
		   pf_ahead_take(st, hi + 1))
		hi++;
	while (hi - lo + 1 < (BlockNumber) limit && lo > 0 &&
		   pf_ahead_take(st, lo - 1))
		lo--;
	if ((a = pfahead_lookup(st->ahead, blk)) != NULL)
		a->early = true;
	(void) smgrprefetch(RelationGetSmgr(heap), MAIN_FORKNUM, lo, hi - lo + 1);
	st->c.advised += hi - lo + 1;
	st->c.combined += hi - lo;
	return true;
}

/*
 * Self-read mode: no block goes to a read stream.  Once the scan looks ahead
 * (it had to read), each new block is advised unless the OS page cache has
 * it, and the consumer reads it itself when it gets there, as core's read
 * stream does with io_method=sync: the kernel reads ahead, and no I/O worker
 * round trip is paid per block.  As a read stream counts I/Os against the
 * I/O concurrency and blocks against its capacity, only a block that needs a
 * read (advised, or read directly) counts against the look-ahead wanted.
 * True when the look-ahead is full.
 */
static bool
pf_self_block(PfScanState *st, PfEntry *e, BlockNumber blk, bool early)
{
	e->flags |= PF_GROUP_START | PF_SYNC;
	st->last_blk = blk;
	st->self_ahead++;
	if (st->self_dist == 1)
		return true;
	if (early)
		e->flags |= PF_EARLY;	/* on its way with a neighbour */
	else if (pf_block_os_cached(st, blk))
		e->flags |= PF_OS_CACHED;
	else if (pf_direct_block(st, blk))
	{
		e->flags |= PF_DIRECT;
		st->self_ios++;
	}
	else if (pf_advise(st, blk))
	{
		/* posix_fadvise(WILLNEED), unless the block is in shared buffers */
		e->flags |= PF_ADVISED;
		st->self_ios++;
	}
	return st->self_ios >= st->self_dist || st->self_ahead >= (int) st->capacity;
}

/*
 * The read stream's callback: queue TIDs until one needs a heap block other
 * than the last one handed out, and return that block.  Ends the stream at
 * the end of the index, at the cap on TIDs needing no block (index-only), at
 * the hard cap, and after every TID without MVCC (no read-ahead).
 */
static BlockNumber
pf_look_ahead(PfScanState *st)
{
	BlockNumber result = InvalidBlockNumber;
	int			run = 0;

	if (st->selfread)
		pf_deep_fill(st);
	for (;;)
	{
		PfEntry    *e;
		BlockNumber blk;
		bool		early = false;

		if (st->examined < st->tail)
			e = pf_entry(st, st->examined++);	/* queued by the consumer */
		else
		{
			if (st->index_done || run >= st->run_cap ||
				st->tail - st->head >= PF_MAX_QUEUED ||
				(!st->prefetch && st->tail > st->head))
				break;
			e = pf_fetch(st);
			if (e == NULL)
				break;
			st->examined++;
		}
		if (!(e->flags & PF_NEED_HEAP))
		{
			run++;
			continue;
		}
		blk = ItemPointerGetBlockNumber(&e->tid);
		if (e->flags & PF_COUNTED)
		{
			e->flags &= ~PF_COUNTED;
			early = pf_ahead_forget(st, blk);
		}
		if (blk == st->last_blk)
			continue;			/* same block as the group before it */

		if (st->selfread)
		{
			if (pf_self_block(st, e, blk, early))
				break;
			continue;
		}

		/*
		 * Once the stream looks ahead (it had to wait for I/O), a block that
		 * is in the OS page cache is read by the consumer itself, as core's
		 * index scan reads it: a round trip to an I/O worker would cost more
		 * than the copy from the page cache.
		 */
		if (st->groups_ahead > 1 && pf_block_os_cached(st, blk))
		{
			e->flags |= PF_GROUP_START | PF_SYNC | PF_OS_CACHED;
			st->last_blk = blk;
			run++;
			continue;
		}
		e->flags |= PF_GROUP_START;
		st->last_blk = blk;
		st->groups_ahead++;
		/*
		 * With io_method=worker each read is a round trip to an I/O worker;
		 * telling the kernel right away (posix_fadvise through core's
		 * PrefetchBuffer, which skips blocks in shared buffers) lets it read
		 * while the workers are busy.  Only once the stream looks ahead,
		 * which it does only after it had to wait for I/O.
		 */
		if (st->advice && st->groups_ahead > 1 &&
			PrefetchBuffer(st->scan->heapRelation, MAIN_FORKNUM, blk).initiated_io)
			st->c.advised++;
		result = blk;
		break;
	}
	/* direct reads go to the kernel now, not when the consumer gets there */
	if (st->dstream != NULL)
		dio_submit_pending();
	return result;
}

static BlockNumber
pf_stream_next_block(ReadStream *stream, void *private, void *per_buffer_data)
{
	PfScanState *st = (PfScanState *) private;
	BlockNumber result;
	uint64		reads0 = pf_blocks_read_now();
	instr_time	t0;

	if (st->timing)
		INSTR_TIME_SET_CURRENT(t0);

	result = pf_look_ahead(st);
	if (result == InvalidBlockNumber)
	{
		st->stream_ended = true;
		st->last_blk = InvalidBlockNumber;
	}

	st->cb_reads += pf_blocks_read_now() - reads0;
	if (st->timing)
	{
		instr_time	t1;

		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		st->cb_us += INSTR_TIME_GET_MICROSEC(t1);
	}
	return result;
}

/* A wait for a block of us microseconds counts when longer than PF_WAIT_US. */
static inline void
pf_count_wait(PfScanState *st, int64 us)
{
	if (us > PF_WAIT_US)
	{
		st->c.waits++;
		st->c.wait_us += us;
	}
}

/*
 * read_stream_next_buffer() with the accounting: blocks it read (minus the
 * index and VM blocks our callback read meanwhile) and, with timing, how
 * long it waited.
 */
static Buffer
pf_stream_buffer(PfScanState *st)
{
	uint64		reads0 = pf_blocks_read_now();
	uint64		cb_reads0 = st->cb_reads;
	uint64		cb_us0 = st->cb_us;
	instr_time	t0;
	Buffer		buf;

	if (st->timing)
		INSTR_TIME_SET_CURRENT(t0);
	buf = read_stream_next_buffer(st->stream, NULL);
	if (st->timing)
	{
		instr_time	t1;

		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		pf_count_wait(st, (int64) INSTR_TIME_GET_MICROSEC(t1) - (int64) (st->cb_us - cb_us0));
	}
	st->c.blocks_read += (pf_blocks_read_now() - reads0) - (st->cb_reads - cb_reads0);
	return buf;
}

static void pf_read_self(PfScanState *st, PfEntry *e, BlockNumber blk, bool top_up);
static void pf_trail_end(PfScanState *st);

/*
 * Self-read mode: top the look-ahead up after every block that leaves room
 * for another I/O, so that it stays at the I/O concurrency.  Not while the
 * look-ahead is one: then the next TID is taken when it is wanted.
 */
static void
pf_self_top_up(PfScanState *st)
{
	if (st->self_dist > 1 && st->self_ios < st->self_dist &&
		(!st->index_done || st->examined < st->tail))
		(void) pf_look_ahead(st);
}

/*
 * The queue was empty and TIDs were queued (or are wanted): have them looked
 * at, by our look-ahead in self-read mode, else by the stream's callback as
 * the stream is asked for its next buffer (which belongs to the first group
 * start among them).
 */
static void
pf_feed(PfScanState *st)
{
	Buffer		buf;

	if (st->selfread)
	{
		(void) pf_look_ahead(st);
		return;
	}
	if (st->stream_ended)
	{
		read_stream_reset(st->stream);
		st->stream_ended = false;
		st->run_cap = Min(st->run_cap * 2, PF_MAX_RUN);
		st->c.restarts++;
	}
	buf = pf_stream_buffer(st);
	if (BufferIsValid(buf))
		st->pending_buf = buf;
}

/*
 * The consumer arrived at the heap page of a group start (st->cur_buf):
 * prune it opportunistically, as core's index fetch does on each new page,
 * so that an update-heavy table gets the same HOT cleanup from our scans as
 * from core's.  The prune needs a cleanup lock: while the read stream still
 * pins the page for a later group it is skipped, as core's is whenever
 * another backend pins the page.
 */
static inline void
pf_arrive(PfScanState *st)
{
	dio_heap_page_prune_opt(st->scan->heapRelation, st->cur_buf, &st->vmbuf,
							dio_scan_read_only(&st->css.ss));
}

/*
 * Self-read mode while not looking ahead: the TID just read from the index
 * (which needs its heap block) is the consumer's next entry, with no queue
 * entry and no copy of its index data (PF_IN_SCAN), and its block is read
 * unless it is the current one.  With !top_up, a look-ahead the read calls
 * for waits for the next call (topup_pending): it would read the index on,
 * past the data an index-only scan is about to return.
 */
static pg_attribute_always_inline PfEntry *
pf_current_entry(PfScanState *st, ItemPointer tid, bool top_up)
{
	BlockNumber blk = ItemPointerGetBlockNumber(tid);

	st->latest = PF_LATEST_CUR;
	st->cur.tid = *tid;
	st->cur.copy = NULL;
	st->cur.flags = PF_IN_SCAN | PF_NEED_HEAP |
		(st->scan->xs_recheck ? PF_RECHECK : 0);
	if (blk != st->last_blk || !BufferIsValid(st->cur_buf))
	{
		st->cur.flags |= PF_GROUP_START | PF_SYNC;
		st->last_blk = blk;
		st->self_ahead++;
		pf_read_self(st, &st->cur, blk, top_up);
	}
	return &st->cur;
}

/*
 * The next queued TID for the consumer, with st->cur_buf holding its block
 * if it needs one; NULL at the end.  When nothing is queued, the stream is
 * asked for its next buffer, which makes the callback queue more TIDs (the
 * buffer belongs to the first group start among them).  In self-read mode
 * TIDs may be queued beyond what the look-ahead has looked at
 * (pf_deep_fill): the consumer takes none of those before the look-ahead has
 * marked it.
 */
static PfEntry *
pf_next_entry(PfScanState *st)
{
	while (st->selfread && st->head == st->examined && st->head < st->tail)
		pf_feed(st);
	while (st->head == st->tail)
	{
		if (st->index_done)
			return NULL;
		/* nothing queued, so every block handed out has been consumed */
		Assert(st->groups_ahead == 0 && !BufferIsValid(st->pending_buf));

		/*
		 * Self-read mode while not looking ahead (no block needed a read
		 * lately): take the next TID straight from the index, with no queue
		 * entry, and its block unless it is the current one, as core's index
		 * scan does.  The first block that needs a read starts the
		 * look-ahead.  (Index-only scans never get here with nothing queued:
		 * pf_next does this for them.)
		 */
		if (st->selfread && st->self_dist == 1 && !st->index_only)
		{
			ItemPointer tid = pf_read_tid(st);

			if (tid == NULL)
				return NULL;
			return pf_current_entry(st, tid, true);
		}

		pf_feed(st);
	}

	{
		/*
		 * Copy the entry out: taking the next buffer runs the callback, which
		 * may grow (move) the ring.
		 */
		PfEntry    *e = &st->cur;

		*e = *pf_entry(st, st->head++);
		if (e->flags & PF_GROUP_START)
		{
			BlockNumber blk = ItemPointerGetBlockNumber(&e->tid);

			if (e->flags & PF_SYNC)
			{
				pf_read_self(st, e, blk, true);
				return e;
			}
			if (BufferIsValid(st->cur_buf))
				ReleaseBuffer(st->cur_buf);
			st->c.blocks++;
			st->c.dist_sum += st->groups_ahead;
			if ((uint64) st->groups_ahead > st->c.dist_max)
				st->c.dist_max = st->groups_ahead;
			if (BufferIsValid(st->pending_buf))
			{
				st->cur_buf = st->pending_buf;
				st->pending_buf = InvalidBuffer;
			}
			else
				st->cur_buf = pf_stream_buffer(st);
			st->groups_ahead--;
			if (!BufferIsValid(st->cur_buf) || BufferGetBlockNumber(st->cur_buf) != blk)
				elog(ERROR, "index prefetch stream out of step at block %u", blk);
			pf_arrive(st);
		}
		return e;
	}
}

/*
 * The consumer reads a group start's block itself (PF_SYNC), in place of the
 * previous group's buffer: it is in the OS page cache, or self-read mode
 * advised it (or it is the first one).  In
 * self-read mode the look-ahead then doubles if the block had to be read,
 * shrinks by one if it was in shared buffers (as a read stream's distance
 * does), and is topped up.
 */
static void
pf_read_self(PfScanState *st, PfEntry *e, BlockNumber blk, bool top_up)
{
	uint64		reads0 = pf_blocks_read_now();
	uint64		reads;
	instr_time	t0;

	if (st->timing)
		INSTR_TIME_SET_CURRENT(t0);
	if (st->have_run)
		pf_direct_release(st);
	if ((e->flags & PF_DIRECT) && pf_direct_take(st, blk))
		reads = 1;
	else
	{
		st->cur_buf = ReleaseAndReadBuffer(st->cur_buf, st->scan->heapRelation, blk);
		reads = pf_blocks_read_now() - reads0;
		pf_arrive(st);
	}
	st->c.blocks_read += reads;
	if (e->flags & PF_OS_CACHED)
		st->c.sync_blocks++;
	else
	{
		st->c.blocks++;
		if (st->timing && reads > 0)
		{
			instr_time	t1;

			INSTR_TIME_SET_CURRENT(t1);
			INSTR_TIME_SUBTRACT(t1, t0);
			pf_count_wait(st, (int64) INSTR_TIME_GET_MICROSEC(t1));
		}
	}
	if (!st->selfread)
		return;

	if (!(e->flags & PF_OS_CACHED))
	{
		st->c.dist_sum += st->self_ahead;
		if ((uint64) st->self_ahead > st->c.dist_max)
			st->c.dist_max = st->self_ahead;
	}
	if (reads > 0)
		st->c.io_inprog += Max(st->self_ios, 1);
	st->self_ahead--;
	if (e->flags & (PF_ADVISED | PF_DIRECT))
		st->self_ios--;
	if (reads > 0)
		st->self_dist = Min(st->self_dist * 2, st->self_max);
	else if (st->self_dist > 1)
		st->self_dist--;
	if (top_up)
		pf_self_top_up(st);
	else
		st->topup_pending = true;
}

/* Forget everything queued; the stream must have been reset or ended. */
static void
pf_queue_reset(PfScanState *st)
{
	ExecClearTuple(st->css.ss.ss_ScanTupleSlot);
	/* direct reads of forgotten entries: reaped (and the held one given back) */
	if (st->dstream != NULL)
	{
		dio_stream_end(st->dstream);
		st->dstream = NULL;
		st->have_run = false;
	}
	if (BufferIsValid(st->cur_buf))
		ReleaseBuffer(st->cur_buf);
	if (BufferIsValid(st->pending_buf))
		ReleaseBuffer(st->pending_buf);
	st->cur_buf = InvalidBuffer;
	st->pending_buf = InvalidBuffer;
	MemoryContextReset(st->qcxt);
	st->copy_bytes = 0;
	st->out_copy = NULL;
	st->cur.copy = NULL;
	st->head = st->examined = st->tail = 0;
	st->scan_tids = 0;
	pf_trail_end(st);
	st->run_cap = PF_MIN_RUN;
	st->index_done = false;
	st->stream_ended = false;
	st->last_blk = InvalidBlockNumber;
	st->groups_ahead = 0;
	st->latest = PF_LATEST_NONE;
	st->self_ahead = 0;
	st->self_ios = 0;
	st->self_dist = 1;
	st->topup_pending = false;
	if (st->ahead != NULL)
		pfahead_reset(st->ahead);
}

/* ======================================================================
 * Executor: tuples
 * ====================================================================== */

/*
 * Index-only: fill the (index-shaped) virtual scan slot from the entry's copy
 * or, for PF_IN_SCAN, from the index scan itself.
 */
static pg_attribute_always_inline void
pf_store_index_data(PfScanState *st, TupleTableSlot *slot, PfEntry *e)
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

/*
 * The most blocks a read stream begun now on rel may hold pinned ahead of its
 * consumer: PG 19's EXPLAIN calls it the stream's capacity.  PG 18 keeps it
 * in the stream's private state, so it is worked out here from the same
 * inputs: the I/O concurrency of the relation's tablespace, io_combine_limit
 * (the stream keeps one combined read's worth more than max_ios reads), the
 * stream's int16 queue and the buffer manager's pin limit for this backend.
 */
static uint32
pf_stream_capacity(Relation rel)
{
	int			max_ios;
	uint32		cap;

	if (IsCatalogRelation(rel))
		max_ios = effective_io_concurrency;
	else
		max_ios = get_tablespace_io_concurrency(rel->rd_rel->reltablespace);
	max_ios = Min(max_ios, PG_INT16_MAX);

	cap = (uint32) (max_ios + 1) * io_combine_limit;
	cap = Min(cap, (uint32) (PG_INT16_MAX - io_combine_limit));
	cap = Min(cap, RelationUsesLocalBuffers(rel) ? GetLocalPinLimit() : GetPinLimit());
	return Max(cap, 1);
}

static void
pf_start(PfScanState *st)
{
	ScanState  *ss = &st->css.ss;
	EState	   *estate = ss->ps.state;

	st->scan = dio_index_beginscan(ss->ss_currentRelation, st->index,
								   estate->es_snapshot, &st->instr, st->nkeys,
								   dio_scan_read_only(ss));
	if (st->index_only)
		st->scan->xs_want_itup = true;
	if (st->nrtkeys == 0 || st->rtkeys_ready)
		index_rescan(st->scan, st->keys, st->nkeys, NULL, 0);

	st->prefetch = IsMVCCSnapshot(estate->es_snapshot);
	st->queued = st->prefetch || st->index_only;
	if (st->queued)
		st->capacity = pf_stream_capacity(ss->ss_currentRelation);
	st->timing = ss->ps.instrument != NULL && DIO_INSTR_NEED_TIMER(ss->ps.instrument);
	st->advice = pg_dio_index_prefetch_advice && io_method == IOMETHOD_WORKER;

	/*
	 * With the advice (pg_dio.index_prefetch_advice), whatever io_method,
	 * read the heap blocks ourselves after advising them (see
	 * pf_look_ahead): at most the tablespace's I/O concurrency of advised
	 * blocks ahead, as many reads as the stream would have in flight, and at
	 * most the stream's capacity of blocks; then no stream is begun.  (Also
	 * with io_method=io_uring: the kernel reads the advised blocks, and
	 * neighbours combined, ahead; a read stream asks for one block at a time
	 * in index order.)  Not without read-ahead (no MVCC) or I/O concurrency.
	 */
	st->self_max = get_tablespace_io_concurrency(ss->ss_currentRelation->rd_rel->reltablespace);
	st->selfread = pg_dio_index_prefetch_advice &&
		st->prefetch && st->self_max > 0 &&
		!RelationUsesLocalBuffers(ss->ss_currentRelation);
	st->combine = pg_dio_index_prefetch_combine;
	/* index-only scans: half of hash_mem for the TIDs, half for their copies */
	st->deep_max = (uint32) Min(get_hash_memory_limit() / PF_DEEP_BYTES /
								(st->index_only ? 2 : 1), PF_DEEP_MAX);
	st->deep_copy_max = get_hash_memory_limit() / 2;
	st->self_ahead = 0;
	st->self_ios = 0;
	st->self_dist = 1;
	st->topup_pending = false;

	/*
	 * Direct reads of the blocks it looks ahead at, in self-read mode: under
	 * DirectSeqScan's rule 1 (an MVCC snapshot, not SERIALIZABLE, whose
	 * per-tuple predicate locks need the buffer) and for
	 * a plain SELECT (no row marks, no EvalPlanQual).  Not index-only: it
	 * reads only blocks that are not all-visible.
	 */
	st->direct = pg_dio_index_direct_read && st->selfread && st->plain_select &&
		!IsolationIsSerializable() && dio_stats_available();
	/* before any visibility-map bit it governs is read (pf_direct_block) */
	st->lsn_bound = dio_image_lsn_bound(estate->es_snapshot);
	if (st->queued && !st->selfread)
		st->stream = read_stream_begin_relation(READ_STREAM_DEFAULT, NULL,
												ss->ss_currentRelation,
												MAIN_FORKNUM,
												pf_stream_next_block, st, 0);
	if (st->stream)
		dio_read_stream_enable_stats(st->stream, &st->iostats);
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
 * Store st->tup, on the direct image, in a buffer heap tuple slot (the
 * relation's row): such a slot takes tuples of a buffer only, so a copy, and
 * the copy's TID and table go where the slot's readers take them from.
 */
static void
pf_store_direct(PfScanState *st, TupleTableSlot *slot)
{
	ExecForceStoreHeapTuple(&st->tup, slot, false);
	slot->tts_tid = st->tup.t_self;
	slot->tts_tableOid = st->tup.t_tableOid;
}

/* pf_recheck_quals of st->tup, in cur_buf or the direct image, for a narrow scan tuple. */
static bool
pf_recheck_narrow(PfScanState *st)
{
	bool		ok;

	if (st->have_run)
		pf_store_direct(st, st->heapslot);
	else
		ExecStoreBufferHeapTuple(&st->tup, st->heapslot, st->cur_buf);
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
static PfEntry *
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
		st->cur.tid = *tid;
		st->cur.flags = PF_IN_SCAN;
		st->cur.copy = NULL;
		pf_store_index_data(st, slot, &st->cur);
		if (!st->scan->xs_recheck || pf_recheck_quals(st, slot))
			*result = slot;
		else
			*again = true;
		return NULL;
	}
	if (st->selfread && st->self_dist == 1)
		return pf_current_entry(st, tid, false);
	pf_queue_tid(st, tid, true);
	pf_feed(st);
	return NULL;
}

/*
 * Fetch the tuple of e's TID visible to the scan from its heap block (the
 * held direct image or cur_buf) into st->tup; e->tid becomes the tuple's own
 * TID, which may be further down its HOT chain.  False if none is visible.
 */
static bool
pf_heap_fetch(PfScanState *st, PfEntry *e)
{
	ItemPointerData tid = e->tid;
	bool		all_dead = false;
	bool		found;

	if (st->index_only)
		InstrCountTuples2(&st->css.ss, 1);	/* core's Heap Fetches */
	if (st->have_run)
	{
		/* a direct image (plain scans only) */
		if (unlikely(st->dblk != ItemPointerGetBlockNumber(&tid)))
			elog(ERROR, "index prefetch consumer out of step at block %u",
				 ItemPointerGetBlockNumber(&tid));
		found = pf_direct_fetch(st, &tid);
	}
	else
	{
		/* heap_hot_search_buffer looks at the offset only: check the block */
		if (unlikely(!BufferIsValid(st->cur_buf) ||
					 BufferGetBlockNumber(st->cur_buf) != ItemPointerGetBlockNumber(&tid)))
			elog(ERROR, "index prefetch consumer out of step at block %u",
				 ItemPointerGetBlockNumber(&tid));
		LockBuffer(st->cur_buf, BUFFER_LOCK_SHARE);
		found = heap_hot_search_buffer(&tid, st->css.ss.ss_currentRelation, st->cur_buf,
									   st->css.ss.ps.state->es_snapshot,
									   &st->tup, &all_dead, true);
		LockBuffer(st->cur_buf, BUFFER_LOCK_UNLOCK);
	}

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
			(st->latest == PF_LATEST_QUEUED && st->head == st->tail))
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
		PfEntry    *e = NULL;

		CHECK_FOR_INTERRUPTS();

		if (unlikely(st->topup_pending))
		{
			st->topup_pending = false;
			pf_self_top_up(st);
		}

		if (st->index_only && st->head == st->tail && !st->index_done)
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
			e = pf_next_entry(st);
			if (e == NULL)
				return ExecClearTuple(slot);
		}

		if (e->flags & PF_NEED_HEAP)
		{
			if (!pf_heap_fetch(st, e))
				continue;
			if (st->narrow)
			{
				/* the page stays pinned as cur_buf (or held) until the next call */
				if ((e->flags & PF_RECHECK) && !pf_recheck_narrow(st))
					continue;
				pf_store_narrow(st, slot, &st->tup);
				return slot;
			}
			if (st->have_run)
				pf_store_direct(st, slot);
			else if (!st->index_only)
				ExecStoreBufferHeapTuple(&st->tup, slot, st->cur_buf);
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
			for (int j = 0; j < (int) PF_NCOUNTERS; j++)
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
		for (int j = 0; j < (int) PF_NCOUNTERS; j++)
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
	PfCounters	c = st->c;
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
		for (int j = 0; j < (int) PF_NCOUNTERS - 1; j++)
			pg_atomic_fetch_add_u64(&e->v[j], v[j]);
		for (;;)
		{
			uint64		old = pg_atomic_read_u64(&e->v[PF_NCOUNTERS - 1]);

			if (old >= c.dist_max ||
				pg_atomic_compare_exchange_u64(&e->v[PF_NCOUNTERS - 1], &old, c.dist_max))
				break;
		}
		return;
	}
}

/* The leader's counters plus what its workers added. */
static PfCounters
pf_total_counters(PfScanState *st)
{
	PfCounters	c = st->c;
	uint64	   *v = (uint64 *) &c;

	c.nsearches = st->instr.nsearches;
	if (st->par != NULL)
	{
		for (int j = 0; j < (int) PF_NCOUNTERS - 1; j++)
			v[j] += pg_atomic_read_u64(&st->par->v[j]);
		v[PF_NCOUNTERS - 1] = Max(v[PF_NCOUNTERS - 1],
								  pg_atomic_read_u64(&st->par->v[PF_NCOUNTERS - 1]));
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
	st->cur_buf = InvalidBuffer;
	st->pending_buf = InvalidBuffer;
	st->vmbuf = InvalidBuffer;
	st->last_blk = InvalidBlockNumber;
	st->run_cap = PF_MIN_RUN;

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

	st->qsize = 64;
	st->q = MemoryContextAlloc(estate->es_query_cxt, sizeof(PfEntry) * st->qsize);
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
	if (st->stream)
		read_stream_reset(st->stream);
	pf_queue_reset(st);

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

	/* this process's part of the statement's figures (rescans included) */
	dio_stmt_io.pf_requested += st->c.blocks;
	dio_stmt_io.pf_advised += st->c.advised;
	dio_stmt_io.pf_read += st->c.blocks_read;
	dio_stmt_io.pf_os_cached += st->c.sync_blocks;
	dio_stmt_io.pf_wait_us += st->c.wait_us;

	if (st->index == NULL)
		return;
	if (node->ss.ps.state->es_instrument)
		pf_par_publish(st);
	pf_par_release(st);
	if (st->stream)
	{
		read_stream_end(st->stream);
		st->stream = NULL;
	}
	if (st->oscheck)
	{
		dio_stream_end(st->oscheck);
		st->oscheck = NULL;
	}
	pf_queue_reset(st);
	if (BufferIsValid(st->vmbuf))
		ReleaseBuffer(st->vmbuf);
	st->vmbuf = InvalidBuffer;
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
pf_explain_io(PfScanState *st, const PfCounters *c, ExplainState *es)
{
	DioIOStats	io = st->iostats;

	if (!dio_explain_io(es))
		return;
	if (st->selfread)
	{
		io.prefetch_count = c->blocks;
		io.distance_sum = c->dist_sum;
		io.distance_max = (int16) Min(c->dist_max, PG_INT16_MAX);
		io.distance_capacity = (int16) Min(st->capacity, PG_INT16_MAX);
		io.wait_count = c->waits;
		io.io_count = io.io_nblocks = c->blocks_read;
		io.io_in_progress = c->io_inprog;
	}
	dio_explain_io_stats(es, &io);
}

/* The scan's prefetch and heap figures in text: one line each. */
static void
pf_explain_heap_text(PfScanState *st, const PfCounters *c, ExplainState *es)
{
	if (!dio_explain_io(es))
	{
		ExplainIndentText(es);
		appendStringInfo(es->str, "Prefetch: avg=%.1f max=" UINT64_FORMAT " capacity=%u",
						 c->blocks ? (double) c->dist_sum / c->blocks : 0.0,
						 c->dist_max, st->capacity);
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
	if (st->timing)
		appendStringInfo(es->str, " waits=" UINT64_FORMAT " wait time=%.3f ms",
						 c->waits, (double) c->wait_us / 1000.0);
	if (dio_explain_io(es) && c->restarts > 0)
		appendStringInfo(es->str, " restarts=" UINT64_FORMAT, c->restarts);
	appendStringInfoChar(es->str, '\n');
}

/* The same figures as properties of the other formats. */
static void
pf_explain_heap_props(PfScanState *st, const PfCounters *c, ExplainState *es)
{
	if (!dio_explain_io(es))
	{
		ExplainPropertyFloat("Prefetch Average", NULL,
							 c->blocks ? (double) c->dist_sum / c->blocks : 0.0, 1, es);
		ExplainPropertyUInteger("Prefetch Max", NULL, c->dist_max, es);
		ExplainPropertyUInteger("Prefetch Capacity", NULL, st->capacity, es);
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
	if (st->timing)
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
	PfCounters	total = pf_total_counters(st);
	PfCounters *c = &total;

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
	if (st->capacity == 0 && c->blocks > 0)
		st->capacity = pf_stream_capacity(st->css.ss.ss_currentRelation);

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
