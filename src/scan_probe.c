/*-------------------------------------------------------------------------
 *
 * scan_probe.c
 *	  ProbePrefetch: read a nested loop's outer side ahead, and get the heap
 *	  blocks the inner index probes will need in flight before they run.
 *
 * A Nested Loop whose inner side is a parameterized index scan probes the
 * index once per outer row, and each probe waits for its heap block.  No
 * index scan can read ahead across probes: the next probe's keys come from
 * an outer row it has not seen.  ProbePrefetch stands between the Nested
 * Loop and its outer plan.  It reads outer rows ahead into a bounded queue
 * and, for each row queued, computes the inner's index keys from the row (the
 * join's parameters, set in a parameter array of its own), probes the index
 * with a scan of its own and advises the kernel of the heap blocks the probe
 * will fetch (PrefetchBuffer).  It returns the outer rows in their order,
 * unchanged: the join, its rows and every result stay core's.
 *
 * Planned (dio_probe_substitute) only where reading the outer side further
 * ahead than core cannot be seen: a plain SELECT whose outer plan is a scan
 * without volatile functions or initplans, and an inner index scan of a heap
 * table (IndexScan or IndexOnlyScan, possibly under Memoize) whose index conditions use only the join's own parameters and no
 * volatile functions; not an index-only one over a heap nearly all
 * all-visible, whose probes read index leaves only (probe_heap_all_visible),
 * nor where the outer plan reads the inner's heap with a Seq Scan, whose
 * reads leave the probes' blocks cached (TPC-H Q21).
 *
 * How far ahead adapts: the look-ahead doubles after a probe that started a
 * read, up to pg_dio.probe_prefetch_distance outer rows, and shrinks by one
 * after a probe whose blocks were all in shared buffers or the OS page cache
 * (cachestat, pg_dio.os_cache_check); after 32 such probes
 * in a row only one row in 32 is probed, then one in 64, and so on up to one
 * in 1024, until one starts a read again.
 * Where the probes walk the heap forward and the node reads the heap
 * directly (probe_feed_inner), each reads the chunks ahead of its block, so
 * only every stride-th row is probed, as far apart as those chunks allow
 * (probe_stride).  Without direct reads a forward walk is not advised: the
 * kernel's sequential read-ahead follows the inner's own reads in larger
 * requests than 128 kB advice would make (TPC-H Q3, Q4 and Q12 at scale
 * factor 3), and the node goes to sampling.
 *
 * What is advised: each block, or its 128 kB chunk where the probes are
 * dense (will want half the heap), as the kernel's own read-ahead makes
 * core's reads of that pattern large.  The inner stays core's Index Scan
 * (dio_subst_walk) unless it takes the node's direct reads: with the probes'
 * blocks in flight, a PrefetchIndexScan's own look-ahead within a probe only
 * costs CPU (TPC-H Q2 and Q11 warm).
 *
 * A correlated SubPlan in the inner's filter whose plan is an index scan
 * (TPC-H Q20) has its index probed too, on the values that the inner's index
 * conditions tie to the join's parameters (probe_subplan_target).  Over a
 * Hash Join's outer, the node probes for a correlated SubPlan in an outer
 * hash key, run once per outer row on its columns (TPC-H Q2): the index
 * scan each of its runs starts with (dio_probe_hash_substitute).
 *
 * Lifetime: the queued rows live in the node's own memory context, reset at
 * a rescan; the row returned last stays valid until the next call, as the
 * Nested Loop reads the inner's parameters from it.  The private index scan
 * is not counted in the index's statistics (core counts the inner's).
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_probe.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/parallel.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/visibilitymap.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "commands/explain.h"
#include "commands/explain_format.h"
#include "executor/executor.h"
#include "executor/nodeIndexscan.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "compat.h"
#include "diag.h"
#include "engine.h"
#include "safety.h"
#include "scan_direct.h"
#include "scan_feed.h"
#include "scan_prefetch.h"
#include "scan_probe.h"

#define PROBE_NAME			"ProbePrefetch"
/* heap blocks advised per probe at most */
#define PROBE_MAX_BLOCKS	32
/* a queued row's state: its probe is done or not needed, or only its leaf advised */
#define PQ_NONE				0
#define PQ_LEAF				1
/* ... or not probed for its stride (probe_stride) */
#define PQ_SKIP				2
/* probes in a row without a read before the node only samples */
#define PROBE_IDLE_LIMIT	32
/* rows between two samples at most (the gap doubles from PROBE_IDLE_LIMIT) */
#define PROBE_SAMPLE_MAX	1024
/* blocks advised as one request: dense or forward probes (128 kB) */
#define PROBE_CHUNK			16
/*
 * Dense: the probes are expected to ask for as many blocks as the heap has
 * times this, which leaves about half of its blocks untouched if spread
 * evenly (1 - e^-0.7), so a chunk holds 8 wanted blocks on average.
 */
#define PROBE_DENSE_TOUCHES	0.7
/* probes seen before the density is judged */
#define PROBE_DENSE_AFTER	8
/* blocks to be read in a row, each less than a chunk after the last: forward */
#define PROBE_SEQ_RUN		3
/* without direct reads, the chunks ahead a forward walk's stride is judged by */
#define PROBE_SEQ_AHEAD		2
/* a probe's blocks counted (and advised in chunks) at most */
#define PROBE_SEEN_MAX		(PROBE_MAX_BLOCKS * PROBE_CHUNK)
/* heaps above this many blocks (1 TB) are never advised in chunks */
#define PROBE_CHUNK_MAX_BLOCKS	((BlockNumber) 1 << 27)
/* chunks read directly beyond the current one while the probes walk forward */
#define PROBE_DIRECT_AHEAD	8
#define PROBE_SHARED_AHEAD	2
/* shared chunk images: fewer than this many are not worth sharing */
#define PROBE_SHARED_MIN_SLOTS	8
#define PROBE_SHARED_MAX_KB		(64 * 1024)
/* an outer row more than this many heap blocks past the last one is probed */
#define PROBE_OUTER_GAP		4
/* the inner index's correlation with its heap above which probes in key
 * order walk the heap forward: the inner is then fed (probe_feed_inner) */
#define PROBE_FEED_MIN_CORR	0.9

/* whether ProbePrefetch reads the inner's heap directly (probe_feed_inner) */
typedef enum ProbeFeed
{
	PROBE_FEED_NONE,
	PROBE_FEED_OWN,				/* for its own process's probes */
	PROBE_FEED_SHARED,			/* for a parallel query's processes */
} ProbeFeed;
/* the heap's share of all-visible blocks from which an index-only inner
 * fetches too few heap blocks to probe for */
#define PROBE_ALL_VISIBLE	0.99

bool		pg_dio_enable_probe_prefetch = true;
int			pg_dio_probe_prefetch_distance = 64;
bool		pg_dio_probe_direct_read = true;
int			pg_dio_probe_shared_memory_kb = 0;

/*
 * An index the probes go through and the heap its entries point into: the
 * inner's own, and where the inner's filter runs a correlated SubPlan that
 * is an index scan, that scan's (probe_subplan_target).
 */
typedef struct ProbeTarget
{
	Relation	heap;
	Relation	index;
	bool		index_only;
	IndexScanDesc scan;			/* NULL: not probed */
	ScanKey		keys;
	int			nkeys;
	IndexRuntimeKeyInfo *rtkeys;
	int			nrtkeys;
	Buffer		vmbuf;
	DioStream  *oscheck;		/* asks the OS page cache (cachestat), or NULL */
	DioLeafKey *leafkey;		/* finds a btree probe's leaf, or NULL */
	BlockNumber last_leaf;		/* the leaf advised last */

	/* dense probes: the heap advised in PROBE_CHUNK-block chunks */
	BlockNumber nblocks;		/* the heap's size at the start */
	uint64		blocks_seen;	/* heap blocks the probes asked for */
	bool		dense;
	BlockNumber last_wanted;	/* the last block to be read, and how many */
	int			run;			/* before it came each within 'reach' after */
	BlockNumber reach;			/* PROBE_CHUNK times the probes' stride */
	uint8	   *chunk_done;		/* chunks advised, a bit each; NULL until used */

	/* EXPLAIN ANALYZE */
	uint64		blocks_direct;	/* read directly for the inner (scan_feed.c) */
	uint64		chunks_direct;
	uint64		blocks_advised;	/* PrefetchBuffer started a read */
	uint64		blocks_cached;	/* in shared buffers already */
	uint64		blocks_oscached;	/* in the OS page cache */
	uint64		chunks_advised;
	uint64		leaves_advised;	/* leaf pages PrefetchBuffer started a read of */
	uint64		leaves_cached;	/* leaf pages in shared buffers already */
} ProbeTarget;

/* the inner's index, and a SubPlan's in the inner's filter */
#define PROBE_MAX_TARGETS	2

typedef struct ProbeState
{
	CustomScanState css;
	PlanState  *outer;

	/* where the probes go; tg[0] is the inner's, and without its scan none */
	ProbeTarget tg[PROBE_MAX_TARGETS];
	int			ntargets;
	DioFeed    *feed;			/* tg[0]'s chunks read directly for the inner */
	int			direct_ahead;	/* chunks read past a forward probe's */
	int			shared_slots;	/* chunk images in the parallel query's DSA */
	dsa_area   *dsa;			/* ... which this is (the leader's mapping) */
	ExprContext *econtext;		/* evaluates the targets' rtkeys with 'params' */
	ParamExecData *params;
	int			nparams;
	int		   *paramnos;		/* the join's PARAM_EXEC numbers ... */
	AttrNumber *attnos;			/* ... and the outer columns that set them */
	TupleTableSlot *probe_slot;
	double		outer_rows;		/* the planner's outer rows, all processes' */

	/* the outer rows read ahead */
	MemoryContext qcxt;
	MinimalTuple *queue;
	uint8	   *qstate;			/* each queued row's PQ_* */
	int			qsize;
	int			qhead;
	int			qcount;
	MinimalTuple returned;		/* freed at the next call */
	bool		outer_done;
	int			distance;
	int			max_allowed;	/* pg_dio.probe_prefetch_distance */
	int			idle;			/* probes in a row that started no read */
	int			skipped;		/* rows not probed since the last sample */
	int			sample_gap;		/* while idle, rows from one sample to the next */
	int			stride;			/* every stride-th row probed (forward walks) */
	uint64		strided;		/* rows queued while striding */
	uint64		nrows;			/* outer rows read */
	uint64	   *qseq;			/* each queued row's number among them */
	uint64		probing;		/* the number of the row being probed */
	uint64		last_probed;	/* ... and of the one tg[0] probed before */
	uint64		stride_from;	/* the first row queued at this stride */
	bool		backfill;		/* the stride fell: probe the rows it skipped */
	BlockNumber outer_block;	/* the heap block of the outer's last row */
	bool	   *qjump;			/* each queued row's: the outer jumped to it */
	bool		resume;			/* the row probed now starts the walk anew */

	/* EXPLAIN ANALYZE */
	uint64		probes;
	uint64		sampled;		/* ... of them while sampling */
	int			max_distance;
} ProbeState;

static Node *probe_create_state(CustomScan *cscan);
static void probe_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *probe_exec(CustomScanState *node);
static void probe_end(CustomScanState *node);
static void probe_rescan(CustomScanState *node);
static void probe_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static Size probe_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void probe_initialize_dsm(CustomScanState *node, ParallelContext *pcxt,
								 void *coordinate);
static void probe_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt,
								   void *coordinate);
static void probe_initialize_worker(CustomScanState *node, shm_toc *toc,
									void *coordinate);
static void probe_shutdown(CustomScanState *node);
static uint8 *probe_chunks(ProbeState *ps, ProbeTarget *t);

static const CustomScanMethods probe_methods = {
	.CustomName = PROBE_NAME,
	.CreateCustomScanState = probe_create_state,
};

static const CustomExecMethods probe_exec_methods = {
	.CustomName = PROBE_NAME,
	.BeginCustomScan = probe_begin,
	.ExecCustomScan = probe_exec,
	.EndCustomScan = probe_end,
	.ReScanCustomScan = probe_rescan,
	.EstimateDSMCustomScan = probe_estimate_dsm,
	.InitializeDSMCustomScan = probe_initialize_dsm,
	.ReInitializeDSMCustomScan = probe_reinitialize_dsm,
	.InitializeWorkerCustomScan = probe_initialize_worker,
	.ShutdownCustomScan = probe_shutdown,
	.ExplainCustomScan = probe_explain,
};

/* ======================================================================
 * Planner
 * ====================================================================== */

typedef struct ProbeParamCheck
{
	List	   *allowed;		/* the join's PARAM_EXEC numbers */
	bool		ok;
} ProbeParamCheck;

/* Does the expression use only the allowed PARAM_EXEC params, no others? */
static bool
probe_params_walker(Node *node, ProbeParamCheck *cx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
	{
		Param	   *p = (Param *) node;

		if (p->paramkind != PARAM_EXEC || !list_member_int(cx->allowed, p->paramid))
			cx->ok = false;
		return false;
	}
	if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan))
	{
		cx->ok = false;
		return false;
	}
	return expression_tree_walker(node, probe_params_walker, cx);
}

/* a target list (contain_leaked_vars takes no TargetEntry) */
#define IsA_List_of_TargetEntry(n) \
	((n) != NULL && IsA((n), List) && IsA(linitial((List *) (n)), TargetEntry))

static bool
probe_has_subplan(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan))
		return true;
	return expression_tree_walker(node, probe_has_subplan, context);
}

/*
 * May the outer plan evaluate 'exprs' for rows core would not reach?  Not
 * if they are volatile or run a subquery; and where the join may be stopped
 * early ('partial'), not if they could raise an error for some row: every
 * function over a column must be leakproof.
 */
static bool
probe_exprs_ok(Node *exprs, bool partial)
{
	if (IsA_List_of_TargetEntry(exprs))
	{
		ListCell   *lc;

		foreach(lc, (List *) exprs)
			if (!probe_exprs_ok((Node *) ((TargetEntry *) lfirst(lc))->expr, partial))
				return false;
		return true;
	}
	return !contain_volatile_functions(exprs) &&
		!probe_has_subplan(exprs, NULL) &&
		!(partial && contain_leaked_vars(exprs));
}

/*
 * An outer plan that ProbePrefetch may read ahead of the join: built of
 * scans of tables, joins and nodes that only pass rows on, sort or group
 * them, without an initplan, and whose expressions probe_exprs_ok allows.
 * Custom nodes: leaf scans, and pg_dio's own.
 */
static bool
probe_outer_ok(Plan *plan, bool partial)
{
	ListCell   *lc;
	List	   *kids = NIL;
	Node	   *exprs = NULL;

	if (plan == NULL)
		return true;
	check_stack_depth();
	if (plan->initPlan != NIL ||
		!probe_exprs_ok((Node *) plan->targetlist, partial) ||
		!probe_exprs_ok((Node *) plan->qual, partial))
		return false;
	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_BitmapIndexScan:
		case T_Sort:
		case T_IncrementalSort:
		case T_Material:
		case T_Gather:
		case T_GatherMerge:
		case T_Agg:
		case T_Group:
		case T_Unique:
			/* index and bitmap quals are never volatile, nor do they raise errors per row */
			break;
		case T_BitmapAnd:
			kids = ((BitmapAnd *) plan)->bitmapplans;
			break;
		case T_BitmapOr:
			kids = ((BitmapOr *) plan)->bitmapplans;
			break;
		case T_Append:
			kids = ((Append *) plan)->appendplans;
			break;
		case T_NestLoop:
			exprs = (Node *) ((Join *) plan)->joinqual;
			break;
		case T_HashJoin:
			exprs = (Node *) list_concat_copy(((Join *) plan)->joinqual,
											  ((HashJoin *) plan)->hashclauses);
			break;
		case T_MergeJoin:
			exprs = (Node *) list_concat_copy(((Join *) plan)->joinqual,
											  ((MergeJoin *) plan)->mergeclauses);
			break;
		case T_Hash:
			exprs = (Node *) ((Hash *) plan)->hashkeys;
			break;
		case T_Memoize:
			exprs = (Node *) ((Memoize *) plan)->param_exprs;
			break;
		case T_Result:
			exprs = ((Result *) plan)->resconstantqual;
			break;
		case T_SubqueryScan:
			kids = list_make1(((SubqueryScan *) plan)->subplan);
			break;
		case T_CustomScan:
			if (((CustomScan *) plan)->custom_plans != NIL &&
				strcmp(((CustomScan *) plan)->methods->CustomName, PROBE_NAME) != 0)
				return false;
			kids = ((CustomScan *) plan)->custom_plans;
			break;
		default:
			return false;
	}
	if (exprs != NULL && !probe_exprs_ok(exprs, partial))
		return false;
	foreach(lc, kids)
		if (!probe_outer_ok((Plan *) lfirst(lc), partial))
			return false;
	return probe_outer_ok(plan->lefttree, partial) &&
		probe_outer_ok(plan->righttree, partial);
}

/*
 * Where the join may be stopped early, the values the probes compute from
 * outer rows core may not reach must be the outer's columns themselves:
 * each index condition compares the index column with a parameter or a
 * constant.
 */
static bool
probe_keys_plain(List *indexqual)
{
	ListCell   *lc;

	foreach(lc, indexqual)
	{
		Node	   *clause = lfirst(lc);
		List	   *args;
		ListCell   *la;

		if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
			args = list_make1(lsecond(((OpExpr *) clause)->args));
		else if (IsA(clause, RowCompareExpr))
			args = ((RowCompareExpr *) clause)->rargs;
		else if (IsA(clause, NullTest))
			continue;
		else
			return false;
		foreach(la, args)
		{
			Node	   *arg = lfirst(la);

			while (IsA(arg, RelabelType))
				arg = (Node *) ((RelabelType *) arg)->arg;
			if (!IsA(arg, Param) && !IsA(arg, Const))
				return false;
		}
	}
	return true;
}

/*
 * The inner index scan of the join, below Memoize: its relation, index and
 * index conditions; false if it is none pg_dio can probe.
 */
static bool
probe_inner(PlannedStmt *stmt, Plan *inner, Index *rti, Oid *indexoid,
			bool *index_only, List **indexqual)
{
	RangeTblEntry *rte;
	const IndexAmRoutine *am;
	bool		gettuple;

	if (IsA(inner, Memoize))
		inner = inner->lefttree;
	if (IsA(inner, IndexScan))
	{
		IndexScan  *is = (IndexScan *) inner;

		if (is->indexorderby != NIL || is->indexorderdir != ForwardScanDirection)
			return false;
		*indexoid = is->indexid;
		*index_only = false;
		*indexqual = is->indexqual;
	}
	else if (IsA(inner, IndexOnlyScan))
	{
		IndexOnlyScan *ios = (IndexOnlyScan *) inner;

		if (ios->indexorderby != NIL || ios->indexorderdir != ForwardScanDirection)
			return false;
		*indexoid = ios->indexid;
		*index_only = true;
		*indexqual = ios->indexqual;
	}
	else if (!IsA(inner, CustomScan) ||
			 !pf_plan_index((CustomScan *) inner, indexoid, index_only, indexqual))
		return false;
	if (inner->parallel_aware)
		return false;
	*rti = ((Scan *) inner)->scanrelid;
	rte = rt_fetch(*rti, stmt->rtable);
	if (rte->rtekind != RTE_RELATION || rte->inh ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW) ||
		get_rel_relam(rte->relid) != HEAP_TABLE_AM_OID)
		return false;
	am = GetIndexAmRoutineByAmId(get_rel_relam(*indexoid), false);
	gettuple = am->amgettuple != NULL;
	dio_free_amroutine(am);
	return gettuple;
}

/*
 * The inner scan's filter, and the list its INDEX_VAR Vars point into (the
 * inner is core's here: dio_subst_walk plans it after this node).
 */
static List *
probe_inner_filter(Plan *scan, List **tlist)
{
	if (IsA(scan, Memoize))
		scan = scan->lefttree;
	*tlist = NIL;
	if (IsA(scan, IndexOnlyScan))
		*tlist = ((IndexOnlyScan *) scan)->indextlist;
	return scan->qual;
}

/* The heap column a Var of the inner's filter reads, or 0. */
static AttrNumber
probe_heap_attno(Node *expr, Index rti, List *tlist)
{
	Var		   *v;

	if (!IsA(expr, Var))
		return InvalidAttrNumber;
	v = (Var *) expr;
	if (v->varno == INDEX_VAR && tlist != NIL)
	{
		TargetEntry *tle;

		if (v->varattno < 1 || v->varattno > list_length(tlist))
			return InvalidAttrNumber;
		tle = list_nth(tlist, v->varattno - 1);
		if (!IsA(tle->expr, Var))
			return InvalidAttrNumber;
		v = (Var *) tle->expr;
	}
	if (v->varno != (int) rti || v->varlevelsup != 0 || v->varattno <= 0)
		return InvalidAttrNumber;
	return v->varattno;
}

/*
 * Is 'clause' (an index condition, index column on the left) a btree
 * equality on a key column of 'index'?  Its column, or 0.
 */
static AttrNumber
probe_equality_column(Relation index, Node *clause)
{
	OpExpr	   *op;
	Node	   *left;
	AttrNumber	col;

	if (!IsA(clause, OpExpr) || list_length(((OpExpr *) clause)->args) != 2 ||
		index->rd_rel->relam != BTREE_AM_OID)
		return InvalidAttrNumber;
	op = (OpExpr *) clause;
	left = linitial(op->args);
	while (IsA(left, RelabelType))
		left = (Node *) ((RelabelType *) left)->arg;
	if (!IsA(left, Var) || ((Var *) left)->varno != INDEX_VAR)
		return InvalidAttrNumber;
	col = ((Var *) left)->varattno;
	if (col < 1 || col > IndexRelationGetNumberOfKeyAttributes(index) ||
		get_op_opfamily_strategy(op->opno, index->rd_opfamily[col - 1]) != BTEqualStrategyNumber)
		return InvalidAttrNumber;
	return col;
}

/*
 * The join's parameter that a SubPlan argument 'arg' of the inner's filter
 * equals in every row the inner returns, with the same type: the argument
 * itself, or the parameter an equality of the inner's index compares that
 * column with.  NULL if none.
 */
static Param *
probe_arg_param(Node *arg, Index rti, List *tlist, Oid inner_index, List *inner_qual,
				List *allowed)
{
	Oid			type = exprType(arg);
	AttrNumber	heapatt;
	Relation	index;
	Param	   *found = NULL;
	ListCell   *lc;

	if (IsA(arg, Param))
	{
		Param	   *p = (Param *) arg;

		return p->paramkind == PARAM_EXEC && list_member_int(allowed, p->paramid) ? p : NULL;
	}
	heapatt = probe_heap_attno(arg, rti, tlist);
	if (heapatt == InvalidAttrNumber)
		return NULL;
	/* the planner holds a lock on every index of the plan */
	index = index_open(inner_index, NoLock);
	foreach(lc, inner_qual)
	{
		OpExpr	   *op = lfirst(lc);
		AttrNumber	col = probe_equality_column(index, (Node *) op);
		Node	   *right;

		if (col == InvalidAttrNumber || index->rd_index->indkey.values[col - 1] != heapatt)
			continue;
		right = lsecond(op->args);
		if (IsA(right, Param) && ((Param *) right)->paramkind == PARAM_EXEC &&
			list_member_int(allowed, ((Param *) right)->paramid) &&
			((Param *) right)->paramtype == type)
		{
			found = (Param *) right;
			break;
		}
	}
	index_close(index, NoLock);
	return found;
}

typedef struct ProbeRemap
{
	List	   *from;			/* the SubPlan's parameters ... */
	List	   *to;				/* ... and the join's that equal them, or NULL */
	bool		ok;				/* every parameter met has one */
} ProbeRemap;

static Node *
probe_remap_mutator(Node *node, ProbeRemap *rm)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Param))
	{
		Param	   *p = (Param *) node;
		Param	   *to = NULL;
		Param	   *np;
		ListCell   *lf;
		ListCell   *lt;

		forboth(lf, rm->from, lt, rm->to)
			if (p->paramkind == PARAM_EXEC && lfirst_int(lf) == p->paramid)
				to = lfirst(lt);

		if (to == NULL || to->paramtype != p->paramtype)
		{
			rm->ok = false;
			return node;
		}
		np = copyObject(p);
		np->paramid = to->paramid;
		return (Node *) np;
	}
	return expression_tree_mutator(node, probe_remap_mutator, rm);
}

static bool
probe_collect_subplans(Node *node, List **subplans)
{
	if (node == NULL)
		return false;
	if (IsA(node, SubPlan))
	{
		*subplans = lappend(*subplans, node);
		return false;
	}
	return expression_tree_walker(node, probe_collect_subplans, subplans);
}

/*
 * A second target for the probes: a correlated SubPlan in the inner's filter
 * (TPC-H Q20: partsupp's rows filtered by an aggregate over lineitem) whose
 * plan is an index scan, under Agg or Result.  The inner runs it for each of
 * its rows, with arguments that are the inner's columns; where an equality
 * of the inner's index ties such a column to a join parameter, the value is
 * known from the outer row.  The SubPlan's index conditions on those values
 * (the others dropped) then find a superset of what its runs will fetch, as
 * long as an equality on the index's first column is among them.  Advice
 * only: rows and results do not depend on it.  Sets 'ids' and 'qual' (over
 * the join's parameters) and returns true, or false where there is none.
 */
static bool
probe_subplan_target(PlannedStmt *stmt, Plan *inner, Index rti, Oid inner_index,
					 List *inner_qual, List *allowed, bool partial, List **ids, List **qual)
{
	List	   *tlist;
	List	   *subplans = NIL;
	ListCell   *lc;

	(void) probe_collect_subplans((Node *) probe_inner_filter(inner, &tlist), &subplans);
	foreach(lc, subplans)
	{
		SubPlan    *sp = lfirst(lc);
		Plan	   *plan;
		ProbeRemap	rm = {sp->parParam, NIL, true};
		ProbeParamCheck cx = {allowed, true};
		List	   *squal;
		List	   *kept = NIL;
		Oid			indexoid;
		bool		index_only;
		Index		srti;
		bool		first = false;
		ListCell   *la;
		ListCell   *lq;
		Relation	index;

		if (sp->useHashTable || sp->parParam == NIL ||
			list_length(sp->parParam) != list_length(sp->args))
			continue;
		plan = list_nth(stmt->subplans, sp->plan_id - 1);
		while (plan != NULL && (IsA(plan, Agg) || IsA(plan, Result)) && plan->initPlan == NIL)
			plan = plan->lefttree;
		if (plan == NULL || plan->initPlan != NIL ||
			!probe_inner(stmt, plan, &srti, &indexoid, &index_only, &squal))
			continue;
		foreach(la, sp->args)
			rm.to = lappend(rm.to, probe_arg_param(lfirst(la), rti, tlist, inner_index,
												   inner_qual, allowed));
		index = index_open(indexoid, NoLock);
		foreach(lq, squal)
		{
			Node	   *clause;

			rm.ok = true;
			clause = probe_remap_mutator(lfirst(lq), &rm);
			if (!rm.ok)
				continue;
			kept = lappend(kept, clause);
			if (probe_equality_column(index, clause) == 1)
				first = true;
		}
		index_close(index, NoLock);
		(void) probe_params_walker((Node *) kept, &cx);
		if (!first || !cx.ok || contain_volatile_functions((Node *) kept) ||
			(partial && !probe_keys_plain(kept)))
			continue;
		*ids = list_make3_oid(indexoid, index_only, srti);
		*qual = kept;
		return true;
	}
	return false;
}

/*
 * Are nearly all of the heap's blocks all-visible (pg_class.relallvisible,
 * as the planner's index-only scan costs take it)?  Then an index-only
 * inner's probes read index leaves only, and those do not steer the
 * look-ahead (probe_finish): ProbePrefetch would only sample (TPC-H Q16 on
 * 19: 318 probes of 29,581 rows, nothing advised).
 */
static bool
probe_heap_all_visible(PlannedStmt *stmt, Index rti)
{
	Relation	rel;
	bool		all;

	/* the planner holds a lock on every relation of the plan */
	rel = table_open(rt_fetch(rti, stmt->rtable)->relid, NoLock);
	all = rel->rd_rel->relpages > 0 &&
		rel->rd_rel->relallvisible >= rel->rd_rel->relpages * PROBE_ALL_VISIBLE;
	table_close(rel, NoLock);
	return all;
}

/*
 * Whose rows does the plan return: this process's own, a share of them (a
 * parallel-aware node reads a share of its input), or several processes'
 * (a Gather or Gather Merge below; what is under it is not looked at)?
 */
typedef enum ProbeRows
{
	PROBE_ROWS_OWN,
	PROBE_ROWS_SHARE,
	PROBE_ROWS_GATHERED,
} ProbeRows;

static ProbeRows
probe_rows(Plan *plan)
{
	ProbeRows	r = PROBE_ROWS_OWN;
	ListCell   *lc;

	if (plan == NULL)
		return PROBE_ROWS_OWN;
	check_stack_depth();
	if (IsA(plan, Gather) || IsA(plan, GatherMerge))
		return PROBE_ROWS_GATHERED;
	if (plan->parallel_aware)
		return PROBE_ROWS_SHARE;
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			r = Max(r, probe_rows(lfirst(lc)));
	if (IsA(plan, CustomScan))
		foreach(lc, ((CustomScan *) plan)->custom_plans)
			r = Max(r, probe_rows(lfirst(lc)));
	if (IsA(plan, SubqueryScan))
		r = Max(r, probe_rows(((SubqueryScan *) plan)->subplan));
	r = Max(r, probe_rows(plan->lefttree));
	return Max(r, probe_rows(plan->righttree));
}

/*
 * Does a scan in the plan read relation 'relid'?  'whole': a Seq Scan, which
 * reads all of it through the OS page cache (dio_subst_walk leaves core's
 * Seq Scan of a relation that a nested loop above probes).
 */
static bool
probe_reads_relation(PlannedStmt *stmt, Plan *plan, Oid relid, bool whole)
{
	ListCell   *lc;

	if (plan == NULL)
		return false;
	check_stack_depth();
	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
		case T_CustomScan:
			if (((Scan *) plan)->scanrelid > 0 && (!whole || IsA(plan, SeqScan)) &&
				rt_fetch(((Scan *) plan)->scanrelid, stmt->rtable)->relid == relid)
				return true;
			break;
		default:
			break;
	}
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			if (probe_reads_relation(stmt, lfirst(lc), relid, whole))
				return true;
	if (IsA(plan, CustomScan))
		foreach(lc, ((CustomScan *) plan)->custom_plans)
			if (probe_reads_relation(stmt, lfirst(lc), relid, whole))
				return true;
	if (IsA(plan, SubqueryScan) &&
		probe_reads_relation(stmt, ((SubqueryScan *) plan)->subplan, relid, whole))
		return true;
	return probe_reads_relation(stmt, plan->lefttree, relid, whole) ||
		probe_reads_relation(stmt, plan->righttree, relid, whole);
}

/*
 * Have the ProbePrefetch with plan node ID 'feeder' read the inner's heap in
 * chunks directly, ahead of the probes, for the inner to take the images
 * (scan_feed.c; the inner made a PrefetchIndexScan that takes them): where
 * probes in key order walk the heap forward (the inner index's leading
 * column follows the heap's order, by the statistics), the heap is one
 * DirectSeqScan would read directly, and the inner fetches heap tuples
 * (not index-only).  Below a parallel-aware outer each process probes for
 * its share of the outer rows, so the processes' walks interleave over the
 * same chunks: there the images are shared (PROBE_FEED_SHARED), each chunk
 * read once for all of them.  Not above a Gather (its rows come from
 * several processes, in no order of the inner's), nor where the outer plan
 * reads the inner's relation itself (TPC-H Q21 scans lineitem and probes it
 * in the same order): its reads leave the probes' blocks cached.
 */
/* Chunk images pg_dio.probe_shared_memory holds, or 0: no sharing. */
static int
probe_shared_slots(int kb)
{
	int			n = kb / DIO_FEED_CHUNK_KB;

	return n < PROBE_SHARED_MIN_SLOTS ? 0 : n;
}

static ProbeFeed
probe_feed_inner(PlannedStmt *stmt, NestLoop *nl, Oid indexoid, bool index_only,
				 Index rti, int feeder, const DioPlanSettings *set)
{
	Oid			relid = rt_fetch(rti, stmt->rtable)->relid;
	Plan	  **inner = &nl->join.plan.righttree;
	Relation	rel;
	BlockNumber nblocks;
	ProbeRows	rows = probe_rows(nl->join.plan.lefttree);

	if (!set->probe_direct_read || index_only || rows == PROBE_ROWS_GATHERED)
		return PROBE_FEED_NONE;
	/* the planner holds a lock on every relation of the plan */
	rel = table_open(relid, NoLock);
	nblocks = RelationGetNumberOfBlocks(rel);
	table_close(rel, NoLock);
	if (nblocks < (BlockNumber) set->direct_scan_threshold || nblocks < PROBE_CHUNK * 2 ||
		pf_index_correlation(relid, indexoid) < PROBE_FEED_MIN_CORR ||
		probe_reads_relation(stmt, nl->join.plan.lefttree, relid, false))
		return PROBE_FEED_NONE;
	if (IsA(*inner, Memoize))
		inner = &(*inner)->lefttree;
	if (rows == PROBE_ROWS_SHARE && probe_shared_slots(set->probe_shared_memory_kb) == 0)
		return PROBE_FEED_NONE;
	if (!pf_make_fed(stmt, inner, feeder, set))
		return PROBE_FEED_NONE;
	return rows == PROBE_ROWS_SHARE ? PROBE_FEED_SHARED : PROBE_FEED_OWN;
}

/*
 * The outer rows the planner expects over all processes of a parallel query
 * ('participants' per row of one), as an int for custom_private: a share of
 * them in each process where the outer is parallel-aware; otherwise each
 * process runs all of them (a Hash's input) and they count once.
 */
static int
probe_all_rows(Plan *outer, double participants)
{
	double		rows = outer->plan_rows;

	if (probe_rows(outer) == PROBE_ROWS_SHARE)
		rows *= participants;
	return (int) Min(rows, (double) INT_MAX);
}

/*
 * A ProbePrefetch over 'outer', returning its rows as they are: its scan
 * tuple is the outer's target list (custom_scan_tlist, OUTER_VAR Vars over
 * lefttree, which EXPLAIN deparses through), its target list that tuple.
 */
static CustomScan *
probe_make_node(Plan *outer, int *next_id)
{
	CustomScan *cscan;
	AttrNumber	resno = 0;
	ListCell   *lc;

	cscan = makeNode(CustomScan);
	cscan->scan.plan.startup_cost = outer->startup_cost;
	cscan->scan.plan.total_cost = outer->total_cost;
	cscan->scan.plan.plan_rows = outer->plan_rows;
	cscan->scan.plan.plan_width = outer->plan_width;
	/* EXPLAIN's "Disabled" compares a node's count with its children's */
	cscan->scan.plan.disabled_nodes = outer->disabled_nodes;
	cscan->scan.plan.parallel_safe = outer->parallel_safe;
	cscan->scan.plan.plan_node_id = (*next_id)++;
	cscan->scan.plan.extParam = bms_copy(outer->extParam);
	cscan->scan.plan.allParam = bms_copy(outer->allParam);
	cscan->scan.plan.lefttree = outer;
	cscan->scan.scanrelid = 0;
	foreach(lc, outer->targetlist)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);
		Var		   *ov = makeVarFromTargetEntry(OUTER_VAR, tle);
		Var		   *iv;

		resno++;
		cscan->custom_scan_tlist = lappend(cscan->custom_scan_tlist,
										   makeTargetEntry((Expr *) ov, resno, tle->resname,
														   tle->resjunk));
		iv = makeVar(INDEX_VAR, resno, exprType((Node *) tle->expr),
					 exprTypmod((Node *) tle->expr), exprCollation((Node *) tle->expr), 0);
		cscan->scan.plan.targetlist = lappend(cscan->scan.plan.targetlist,
											  makeTargetEntry((Expr *) iv, resno, tle->resname,
															  tle->resjunk));
	}
	cscan->flags = 0;
	cscan->custom_plans = list_make1(outer);
	cscan->custom_relids = NULL;
	cscan->methods = &probe_methods;
	return cscan;
}

/*
 * A ProbePrefetch over the outer plan of Nested Loop 'nl' (after setrefs.c),
 * or NULL where it does not apply (file header).  The node returns the outer
 * plan's rows as they are: its scan tuple is the outer's target list
 * (custom_scan_tlist, OUTER_VAR Vars over lefttree, which EXPLAIN deparses
 * through), its target list that tuple.  custom_private = (((index OID,
 * index-only, heap's range table index) of each target), (PARAM_EXEC
 * numbers), (outer columns setting them), (whether it reads the inner's
 * heap for it: probe_feed_inner)); custom_exprs = (each target's
 * index conditions): the inner's, then a SubPlan's (probe_subplan_target).
 * 'next_id' gives it a plan node ID of its own.
 */
Plan *
dio_probe_substitute(PlannedStmt *stmt, NestLoop *nl, bool plain, bool partial,
					 double participants, int *next_id, const DioPlanSettings *set)
{
	Plan	   *outer = nl->join.plan.lefttree;
	CustomScan *cscan;
	ProbeParamCheck cx = {NIL, true};
	List	   *attnos = NIL;
	List	   *indexqual;
	ListCell   *lc;
	Oid			indexoid;
	bool		index_only;
	Index		rti;
	List	   *sids;
	List	   *squal;
	bool		has_sub;
	ProbeFeed	feed;

	if (!set->enable_probe_prefetch || !plain || nl->nestParams == NIL ||
		outer == NULL || !probe_outer_ok(outer, partial))
		return NULL;
	if (!probe_inner(stmt, nl->join.plan.righttree, &rti, &indexoid, &index_only,
					 &indexqual))
		return NULL;
	/* a Seq Scan of the inner's relation in the outer leaves its blocks cached */
	if (probe_reads_relation(stmt, outer, rt_fetch(rti, stmt->rtable)->relid, true))
		return NULL;
	foreach(lc, nl->nestParams)
	{
		NestLoopParam *nlp = (NestLoopParam *) lfirst(lc);

		if (!IsA(nlp->paramval, Var) || nlp->paramval->varno != OUTER_VAR)
			return NULL;
		cx.allowed = lappend_int(cx.allowed, nlp->paramno);
		attnos = lappend_int(attnos, nlp->paramval->varattno);
	}
	(void) probe_params_walker((Node *) indexqual, &cx);
	if (!cx.ok || contain_volatile_functions((Node *) indexqual) ||
		(partial && !probe_keys_plain(indexqual)))
		return NULL;
	has_sub = probe_subplan_target(stmt, nl->join.plan.righttree, rti, indexoid, indexqual,
								   cx.allowed, partial, &sids, &squal);
	if (index_only && !has_sub && probe_heap_all_visible(stmt, rti))
		return NULL;

	cscan = probe_make_node(outer, next_id);
	feed = probe_feed_inner(stmt, nl, indexoid, index_only, rti,
							cscan->scan.plan.plan_node_id, set);
	/* the shared images are in the parallel query's DSM (probe_estimate_dsm) */
	cscan->scan.plan.parallel_aware = (feed == PROBE_FEED_SHARED);
	cscan->custom_private = list_make4(list_make1(list_make3_oid(indexoid, index_only, rti)),
									   cx.allowed, attnos,
									   list_make2_int(feed, probe_all_rows(outer, participants)));
	cscan->custom_exprs = list_make1(indexqual);
	if (has_sub)
	{
		lfirst(list_head(cscan->custom_private)) =
			lappend(linitial(cscan->custom_private), sids);
		cscan->custom_exprs = lappend(cscan->custom_exprs, squal);
	}
	return &cscan->scan.plan;
}

/*
 * The index scan each run of a SubPlan starts with (TPC-H Q2: partsupp_pkey
 * on the part row's key, below a join with region): the first in the plan
 * whose index conditions use only the SubPlan's parameters 'params', one of
 * them an equality on the index's first column.  Looked for only through
 * nodes that run their children as core's executor does.
 */
static bool
probe_subplan_driver(PlannedStmt *stmt, Plan *plan, List *params, bool partial,
					 Index *rti, Oid *indexoid, bool *index_only, List **qual)
{
	if (plan == NULL || plan->initPlan != NIL)
		return false;
	check_stack_depth();
	switch (nodeTag(plan))
	{
		case T_IndexScan:
		case T_IndexOnlyScan:
			{
				ProbeParamCheck cx = {params, true};
				Relation	index;
				bool		first = false;
				ListCell   *lc;

				if (!probe_inner(stmt, plan, rti, indexoid, index_only, qual))
					return false;
				(void) probe_params_walker((Node *) *qual, &cx);
				if (!cx.ok || contain_volatile_functions((Node *) *qual) ||
					(partial && !probe_keys_plain(*qual)))
					return false;
				index = index_open(*indexoid, NoLock);
				foreach(lc, *qual)
					if (probe_equality_column(index, lfirst(lc)) == 1)
						first = true;
				index_close(index, NoLock);
				return first;
			}
		case T_Agg:
		case T_Result:
		case T_NestLoop:
		case T_HashJoin:
		case T_MergeJoin:
		case T_Hash:
		case T_Sort:
		case T_Material:
		case T_Memoize:
		case T_Limit:
		case T_Unique:
		case T_Group:
			return probe_subplan_driver(stmt, plan->lefttree, params, partial,
										rti, indexoid, index_only, qual) ||
				probe_subplan_driver(stmt, plan->righttree, params, partial,
									 rti, indexoid, index_only, qual);
		default:
			return false;
	}
}

/*
 * A ProbePrefetch over the outer plan of Hash Join 'hj', or NULL: where an
 * outer hash key runs a correlated SubPlan (TPC-H Q2's "(SubPlan 1) =
 * ps_supplycost"), once for each outer row, on arguments that are the outer
 * row's columns, the probes are that SubPlan's first index scan
 * (probe_subplan_driver) with its parameters set from the queued rows.
 * Advice only: its runs, rows and results stay core's.  An outer that is not
 * a Gather is read ahead as one that may be stopped early: the join reads a
 * single outer row when the hash table is empty, where below a Gather core's
 * workers read ahead of the join anyway.
 */
Plan *
dio_probe_hash_substitute(PlannedStmt *stmt, HashJoin *hj, bool plain, bool partial,
						  double participants, int *next_id, const DioPlanSettings *set)
{
	Plan	   *outer = hj->join.plan.lefttree;
	List	   *subplans = NIL;
	ListCell   *lc;

	if (!set->enable_probe_prefetch || !plain || outer == NULL)
		return NULL;
	if (!IsA(outer, Gather) && !IsA(outer, GatherMerge))
		partial = true;
	(void) probe_collect_subplans((Node *) hj->hashkeys, &subplans);
	if (subplans == NIL || !probe_outer_ok(outer, partial))
		return NULL;
	foreach(lc, subplans)
	{
		SubPlan    *sp = lfirst(lc);
		List	   *attnos = NIL;
		List	   *qual;
		ListCell   *la;
		Oid			indexoid;
		bool		index_only;
		Index		rti;
		CustomScan *cscan;

		if (sp->useHashTable || sp->parParam == NIL ||
			list_length(sp->parParam) != list_length(sp->args))
			continue;
		foreach(la, sp->args)
		{
			Var		   *v = lfirst(la);

			if (!IsA(v, Var) || v->varno != OUTER_VAR || v->varlevelsup != 0)
				break;
			attnos = lappend_int(attnos, v->varattno);
		}
		if (list_length(attnos) != list_length(sp->args) ||
			!probe_subplan_driver(stmt, list_nth(stmt->subplans, sp->plan_id - 1),
								  sp->parParam, partial, &rti, &indexoid, &index_only, &qual))
			continue;
		/* a Seq Scan of the probed relation in the outer leaves its blocks cached */
		if (probe_reads_relation(stmt, outer, rt_fetch(rti, stmt->rtable)->relid, true) ||
			(index_only && probe_heap_all_visible(stmt, rti)))
			continue;
		cscan = probe_make_node(outer, next_id);
		cscan->custom_private = list_make4(list_make1(list_make3_oid(indexoid, index_only, rti)),
										   list_copy(sp->parParam), attnos,
										   list_make2_int(PROBE_FEED_NONE,
														  probe_all_rows(outer, participants)));
		cscan->custom_exprs = list_make1(copyObject(qual));
		return &cscan->scan.plan;
	}
	return NULL;
}

/* ======================================================================
 * Executor
 * ====================================================================== */

static Node *
probe_create_state(CustomScan *cscan)
{
	ProbeState *ps = palloc0(sizeof(ProbeState));

	NodeSetTag(ps, T_CustomScanState);
	ps->css.methods = &probe_exec_methods;
	/* the queued rows are returned as they are */
	ps->css.slotOps = &TTSOpsMinimalTuple;
	return (Node *) ps;
}

/*
 * Open target 't': ids = (index OID, index-only, range table index of its
 * heap), indexqual its index conditions over the join's parameters.
 */
static void
probe_target_begin(ProbeState *ps, ProbeTarget *t, EState *estate, List *ids,
				   List *indexqual)
{
	IndexArrayKeyInfo *arraykeys;
	int			narraykeys;

	t->index_only = lsecond_oid(ids) != 0;
	t->heap = ExecGetRangeTableRelation(estate, (Index) lthird_oid(ids), false);
	t->index = index_open(linitial_oid(ids), AccessShareLock);
	ExecIndexBuildScanKeys(&ps->css.ss.ps, t->index, indexqual, false,
						   &t->keys, &t->nkeys, &t->rtkeys, &t->nrtkeys,
						   &arraykeys, &narraykeys);
	/* keys from arrays evaluated at run time: the probes are not worth it */
	if (narraykeys == 0)
		t->scan = dio_index_beginscan(t->heap, t->index, estate->es_snapshot, NULL,
									  t->nkeys, true);
	t->vmbuf = InvalidBuffer;
	t->nblocks = RelationGetNumberOfBlocks(t->heap);
	t->last_wanted = InvalidBlockNumber;
	t->reach = PROBE_CHUNK;
	t->last_leaf = InvalidBlockNumber;
	if (t->scan == NULL)
		return;
	if (pg_dio_os_cache_check && dio_cachestat_available() &&
		dio_stats_available() && !RelationUsesLocalBuffers(t->heap) &&
		dio_stream_slot_free())
		t->oscheck = dio_stream_begin_oscheck(t->heap);
	t->leafkey = dio_leaf_key_create(t->index, t->keys, t->nkeys);
}

static void
probe_begin(CustomScanState *node, EState *estate, int eflags)
{
	ProbeState *ps = (ProbeState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *targets = linitial(cscan->custom_private);
	List	   *paramnos = lsecond(cscan->custom_private);
	List	   *attnos = lthird(cscan->custom_private);
	int			i;

	Assert((eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) == 0);
	Assert(list_length(targets) >= 1 && list_length(targets) <= PROBE_MAX_TARGETS);
	ps->outer = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(ps->outer);
	/* rows come in the queue's slot or, passed through, in the outer's */
	node->ss.ps.resultopsfixed = false;
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	ps->probe_slot = MakeSingleTupleTableSlot(ExecGetResultType(ps->outer),
											  &TTSOpsMinimalTuple);
	ps->nparams = list_length(paramnos);
	ps->paramnos = palloc(sizeof(int) * ps->nparams);
	ps->attnos = palloc(sizeof(AttrNumber) * ps->nparams);
	for (i = 0; i < ps->nparams; i++)
	{
		ps->paramnos[i] = list_nth_int(paramnos, i);
		ps->attnos[i] = (AttrNumber) list_nth_int(attnos, i);
	}
	ps->econtext = CreateExprContext(estate);
	ps->params = palloc0(sizeof(ParamExecData) *
						 Max(list_length(estate->es_plannedstmt->paramExecTypes), 1));
	ps->econtext->ecxt_param_exec_vals = ps->params;
	for (i = 0; i < list_length(targets); i++)
	{
		probe_target_begin(ps, &ps->tg[i], estate, list_nth(targets, i),
						   list_nth(cscan->custom_exprs, i));
		ps->ntargets = i + 1;
	}
	ps->outer_rows = lsecond_int(lfourth(cscan->custom_private));
	/* chunks read directly only where the OS page cache can be asked first */
	if (linitial_int(lfourth(cscan->custom_private)) && ps->tg[0].scan != NULL &&
		ps->tg[0].oscheck != NULL && probe_chunks(ps, &ps->tg[0]) != NULL)
		ps->feed = dio_feed_create(estate, cscan->scan.plan.plan_node_id, ps->tg[0].heap,
								   linitial_int(lfourth(cscan->custom_private)) == PROBE_FEED_SHARED);
	ps->direct_ahead = cscan->scan.plan.parallel_aware ? PROBE_SHARED_AHEAD : PROBE_DIRECT_AHEAD;

	ps->qcxt = AllocSetContextCreate(estate->es_query_cxt, "ProbePrefetch queue",
									 ALLOCSET_DEFAULT_SIZES);
	/* up to 'distance' rows ahead of the one returned */
	ps->max_allowed = Max(pg_dio_probe_prefetch_distance, 1);
	ps->qsize = ps->max_allowed + 1;
	ps->queue = palloc(sizeof(MinimalTuple) * ps->qsize);
	ps->qstate = palloc0(sizeof(uint8) * ps->qsize);
	ps->qseq = palloc0(sizeof(uint64) * ps->qsize);
	ps->qjump = palloc0(sizeof(bool) * ps->qsize);
	ps->outer_block = InvalidBlockNumber;
	ps->distance = 1;
	ps->stride = 1;
	ps->sample_gap = PROBE_IDLE_LIMIT;
}

/*
 * Will the inner read the block without waiting for storage: in shared
 * buffers, or in the OS page cache?  Then nothing is advised, and a probe
 * whose blocks are all cached counts toward sampling.
 */
static bool
probe_block_oscached(ProbeTarget *t, BlockNumber blk)
{
	if (t->oscheck != NULL && dio_stream_os_cached(t->oscheck, blk, 1) > 0)
	{
		t->blocks_oscached++;
		return true;
	}
	return false;
}

/* The bitmap of chunks advised, allocated on first use; NULL where none. */
static uint8 *
probe_chunks(ProbeState *ps, ProbeTarget *t)
{
	if (t->chunk_done == NULL && t->nblocks >= PROBE_CHUNK &&
		t->nblocks <= PROBE_CHUNK_MAX_BLOCKS && !(io_direct_flags & IO_DIRECT_DATA))
		t->chunk_done = MemoryContextAllocZero(GetMemoryChunkContext(ps),
												(t->nblocks / PROBE_CHUNK) / BITS_PER_BYTE + 1);
	return t->chunk_done;
}

/*
 * Are the probes dense: at the rate seen so far and over the outer rows the
 * planner expects (or more, if more came), will they want half of the heap's
 * blocks?  In a parallel query, the rows of all its processes: a chunk one
 * of them reads is in the OS page cache for the others' probes.  Then one request for a 128 kB chunk costs the device less than its
 * eight wanted blocks one by one (fio, this VM: 128 kB random reads at depth
 * 4 1.1 GB/s, 8 kB at depth 32 530 MB/s).  The kernel's read-ahead makes
 * core's reads of such a heap as large, once the pages around a miss are
 * cached.
 */
static bool
probe_dense(ProbeState *ps, ProbeTarget *t)
{
	double		probes;

	if (!t->dense && ps->probes >= PROBE_DENSE_AFTER)
	{
		probes = Max(ps->outer_rows, (double) ps->probes);
		t->dense = (double) t->blocks_seen / ps->probes * probes >=
			t->nblocks * PROBE_DENSE_TOUCHES;
	}
	return t->dense;
}

/*
 * Do the probes walk the heap forward: is 'blk', a block to be read, the
 * PROBE_SEQ_RUN-th in a row less than a chunk after the one before (a chunk
 * per row between probes while striding)?  Core's reads in that order get
 * the kernel's sequential read-ahead; advised block by block they would get
 * none, so such blocks are read directly in chunks ahead, or left to it.
 */
static bool
probe_sequential(ProbeTarget *t, BlockNumber blk)
{
	/* the first block, or the first after the outer jumped (probe_scan_blocks) */
	if (!BlockNumberIsValid(t->last_wanted))
	{
		t->last_wanted = blk;
		return t->run >= PROBE_SEQ_RUN;
	}
	/* a step back within a chunk: the chunks ahead were read for it */
	if (blk <= t->last_wanted && t->last_wanted - blk < PROBE_CHUNK)
		return t->run >= PROBE_SEQ_RUN;
	if (blk > t->last_wanted && blk - t->last_wanted <= t->reach)
		t->run = Min(t->run + 1, PROBE_SEQ_RUN);
	else
		t->run = 0;
	t->last_wanted = blk;
	return t->run >= PROBE_SEQ_RUN;
}

/* Was the chunk of 'blk' advised? */
static inline bool
probe_chunk_done(ProbeTarget *t, BlockNumber blk)
{
	BlockNumber chunk = blk / PROBE_CHUNK;

	return t->chunk_done != NULL && blk < t->nblocks &&
		(t->chunk_done[chunk / BITS_PER_BYTE] & (1 << (chunk % BITS_PER_BYTE))) != 0;
}

/*
 * Advise chunk 'chunk' of the heap unless done or cached ('cached' of its
 * blocks are in the OS page cache; -1: not asked yet); whether it was.
 */
static bool
probe_advise_chunk(ProbeTarget *t, BlockNumber chunk, int cached)
{
	BlockNumber lo = chunk * PROBE_CHUNK;
	int			n;

	if (lo >= t->nblocks ||
		(t->chunk_done[chunk / BITS_PER_BYTE] & (1 << (chunk % BITS_PER_BYTE))))
		return false;
	t->chunk_done[chunk / BITS_PER_BYTE] |= 1 << (chunk % BITS_PER_BYTE);
	n = Min(PROBE_CHUNK, t->nblocks - lo);
	if (cached < 0 && t->oscheck != NULL)
		cached = dio_stream_os_cached(t->oscheck, lo, n);
	/* all in the OS page cache: no read, and warm runs go to sampling */
	if (cached == n)
	{
		t->blocks_oscached += n;
		return false;
	}
	(void) smgrprefetch(RelationGetSmgr(t->heap), MAIN_FORKNUM, lo, n);
	t->blocks_advised += n;
	t->chunks_advised++;
	return true;
}

/*
 * Read chunk 'chunk' of the inner's heap directly, for the inner to take the
 * images (scan_feed.c), unless done, read by another process of the parallel
 * query (true: nothing to advise), or not worth it: any of it is in the OS
 * page cache, or fewer than half of its blocks pass rules 2-3 (all-visible,
 * not in shared buffers; only those will be used), or the feed is full or
 * cannot read it in one request (pg_dio.io_size below 128 kB).
 * Whether it was submitted; '*cached' is set to how many of its blocks the
 * OS page cache held, once asked.
 */
static bool
probe_direct_chunk(ProbeState *ps, ProbeTarget *t, BlockNumber chunk, int *cached)
{
	BlockNumber lo = chunk * PROBE_CHUNK;
	uint16		mask = 0;
	int			usable = 0;
	int			n;

	if (lo >= t->nblocks ||
		(t->chunk_done[chunk / BITS_PER_BYTE] & (1 << (chunk % BITS_PER_BYTE))))
		return false;
	n = Min(PROBE_CHUNK, t->nblocks - lo);
	if (dio_feed_claimed(ps->feed, lo))
	{
		/* another process of the parallel query reads it for all */
		t->chunk_done[chunk / BITS_PER_BYTE] |= 1 << (chunk % BITS_PER_BYTE);
		return true;
	}
	*cached = dio_stream_os_cached(t->oscheck, lo, n);
	if (*cached > (ps->css.ss.ps.plan->parallel_aware ? n / 2 : 0))
		return false;
	for (int i = 0; i < n; i++)
		if (VM_ALL_VISIBLE(t->heap, lo + i, &t->vmbuf) && !dio_block_resident(t->heap, lo + i))
		{
			mask |= 1 << i;
			usable++;
		}
	if (usable * 2 < n || !dio_feed_can_submit(ps->feed, lo, n))
		return false;
	t->chunk_done[chunk / BITS_PER_BYTE] |= 1 << (chunk % BITS_PER_BYTE);
	dio_feed_submit(ps->feed, lo, n, mask);
	t->blocks_direct += usable;
	t->chunks_direct++;
	return true;
}

/*
 * How many rows apart tg[0]'s forward probes need to run, after one that
 * moved from block 'before' to t->last_wanted.  Each probe of a forward walk
 * reads or advises the chunks ahead of its block; the rows between two of
 * them want blocks in that window, so probing every row would only cost an
 * index descent each.  The stride doubles while a stride's rows would move
 * less than a quarter of the window and halves above half of it, judged on
 * a row queued at that stride.  A probe that is not forward makes it 1, and
 * one that moved past the window has the rows skipped before it probed
 * (probe_backfill): their blocks may be in chunks no probe read.
 */
static void
probe_stride(ProbeState *ps, ProbeTarget *t, BlockNumber before)
{
	uint64		rows = ps->probing > ps->last_probed ? ps->probing - ps->last_probed : 1;
	int			stride = ps->stride;
	BlockNumber ahead = (ps->feed != NULL ? ps->direct_ahead : PROBE_SEQ_AHEAD) * PROBE_CHUNK;
	double		moved;

	ps->last_probed = Max(ps->last_probed, ps->probing);
	if (ps->resume && t->run >= PROBE_SEQ_RUN)
		return;					/* a new stretch of the walk: nothing to judge */
	if (ps->ntargets > 1 || t->index_only || t->run < PROBE_SEQ_RUN ||
		!BlockNumberIsValid(before) || t->last_wanted < before)
	{
		ps->backfill = stride > 1;
		stride = 1;
	}
	else
	{
		if (stride > 1 && t->last_wanted - before > ahead)
			ps->backfill = true;
		moved = (double) (t->last_wanted - before) * stride / rows;
		if (ps->probing < ps->stride_from)
			;					/* queued at another stride */
		else if (moved <= (ahead + PROBE_CHUNK) / 4)
			stride = Min(stride * 2, PROBE_IDLE_LIMIT);
		else if (moved > (ahead + PROBE_CHUNK) / 2)
			stride = Max(stride / 2, 1);
	}
	if (stride != ps->stride)
	{
		ps->stride = stride;
		ps->stride_from = ps->nrows + 1;
		ps->strided = 0;
	}
	t->reach = PROBE_CHUNK * stride;
}

/* Read chunk 'chunk' ahead of forward probes: directly, else advised. */
static bool
probe_read_chunk(ProbeState *ps, ProbeTarget *t, BlockNumber chunk)
{
	int			cached = -1;

	return probe_direct_chunk(ps, t, chunk, &cached) ||
		probe_advise_chunk(t, chunk, cached);
}

/*
 * Advise the heap blocks of the probe's first PROBE_MAX_BLOCKS blocks; once
 * dense, the chunks of all its blocks; where the probes walk forward, read
 * the block's chunk and direct_ahead more directly, or else nothing (the
 * kernel reads the walk ahead).  Whether any started a read.  Up
 * to PROBE_SEEN_MAX blocks are counted for the density.
 */
static bool
probe_scan_blocks(ProbeState *ps, ProbeTarget *t)
{
	BlockNumber last = InvalidBlockNumber;
	BlockNumber before;
	bool		dense = probe_dense(ps, t);
	int			nblocks = 0;
	bool		started = false;
	ItemPointer tid;

	/* a walk forward goes on where the outer jumps: it reads from there */
	if (ps->resume && t == &ps->tg[0])
		t->last_wanted = InvalidBlockNumber;
	before = t->last_wanted;
	index_rescan(t->scan, t->keys, t->nkeys, NULL, 0);
	while (nblocks < PROBE_SEEN_MAX &&
		   (tid = index_getnext_tid(t->scan, ForwardScanDirection)) != NULL)
	{
		BlockNumber blk = ItemPointerGetBlockNumber(tid);
		bool		seq;
		PrefetchBufferResult r;

		if (blk == last)
			continue;
		last = blk;
		nblocks++;
		t->blocks_seen++;
		if (!dense && nblocks > PROBE_MAX_BLOCKS)
			continue;
		if (t->index_only && VM_ALL_VISIBLE(t->heap, blk, &t->vmbuf))
			continue;
		if (dio_block_resident(t->heap, blk))
		{
			t->blocks_cached++;
			continue;
		}
		seq = probe_sequential(t, blk);
		if (seq && ps->feed != NULL && t == &ps->tg[0] && blk < t->nblocks)
		{
			/* the direct chunks read ahead slide with the probes */
			BlockNumber chunk = blk / PROBE_CHUNK;

			for (int i = 0; i <= ps->direct_ahead; i++)
				if (probe_read_chunk(ps, t, chunk + i))
					started = true;
			continue;
		}
		/* forward without direct reads: the kernel reads the walk ahead */
		if (seq || probe_chunk_done(t, blk))
			continue;
		if (dense && blk < t->nblocks && probe_chunks(ps, t) != NULL)
		{
			if (probe_advise_chunk(t, blk / PROBE_CHUNK, -1))
				started = true;
			continue;
		}
		if (probe_block_oscached(t, blk))
			continue;
		r = PrefetchBuffer(t->heap, MAIN_FORKNUM, blk);
		if (r.initiated_io)
		{
			t->blocks_advised++;
			started = true;
		}
		else
			t->blocks_cached++;
	}
	if (t == &ps->tg[0])
		probe_stride(ps, t, before);
	return started;
}

/* Set the probes' index keys from the queued outer row 'mt'. */
static void
probe_set_keys(ProbeState *ps, MinimalTuple mt)
{
	ExecStoreMinimalTuple(mt, ps->probe_slot, false);
	for (int i = 0; i < ps->nparams; i++)
	{
		ParamExecData *prm = &ps->params[ps->paramnos[i]];

		prm->value = slot_getattr(ps->probe_slot, ps->attnos[i], &prm->isnull);
	}
	ResetExprContext(ps->econtext);
	for (int i = 0; i < ps->ntargets; i++)
		ExecIndexEvalRuntimeKeys(ps->econtext, ps->tg[i].rtkeys, ps->tg[i].nrtkeys);
	ExecClearTuple(ps->probe_slot);
}

/* Advise the leaf page the probe for the row will start at; whether read. */
static bool
probe_leaf(ProbeTarget *t)
{
	BlockNumber leaf = dio_leaf_find(t->leafkey, t->index, t->heap, t->keys);
	PrefetchBufferResult r;

	bool		forward;

	/*
	 * Probes in index order find the same leaf over and over, or the next
	 * ones: the kernel's sequential read-ahead follows the probes' own reads
	 * of those, and advice a page at a time would stop it.
	 */
	if (!BlockNumberIsValid(leaf) || leaf == t->last_leaf)
		return false;
	forward = BlockNumberIsValid(t->last_leaf) && leaf > t->last_leaf &&
		leaf - t->last_leaf <= PROBE_CHUNK;
	t->last_leaf = leaf;
	if (forward)
		return false;
	r = PrefetchBuffer(t->index, MAIN_FORKNUM, leaf);
	if (r.initiated_io)
		t->leaves_advised++;
	else
		t->leaves_cached++;
	return r.initiated_io;
}

/* One target's probe (probe_advise); its index's statistics left alone. */
static bool
probe_target(ProbeState *ps, ProbeTarget *t, bool leaf)
{
	Relation	index = t->index;
	bool		enabled = index->pgstat_enabled;
	struct PgStat_TableStatus *info = index->pgstat_info;
	volatile bool started = false;

	/* core counts the inner's scans and reads of the index, not these */
	index->pgstat_enabled = false;
	index->pgstat_info = NULL;
	if (t->scan == NULL)
		return false;
	PG_TRY();
	{
		if (!leaf)
			started = probe_scan_blocks(ps, t);
		else if (t->leafkey != NULL)
			started = probe_leaf(t);
	}
	PG_FINALLY();
	{
		index->pgstat_enabled = enabled;
		index->pgstat_info = info;
	}
	PG_END_TRY();
	return started;
}

/*
 * For the queued outer row 'mt', on each target: the leaf its probe will
 * start at advised (leaf true), or the probe run and the heap blocks the
 * scan will fetch advised.  Whether any of them started a read.
 */
static bool
probe_advise(ProbeState *ps, MinimalTuple mt, bool leaf)
{
	bool		started = false;

	probe_set_keys(ps, mt);
	for (int i = 0; i < ps->ntargets; i++)
		if (probe_target(ps, &ps->tg[i], leaf))
			started = true;
	if (!leaf)
		ps->probes++;
	return started;
}

/* Adapt the look-ahead to whether a probe started a read. */
static void
probe_account(ProbeState *ps, bool started)
{
	if (started)
	{
		ps->idle = 0;
		ps->skipped = 0;
		ps->sample_gap = PROBE_IDLE_LIMIT;
		ps->distance = Min(ps->distance * 2, ps->max_allowed);
		ps->max_distance = Max(ps->max_distance, ps->distance);
	}
	else
	{
		/* a sample that read nothing: the next one twice as far */
		if (++ps->idle > PROBE_IDLE_LIMIT)
			ps->sample_gap = Min(ps->sample_gap * 2, PROBE_SAMPLE_MAX);
		ps->distance = Max(ps->distance - 1, 1);
	}
}

/* While idle: whether this row is the one to sample. */
static bool
probe_sample_due(ProbeState *ps)
{
	if (++ps->skipped < ps->sample_gap)
		return false;
	ps->skipped = 0;
	ps->sampled++;
	return true;
}

/*
 * The probe of the queued row at ring position 'pos', whose leaf is advised.
 * Only the heap's reads steer the look-ahead: whether a leaf's advice read
 * it or found it in the OS page cache cannot be told apart.
 */
static void
probe_finish(ProbeState *ps, int pos)
{
	ps->qstate[pos] = PQ_NONE;
	ps->probing = ps->qseq[pos];
	ps->resume = ps->qjump[pos];
	probe_account(ps, probe_advise(ps, ps->queue[pos], false));
	ps->resume = false;
}

/* The probes of the queued rows the stride skipped, in their order. */
static void
probe_backfill(ProbeState *ps)
{
	ps->backfill = false;
	for (int i = 0; i < ps->qcount; i++)
	{
		int			pos = (ps->qhead + i) % ps->qsize;

		if (ps->qstate[pos] == PQ_SKIP)
			probe_finish(ps, pos);
	}
}

/*
 * Queue one more outer row and probe for it; false at the outer's end.  With
 * a btree leaf to find and room ahead, a probe goes in two steps: its leaf
 * advised when the row is queued, the probe itself (reading that leaf) and
 * its heap blocks advised half the look-ahead later.
 */
static bool
probe_read_one(ProbeState *ps)
{
	TupleTableSlot *slot = ExecProcNode(ps->outer);
	MemoryContext old;
	MinimalTuple mt;
	int			pos;
	int			lag = ps->tg[0].leafkey != NULL ? ps->distance / 2 : 0;
	BlockNumber oblk;
	bool		jumped;

	if (TupIsNull(slot))
	{
		ps->outer_done = true;
		/* the rows whose leaf only was advised: their probes now */
		for (int i = 0; i < ps->qcount; i++)
		{
			pos = (ps->qhead + i) % ps->qsize;
			if (ps->qstate[pos] == PQ_LEAF)
				probe_finish(ps, pos);
		}
		return false;
	}
	old = MemoryContextSwitchTo(ps->qcxt);
	mt = ExecCopySlotMinimalTuple(slot);
	MemoryContextSwitchTo(old);
	pos = (ps->qhead + ps->qcount) % ps->qsize;
	ps->queue[pos] = mt;
	ps->qstate[pos] = PQ_NONE;
	ps->qseq[pos] = ++ps->nrows;
	ps->qcount++;

	/*
	 * While striding, a row of a heap scan that does not follow the one
	 * before in its heap (a parallel scan's next range) goes on with the
	 * walk elsewhere: it is probed, and read ahead of (probe_scan_blocks).
	 */
	oblk = ItemPointerIsValid(&slot->tts_tid) ?
		ItemPointerGetBlockNumber(&slot->tts_tid) : InvalidBlockNumber;
	jumped = ps->stride > 1 && BlockNumberIsValid(oblk) &&
		BlockNumberIsValid(ps->outer_block) &&
		(oblk < ps->outer_block || oblk - ps->outer_block > PROBE_OUTER_GAP);
	ps->outer_block = oblk;
	ps->qjump[pos] = jumped;
	if (jumped)
		ps->strided = 0;

	if (ps->tg[0].scan == NULL)
		return true;
	if (ps->idle >= PROBE_IDLE_LIMIT ? probe_sample_due(ps) :
		ps->stride == 1 || jumped || (++ps->strided % ps->stride) == 0)
	{
		if (lag > 0)
		{
			(void) probe_advise(ps, mt, true);
			ps->qstate[pos] = PQ_LEAF;
		}
		else
		{
			ps->probing = ps->nrows;
			ps->resume = jumped;
			probe_account(ps, probe_advise(ps, mt, false));
			ps->resume = false;
		}
	}
	else if (ps->idle < PROBE_IDLE_LIMIT)
		ps->qstate[pos] = PQ_SKIP;
	/* the row queued 'lag' rows before this one */
	if (lag > 0 && ps->qcount > lag)
	{
		pos = (ps->qhead + ps->qcount - 1 - lag) % ps->qsize;
		if (ps->qstate[pos] == PQ_LEAF)
			probe_finish(ps, pos);
	}
	if (ps->backfill)
		probe_backfill(ps);
	return true;
}

/*
 * Sampling (or no probes to make) with nothing queued: the outer's row
 * returned as it is, in the outer's slot, and a row every sample_gap rows
 * probed to see whether reading ahead pays again.
 */
static TupleTableSlot *
probe_pass(ProbeState *ps)
{
	TupleTableSlot *slot = ExecProcNode(ps->outer);
	MemoryContext old;
	MinimalTuple mt;

	if (TupIsNull(slot))
	{
		ps->outer_done = true;
		return ExecClearTuple(ps->css.ss.ss_ScanTupleSlot);
	}
	ps->nrows++;
	if (ps->tg[0].scan != NULL && probe_sample_due(ps))
	{
		old = MemoryContextSwitchTo(ps->qcxt);
		mt = ExecCopySlotMinimalTuple(slot);
		MemoryContextSwitchTo(old);
		ps->probing = ps->nrows;
		probe_account(ps, probe_advise(ps, mt, false));
		ExecClearTuple(ps->probe_slot);
		pfree(mt);
	}
	return slot;
}

static TupleTableSlot *
probe_exec(CustomScanState *node)
{
	ProbeState *ps = (ProbeState *) node;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	MinimalTuple mt;
	bool		pass;

	ExecClearTuple(slot);
	if (ps->returned != NULL)
	{
		pfree(ps->returned);
		ps->returned = NULL;
	}
	/* sampling: what is queued is returned, then rows pass through */
	pass = ps->tg[0].scan == NULL || ps->idle >= PROBE_IDLE_LIMIT;
	if (pass && ps->qcount == 0 && !ps->outer_done)
		return probe_pass(ps);
	/* keep 'distance' rows queued ahead of the one returned */
	while (!pass && !ps->outer_done && ps->qcount <= ps->distance)
	{
		CHECK_FOR_INTERRUPTS();
		if (!probe_read_one(ps))
			break;
	}
	if (ps->feed != NULL)
		dio_feed_flush(ps->feed);
	if (ps->qcount == 0)
	{
		if (ps->feed != NULL)
			dio_feed_finish(ps->feed);
		return slot;
	}
	mt = ps->queue[ps->qhead];
	ps->qstate[ps->qhead] = PQ_NONE;
	ps->qhead = (ps->qhead + 1) % ps->qsize;
	ps->qcount--;
	ps->returned = mt;
	return ExecStoreMinimalTuple(mt, slot, false);
}

static void
probe_rescan(CustomScanState *node)
{
	ProbeState *ps = (ProbeState *) node;

	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	if (ps->qcxt != NULL)
		MemoryContextReset(ps->qcxt);
	ps->returned = NULL;
	ps->qhead = ps->qcount = 0;
	ps->outer_done = false;
	ps->distance = 1;
	ps->backfill = false;
	ps->outer_block = InvalidBlockNumber;
	if (ps->feed != NULL)
		dio_feed_reset(ps->feed);
	/* 'idle' stays: a rescan does not bring the inner's blocks in or out of cache */
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(ps->outer, node->ss.ps.chgParam);
	if (ps->outer->chgParam == NULL)
		ExecReScan(ps->outer);
}

static void
probe_end(CustomScanState *node)
{
	ProbeState *ps = (ProbeState *) node;

	if (ps->feed != NULL)
		dio_feed_end(ps->feed);
	for (int i = 0; i < ps->ntargets; i++)
	{
		ProbeTarget *t = &ps->tg[i];

		if (t->scan != NULL)
			index_endscan(t->scan);
		if (t->oscheck != NULL)
			dio_stream_end(t->oscheck);
		if (t->index != NULL)
			index_close(t->index, NoLock);
		if (BufferIsValid(t->vmbuf))
			ReleaseBuffer(t->vmbuf);
	}
	if (ps->probe_slot != NULL)
		ExecDropSingleTupleTableSlot(ps->probe_slot);
	ExecEndNode(ps->outer);
}

/*
 * A parallel-aware ProbePrefetch (PROBE_FEED_SHARED) keeps the chunk images
 * its processes share in the parallel query's DSM: the leader is participant
 * 0, worker N participant N + 1.  Its size, pg_dio.probe_shared_memory at
 * the Gather's start, stays until the Gather's end.  Where the leader has no
 * feed (no image may be used), no process shares.
 */
static Size
probe_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	ProbeState *ps = (ProbeState *) node;

	ps->shared_slots = ps->feed != NULL ? probe_shared_slots(pg_dio_probe_shared_memory_kb) : 0;
	return dio_feed_shared_size(pcxt->nworkers + 1, ps->shared_slots);
}

static void
probe_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	ProbeState *ps = (ProbeState *) node;

	/* the executor installs the query's DSA while this runs */
	ps->dsa = node->ss.ps.state->es_query_dsa;
	dio_feed_shared_init(coordinate, pcxt->nworkers + 1, ps->shared_slots, false);
	if (ps->feed != NULL)
		dio_feed_share(ps->feed, coordinate, ps->dsa, 0);
}

/* The workers are gone: the leader leaves the images and they start empty. */
static void
probe_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	ProbeState *ps = (ProbeState *) node;

	if (ps->feed != NULL)
		dio_feed_detach(ps->feed);
	dio_feed_shared_init(coordinate, pcxt->nworkers + 1, ps->shared_slots, true);
	if (ps->feed != NULL)
		dio_feed_share(ps->feed, coordinate, ps->dsa, 0);
}

static void
probe_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	ProbeState *ps = (ProbeState *) node;

	if (ps->feed != NULL)
		dio_feed_share(ps->feed, coordinate, node->ss.ps.state->es_query_dsa,
					   ParallelWorkerNumber + 1);
}

/* Before the DSM goes: this process's reads published, nothing pinned. */
static void
probe_shutdown(CustomScanState *node)
{
	ProbeState *ps = (ProbeState *) node;

	if (ps->feed != NULL)
		dio_feed_detach(ps->feed);
}

/* One target's counters; 'what' prefixes their labels ("" or "SubPlan "). */
static void
probe_explain_target(ProbeTarget *t, const char *what, ExplainState *es)
{
	char		label[64];

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		ExplainIndentText(es);
		appendStringInfo(es->str, "%sHeap Blocks: advised=%" PRIu64 " in shared buffers=%" PRIu64
						 " os-cached=%" PRIu64,
						 what, t->blocks_advised, t->blocks_cached, t->blocks_oscached);
		if (t->chunks_advised > 0)
			appendStringInfo(es->str, " chunks=%" PRIu64, t->chunks_advised);
		appendStringInfoChar(es->str, '\n');
		if (t->leafkey != NULL)
		{
			ExplainIndentText(es);
			appendStringInfo(es->str, "%sLeaf Pages: advised=%" PRIu64 " in shared buffers=%" PRIu64 "\n",
							 what, t->leaves_advised, t->leaves_cached);
		}
		return;
	}
#define PROBE_PROP(name, value) \
	do { \
		snprintf(label, sizeof(label), "%s%s", what, (name)); \
		ExplainPropertyUInteger(label, NULL, (value), es); \
	} while (0)
	PROBE_PROP("Heap Blocks Advised", t->blocks_advised);
	PROBE_PROP("Heap Blocks In Shared Buffers", t->blocks_cached);
	PROBE_PROP("Heap Blocks OS-Cached", t->blocks_oscached);
	PROBE_PROP("Heap Chunks Advised", t->chunks_advised);
	if (t->leafkey != NULL)
	{
		PROBE_PROP("Leaf Pages Advised", t->leaves_advised);
		PROBE_PROP("Leaf Pages In Shared Buffers", t->leaves_cached);
	}
#undef PROBE_PROP
}

static void
probe_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	ProbeState *ps = (ProbeState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *targets = linitial(cscan->custom_private);
	char	   *idxname = get_rel_name(linitial_oid(linitial(targets)));

	ExplainPropertyText("Probe Index", idxname ? idxname : "?", es);
	if (list_length(targets) > 1)
	{
		idxname = get_rel_name(linitial_oid(lsecond(targets)));
		ExplainPropertyText("SubPlan Probe Index", idxname ? idxname : "?", es);
	}
	if (!es->analyze || ps->qcxt == NULL)
		return;
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		ExplainIndentText(es);
		appendStringInfo(es->str, "Probes: %" PRIu64 " look-ahead max=%d",
						 ps->probes, ps->max_distance);
		if (ps->sampled > 0)
			appendStringInfo(es->str, " sampled=%" PRIu64, ps->sampled);
		appendStringInfoChar(es->str, '\n');
	}
	else
	{
		ExplainPropertyUInteger("Probes", NULL, ps->probes, es);
		ExplainPropertyUInteger("Sampled Probes", NULL, ps->sampled, es);
		ExplainPropertyInteger("Look-ahead Max", NULL, ps->max_distance, es);
	}
	probe_explain_target(&ps->tg[0], "", es);
	if (ps->feed != NULL)
	{
		const DioFeedCounters *fc = dio_feed_counters(ps->feed);

		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			ExplainIndentText(es);
			appendStringInfo(es->str, "Direct Reads: chunks=%" PRIu64 " blocks=%" PRIu64
							 " used=%" PRIu64 " unusable=%" PRIu64,
							 fc->chunks, fc->blocks, fc->used, fc->unusable);
			if (node->ss.ps.plan->parallel_aware)
				appendStringInfo(es->str, " waits=%" PRIu64 " timeouts=%" PRIu64,
								 fc->waits, fc->timeouts);
			appendStringInfo(es->str, "%s\n", fc->stopped ? " (stopped: sparse)" : "");
		}
		else
		{
			ExplainPropertyUInteger("Direct Chunks", NULL, fc->chunks, es);
			ExplainPropertyUInteger("Direct Blocks", NULL, fc->blocks, es);
			ExplainPropertyUInteger("Direct Blocks Used", NULL, fc->used, es);
			ExplainPropertyUInteger("Direct Blocks Unusable", NULL, fc->unusable, es);
			if (node->ss.ps.plan->parallel_aware)
			{
				ExplainPropertyUInteger("Direct Waits", NULL, fc->waits, es);
				ExplainPropertyUInteger("Direct Wait Timeouts", NULL, fc->timeouts, es);
			}
			ExplainPropertyBool("Direct Reads Stopped", fc->stopped, es);
		}
	}
	for (int i = 1; i < ps->ntargets; i++)
		probe_explain_target(&ps->tg[i], "SubPlan ", es);
}

void
dio_probe_init(void)
{
	DefineCustomBoolVariable("pg_dio.enable_probe_prefetch",
							 "Enables ProbePrefetch below nested loops whose inner side is a parameterized index scan.",
							 "It reads the outer side ahead and has the kernel read the heap blocks the inner's index probes will fetch.",
							 &pg_dio_enable_probe_prefetch,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_dio.probe_direct_read",
							 "Enables ProbePrefetch's direct reads of the heap its nested loop's probes walk forward.",
							 "Where the inner index follows its heap's order, ProbePrefetch reads the chunks ahead of the probes with O_DIRECT and the inner takes the blocks from those images.",
							 &pg_dio_probe_direct_read,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("pg_dio.probe_shared_memory",
							"Sets the shared memory for the heap chunks ProbePrefetch reads directly in a parallel query.",
							"Below a parallel-aware outer, the query's processes share the chunk images, in its dynamic shared memory. Below 1MB, they are not read directly there, and the node advises them instead.",
							&pg_dio_probe_shared_memory_kb,
							0, 0, PROBE_SHARED_MAX_KB,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pg_dio.probe_prefetch_distance",
							"Sets how many outer rows ProbePrefetch reads ahead at most.",
							NULL,
							&pg_dio_probe_prefetch_distance,
							64, 1, 1024,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	RegisterCustomScanMethods(&probe_methods);
}
