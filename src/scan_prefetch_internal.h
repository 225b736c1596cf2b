/*-------------------------------------------------------------------------
 *
 * scan_prefetch_internal.h
 *	  PrefetchIndexScan's state, shared by its files: scan_prefetch.c
 *	  (substitution, node callbacks, parallel workers' counters, settings),
 *	  scan_prefetch_exec.c (the rows) and scan_prefetch_explain.c.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_prefetch_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SCAN_PREFETCH_INTERNAL_H
#define PG_DIO_SCAN_PREFETCH_INTERNAL_H

#include "access/genam.h"
#include "access/relscan.h"
#include "commands/explain_state.h"
#include "nodes/execnodes.h"

#include "scan_narrow.h"
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
	bool		bounded;		/* below a Limit (pf_substitute) */
	int			feeder;			/* plan node ID of the ProbePrefetch that
								 * reads heap chunks for it, or -1 */
	struct DioFeed *feed;		/* ... its feed (scan_feed.c), or NULL */
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
	struct PfParEntry *par;			/* leader: where workers add their counters */
} PfScanState;

/* settings (scan_prefetch.c) */
extern PGDLLIMPORT bool pg_dio_index_prefetch_advice;
extern PGDLLIMPORT bool pg_dio_index_prefetch_combine;
extern PGDLLIMPORT bool pg_dio_index_direct_read;

/* scan_prefetch.c */
extern RaCounters pf_total_counters(PfScanState *st);

/* scan_prefetch_exec.c */
extern TupleTableSlot *pf_next(ScanState *ss);
extern bool pf_recheck(ScanState *ss, TupleTableSlot *slot);
extern void pf_index_reset(PfScanState *st);

/* scan_prefetch_explain.c */
extern void pf_explain_scan(CustomScanState *node, List *ancestors,
							ExplainState *es);

#endif							/* PG_DIO_SCAN_PREFETCH_INTERNAL_H */
