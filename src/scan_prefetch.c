/*-------------------------------------------------------------------------
 *
 * scan_prefetch.c
 *	  PrefetchIndexScan and PrefetchIndexOnlyScan: forward index scans (and
 *	  index-only scans) whose heap fetches are read ahead of the consumer
 *	  (scan_readahead.c), so heap reads run concurrently while results still
 *	  come out in index order.
 *
 * How it works.  The node is the heap read-ahead's producer
 * (scan_readahead.c): when the look-ahead asks for TIDs it reads them from
 * the index and queues them; the consumer takes the queued TIDs in the same
 * order, each with its heap block at hand, and fetches each TID's visible
 * tuple from it (following HOT chains, as an index scan does).  For
 * index-only scans the visibility map decides once per queued TID, when it
 * is queued: all-visible ones never need their block and are returned from a
 * copy of their index tuple.  Reading TIDs ahead is done only with an MVCC
 * snapshot (see scan_prefetch_exec.c).
 *
 * This file: the settings, the substitution into core's plans, the node
 * callbacks and the parallel workers' counters.  The rows are
 * scan_prefetch_exec.c's, EXPLAIN is scan_prefetch_explain.c's, and the state
 * they share is in scan_prefetch_internal.h.
 *
 * Lifetime: the node's state lives in the query's memory.  Rescan resets the
 * read-ahead first (its stream, then its queue), then the copies, runtime
 * keys and the index scan.  On ERROR, pins go with the resource owner and
 * memory with the query; parallel counter entries are freed at the end of
 * the top-level transaction.
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
#include "access/parallel.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_statistic.h"
#include "executor/execScan.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "executor/nodeIndexscan.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "parser/parsetree.h"
#include "port/atomics.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "compat.h"
#include "diag.h"
#include "scan_feed.h"
#include "scan_narrow.h"
#include "scan_prefetch.h"
#include "scan_prefetch_internal.h"
#include "scan_readahead.h"

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
/* an index scan of this share of a heap in its order is left to core */
#define PF_FORWARD_CORR		0.95
#define PF_FORWARD_SHARE	0.25

typedef struct PfParEntry
{
	pg_atomic_uint32 node;		/* plan_node_id + 1; 0 = free */
	pg_atomic_uint64 v[RA_NCOUNTERS];
} PfParEntry;

static PfParEntry *pf_par = NULL;	/* [MaxBackends + aux][PF_PAR_ENTRIES] */

bool		pg_dio_enable_index_prefetch = true;
bool		pg_dio_index_prefetch_advice = true;
bool		pg_dio_index_prefetch_combine = true;
int			pg_dio_index_prefetch_min_rows = 3;
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

/* What the statistics say of an index's leading column and its table. */
typedef struct PfLeading
{
	double		tuples;			/* the table's reltuples; 0 unknown */
	double		per_page;		/* its tuples per page; 0 unknown */
	double		allvisible;		/* its share of all-visible pages */
	double		corr;			/* correlation with the heap's order */
	double		ndistinct;		/* distinct values; 0 unknown */
} PfLeading;

static void
pf_leading_stats(Oid relid, Oid indexoid, PfLeading *lead)
{
	HeapTuple	tup;
	AttrNumber	attnum = InvalidAttrNumber;

	memset(lead, 0, sizeof(PfLeading));
	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	if (HeapTupleIsValid(tup))
	{
		attnum = ((Form_pg_index) GETSTRUCT(tup))->indkey.values[0];
		ReleaseSysCache(tup);
	}
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (HeapTupleIsValid(tup))
	{
		Form_pg_class rel = (Form_pg_class) GETSTRUCT(tup);

		if (rel->relpages > 0 && rel->reltuples > 0)
		{
			lead->tuples = rel->reltuples;
			lead->per_page = rel->reltuples / rel->relpages;
		}
		if (rel->relpages > 0)
			lead->allvisible = Min((double) rel->relallvisible / rel->relpages, 1.0);
		ReleaseSysCache(tup);
	}
	if (attnum == InvalidAttrNumber)
		return;
	tup = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
						  Int16GetDatum(attnum), BoolGetDatum(false));
	if (HeapTupleIsValid(tup))
	{
		Form_pg_statistic st = (Form_pg_statistic) GETSTRUCT(tup);
		AttStatsSlot sslot;

		if (st->stadistinct > 0)
			lead->ndistinct = st->stadistinct;
		else if (st->stadistinct < 0)
			lead->ndistinct = -st->stadistinct * lead->tuples;
		if (get_attstatsslot(&sslot, tup, STATISTIC_KIND_CORRELATION, InvalidOid,
							 ATTSTATSSLOT_NUMBERS))
		{
			if (sslot.nnumbers > 0)
				lead->corr = sslot.numbers[0];
			free_attstatsslot(&sslot);
		}
		ReleaseSysCache(tup);
	}
}

/*
 * The rows of one value of the index's leading column, where 'indexqual'
 * (after setrefs.c) compares that column for equality; 0 where it does not,
 * or where the index is unique and every key column is compared for
 * equality (at most one row then).  A run fetches at most these rows, and
 * may fetch many more than core's estimate: core multiplies the other
 * columns' selectivities as if they were independent, which for correlated
 * columns falls below one row (TPC-H Q20's probes of lineitem (l_partkey,
 * l_suppkey) fetch about 7 rows, where core expects 1).
 */
static double
pf_leading_value_rows(List *indexqual, Oid indexoid, const PfLeading *lead)
{
	Relation	index;
	Bitmapset  *equal = NULL;
	ListCell   *lc;
	double		rows = 0;

	if (lead->ndistinct < 1 || lead->tuples <= 0)
		return 0;
	/* the planner holds this lock already (get_relation_info) */
	index = index_open(indexoid, AccessShareLock);
	if (index->rd_rel->relam == BTREE_AM_OID)
	{
		foreach(lc, indexqual)
		{
			OpExpr	   *op = (OpExpr *) lfirst(lc);
			Node	   *left;

			if (!IsA(op, OpExpr) || list_length(op->args) != 2)
				continue;
			left = linitial(op->args);
			while (IsA(left, RelabelType))
				left = (Node *) ((RelabelType *) left)->arg;
			if (!IsA(left, Var) || ((Var *) left)->varno != INDEX_VAR ||
				((Var *) left)->varattno < 1 ||
				((Var *) left)->varattno > IndexRelationGetNumberOfKeyAttributes(index))
				continue;
			if (get_op_opfamily_strategy(op->opno,
										 index->rd_opfamily[((Var *) left)->varattno - 1]) ==
				BTEqualStrategyNumber)
				equal = bms_add_member(equal, ((Var *) left)->varattno);
		}
		if (bms_is_member(1, equal) &&
			!(index->rd_index->indisunique &&
			  bms_num_members(equal) == IndexRelationGetNumberOfKeyAttributes(index)))
			rows = lead->tuples / lead->ndistinct;
	}
	index_close(index, NoLock);
	bms_free(equal);
	return rows;
}

/*
 * The heap tuples the scan fetches each time it runs: core's estimate of its
 * rows, or the rows of one value of the leading column where that is more
 * (pf_leading_value_rows); at most one where the parent reads only the first
 * ('first'); and of an index-only scan the share on pages not all-visible (as
 * core's cost model takes it from pg_class).
 */
static double
pf_heap_rows_estimate(const Plan *plan, List *indexqual, Oid indexoid,
					  const PfLeading *lead, bool index_only, bool first)
{
	double		rows = Max(plan->plan_rows,
						   pf_leading_value_rows(indexqual, indexoid, lead));

	if (first)
		rows = Min(rows, 1.0);
	if (index_only)
		rows *= 1.0 - lead->allvisible;
	return rows;
}

/* The correlation of the index's leading column with the heap's order, or 0. */
double
pf_index_correlation(Oid relid, Oid indexoid)
{
	PfLeading	lead;

	pf_leading_stats(relid, indexoid, &lead);
	return lead.corr;
}

/*
 * The heap blocks a run's 'rows' fall on, by the correlation of the index's
 * leading column with the heap's order (pg_statistic, as btcostestimate
 * reads it): perfectly correlated, rows / (tuples per page) + 1; not at all,
 * one block a row; in between, weighted by the squared correlation as core's
 * cost_index weighs its page counts.  Without statistics, 'rows'.
 */
static double
pf_heap_blocks_estimate(const PfLeading *lead, double rows)
{
	double		corr2 = lead->corr * lead->corr;

	if (lead->per_page <= 0)
		return rows;
	return corr2 * (rows / lead->per_page + 1) + (1 - corr2) * rows;
}

/*
 * A PrefetchIndexScan or PrefetchIndexOnlyScan in place of core's finished
 * IndexScan or IndexOnlyScan 'plan' (after setrefs.c), or NULL where it does
 * not apply: backward or ordered (KNN) scans, parallel index scans, index AMs
 * without amgettuple, relations other than heap tables and materialized
 * views, index-only scans of indexes with expressions or repeated columns,
 * and scans that core expects to fetch fewer than
 * pg_dio.index_prefetch_min_rows heap tuples each time they run (within one
 * run there is nothing to read ahead, and a nested loop's inner scan would
 * pay the node's start for every outer row) or a quarter or more of the heap
 * in its order (read ahead by the kernel for core's reads).  The caller has ruled out
 * positions where the scan must support mark/restore or backward fetches,
 * and says whether a Limit above may stop it early ('bounded': then it does
 * not advise neighbouring blocks for TIDs further on, which may never come)
 * and whether each run is read for its first row only (the inner side of a
 * semi or anti join without a join filter: 'first').
 *
 * The node keeps the plan's fields (costs, target list, plan_node_id); its
 * filter moves into custom_exprs, to be evaluated and shown after the index
 * conditions, as core's index scans do.  custom_private = ((index OID,
 * index-only, plain SELECT, bounded)); custom_exprs = (index quals on index columns,
 * index quals for rechecks, filter).  A plain index scan in a plain SELECT
 * gets a narrow scan tuple (scan_narrow.c); an index-only scan's scan tuple
 * is the index's columns (indextlist), as in core.
 */
static Plan *pf_build(PlannedStmt *stmt, Plan *plan, const DioPlanSettings *set,
					  bool plain, bool bounded, bool first, bool force);

Plan *
pf_substitute(PlannedStmt *stmt, Plan *plan, bool plain, bool bounded, bool first,
			  const DioPlanSettings *set)
{
	return pf_build(stmt, plan, set, plain, bounded, first, false);
}

/*
 * The inner scan 'plan' of a nested loop under a ProbePrefetch with plan node
 * ID 'feeder' that reads heap chunks directly (scan_feed.c), made to take
 * them: a core IndexScan becomes a PrefetchIndexScan whatever its rows (the
 * images are worth the node's start), a PrefetchIndexScan is marked.  False,
 * 'plan' unchanged, where it cannot: index-only scans read only blocks that
 * are not all-visible, and a scan outside a plain SELECT uses no images.
 */
bool
pf_make_fed(PlannedStmt *stmt, Plan **plan, int feeder, const DioPlanSettings *set)
{
	CustomScan *cscan;
	List	   *ids;

	if (IsA(*plan, IndexScan))
	{
		Plan	   *sub = pf_build(stmt, *plan, set, true, false, false, true);

		if (sub == NULL)
			return false;
		*plan = sub;
	}
	if (!IsA(*plan, CustomScan) || ((CustomScan *) *plan)->methods != &pf_scan_methods)
		return false;
	cscan = (CustomScan *) *plan;
	ids = linitial(cscan->custom_private);
	if (lthird_oid(ids) == 0)
		return false;
	if (list_length(ids) < 5)
		ids = lappend_oid(ids, (Oid) (feeder + 1));
	linitial(cscan->custom_private) = ids;
	return true;
}

static Plan *
pf_build(PlannedStmt *stmt, Plan *plan, const DioPlanSettings *set, bool plain,
		 bool bounded, bool first, bool force)
{
	Scan	   *scan = (Scan *) plan;
	RangeTblEntry *rte = rt_fetch(scan->scanrelid, stmt->rtable);
	bool		index_only = IsA(plan, IndexOnlyScan);
	CustomScan *cscan;
	Oid			indexoid;
	List	   *filter = plan->qual;
	List	   *indexqual;
	const IndexAmRoutine *am;
	bool		gettuple;
	PfLeading	lead;
	double		rows;

	if (!set->enable_index_prefetch || plan->parallel_aware)
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
		indexqual = ios->indexqual;
		if (!pf_index_plain_columns(indexoid))
			return NULL;
	}
	else
	{
		IndexScan  *is = (IndexScan *) plan;

		if (is->indexorderby != NIL || is->indexorderdir != ForwardScanDirection)
			return NULL;
		indexoid = is->indexid;
		indexqual = is->indexqual;
	}
	pf_leading_stats(rte->relid, indexoid, &lead);
	rows = pf_heap_rows_estimate(plan, indexqual, indexoid, &lead, index_only, first);
	if (!force && rows < (double) set->index_prefetch_min_rows)
		return NULL;
	/* rows that fall on one block leave nothing to read ahead of it */
	if (!force && set->index_prefetch_min_rows > 0 &&
		pf_heap_blocks_estimate(&lead, rows) < 2)
		return NULL;
	/*
	 * A walk of a large share of the heap in its own order: the kernel reads
	 * it ahead for core's reads as well as any look-ahead, and the node would
	 * add only its work per row (TPC-H Q18's scans of lineitem_pkey).
	 */
	if (!force && set->index_prefetch_min_rows > 0 && lead.tuples > 0 &&
		lead.corr >= PF_FORWARD_CORR && rows >= lead.tuples * PF_FORWARD_SHARE)
		return NULL;
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

		cscan->custom_private = list_make1(list_make4_oid(indexoid, 1, 0, bounded));
		cscan->custom_exprs = list_make3(ios->indexqual, ios->recheckqual, filter);
		cscan->custom_scan_tlist = ios->indextlist;
		cscan->methods = &pf_only_methods;
	}
	else
	{
		IndexScan  *is = (IndexScan *) plan;

		cscan->custom_private = list_make1(list_make4_oid(indexoid, 0, plain, bounded));
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
RaCounters
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
	st->bounded = lfourth_oid(oids) != 0;
	st->feeder = list_length(oids) >= 5 ? (int) list_nth_oid(oids, 4) - 1 : -1;
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
	/* the nested loop began the ProbePrefetch on its outer side first */
	if (st->feeder >= 0 && st->plain_select)
		st->feed = dio_feed_find(estate, st->feeder);
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

	/* this process's part of the statement's figures (rescans included) */
	dio_stmt_io.pf_requested += st->ra.c.blocks;
	dio_stmt_io.pf_advised += st->ra.c.advised;
	dio_stmt_io.pf_read += st->ra.c.blocks_read;
	dio_stmt_io.pf_os_cached += st->ra.c.sync_blocks;
	dio_stmt_io.pf_wait_us += st->ra.c.wait_us;

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

	DefineCustomIntVariable("pg_dio.index_prefetch_min_rows",
							"Sets the fewest heap tuples per run for which PrefetchIndexScan takes the place of an index scan.",
							"The planner's estimate of the rows an index scan returns each time it runs (a nested loop's inner scan: per outer row), or the rows of one value of the index's leading column where it is compared for equality, if more; of an index-only scan, those on pages not all-visible.  Above 0, those rows must also fall on two or more heap blocks by the index's correlation with the table's order, and not be a quarter or more of the table in that order (correlation 0.95 or more).",
							&pg_dio_index_prefetch_min_rows,
							3, 0, INT_MAX,
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

/*
 * If 'cscan' is a PrefetchIndexScan or PrefetchIndexOnlyScan: its index, and
 * its index conditions on index columns (as core's indexqual).
 */
bool
pf_plan_index(const CustomScan *cscan, Oid *indexoid, bool *index_only, List **indexqual)
{
	List	   *ids;

	if (cscan->methods != &pf_scan_methods && cscan->methods != &pf_only_methods)
		return false;
	ids = linitial(cscan->custom_private);
	*indexoid = linitial_oid(ids);
	*index_only = lsecond_oid(ids) != 0;
	*indexqual = linitial(cscan->custom_exprs);
	return true;
}
