/*-------------------------------------------------------------------------
 *
 * scan_plan.c
 *	  The planner hook: pg_dio's scans take the place of core's scans in the
 *	  plan core has finished.
 *
 * pg_dio adds no paths: core plans every query exactly as it would without
 * pg_dio, and only then is each SeqScan, IndexScan or IndexOnlyScan that a
 * pg_dio scan can run in its place swapped for one (scan_direct.c's
 * dio_direct_substitute, scan_prefetch.c's pf_substitute).  So the plan's
 * shape, costs, target lists, parameterization and every choice made from
 * them are core's, and a pg_dio scan stands only where it returns what
 * core's scan would return, in the same order.
 *
 * pg_dio's scans run forward only and cannot mark and restore a position, so
 * nothing is swapped
 *	- in a plan that may be run backward: a scrollable cursor, or one that
 *	  may be made scrollable because its plan allows it (neither SCROLL nor
 *	  NO SCROLL: PostgreSQL then asks the plan, and a query that was not
 *	  planned to run once to completion may become such a cursor);
 *	- below a merge join's inner side that marks and restores (through
 *	  Result nodes, which pass marks down).
 *
 * Other extensions' plan nodes are theirs: the walk enters core's nodes, and
 * of the custom nodes only those known to run their children as generic plan
 * nodes (dio_generic_custom_nodes).  Any other custom node keeps its subtree
 * as planned, since it may require a child of a given type (TimescaleDB's
 * SkipScan requires an IndexScan or IndexOnlyScan below it).
 *
 * The settings that decide the swaps are read where core finishes planning
 * the statement's top query level (dio_upper_paths), not when the plan comes
 * back to this hook: a planner hook that pg_dio's calls may set them only
 * around the planner it calls in turn (pg_hint_plan's Set hints, loaded
 * before pg_dio), as the planner's own enable_* settings are.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"

#include "compat.h"
#include "scan_direct.h"
#include "scan_plan.h"
#include "scan_prefetch.h"
#include "scan_probe.h"

static planner_hook_type prev_planner_hook = NULL;
static create_upper_paths_hook_type prev_create_upper_paths_hook = NULL;

/*
 * The settings as the planner last saw them at a top query level's final
 * relation, and how many times it got there: the last time within a call of
 * dio_planner is its own statement's (a statement that the planning of
 * another plans and runs, a function's, finishes first).
 */
static DioPlanSettings dio_seen_settings;
static uint64 dio_seen_count = 0;

typedef struct DioSubst
{
	PlannedStmt *stmt;
	const DioPlanSettings *set;
	bool		plain;			/* a SELECT without row marks or modifying CTEs */
	int			next_id;		/* plan node ID for a node pg_dio adds */
	List	   *probed;			/* relations the nested loops above probe */
	List	   *rescanned;		/* relations two Seq Scans of the plan read */
	double		bound_fraction; /* of its input the innermost Limit above reads */
	double		participants;	/* the Gather's rows per row of one process; 1 */
} DioSubst;

/*
 * Custom nodes of other extensions whose custom_plans are run through
 * ExecProcNode and looked at only as Scans (scanrelid, which pg_dio's nodes
 * keep), each tested with its extension (test/extensions/).
 */
static const char *const dio_generic_custom_nodes[] = {
	"ChunkAppend",				/* TimescaleDB */
	"ConstraintAwareAppend",	/* TimescaleDB */
};

/* What a plan position asks of the node there (dio_subst_walk's 'pos'). */
#define DIO_POS_MARK		0x01	/* must support mark/restore */
#define DIO_POS_BOUNDED		0x02	/* a Limit above stops reading it early */
#define DIO_POS_PARTIAL		0x04	/* something above may stop reading it early */
#define DIO_POS_STREAM		(DIO_POS_BOUNDED | DIO_POS_PARTIAL)
#define DIO_POS_FIRST		0x08	/* read for its first row only, each run */

static Plan *dio_subst_walk(DioSubst *cx, Plan *plan, int pos);

static bool
dio_generic_custom_node(const CustomScan *cscan)
{
	for (size_t i = 0; i < lengthof(dio_generic_custom_nodes); i++)
		if (strcmp(cscan->methods->CustomName, dio_generic_custom_nodes[i]) == 0)
			return true;
	return false;
}

/*
 * The relation that nested loop 'nl' probes on each outer row through a
 * parameterized index scan (below Memoize), or InvalidOid.
 */
static Oid
dio_probed_relation(PlannedStmt *stmt, NestLoop *nl)
{
	Plan	   *inner = nl->join.plan.righttree;

	if (nl->nestParams == NIL || inner == NULL)
		return InvalidOid;
	if (IsA(inner, Memoize))
		inner = inner->lefttree;
	if (!IsA(inner, IndexScan) && !IsA(inner, IndexOnlyScan))
		return InvalidOid;
	return rt_fetch(((Scan *) inner)->scanrelid, stmt->rtable)->relid;
}

/* Count the Seq Scans of each relation in 'plan': OIDs, counts in 'seen'. */
static void
dio_count_seqscans(PlannedStmt *stmt, Plan *plan, List **oids, List **seen)
{
	List	   *kids = NIL;
	ListCell   *lc;

	if (plan == NULL)
		return;
	check_stack_depth();
	CHECK_FOR_INTERRUPTS();
	if (IsA(plan, SeqScan))
	{
		Oid			relid = rt_fetch(((Scan *) plan)->scanrelid, stmt->rtable)->relid;
		int			i = 0;

		foreach(lc, *oids)
		{
			if (lfirst_oid(lc) == relid)
				break;
			i++;
		}
		if (lc == NULL)
		{
			*oids = lappend_oid(*oids, relid);
			*seen = lappend_int(*seen, 1);
		}
		else
			list_nth_cell(*seen, i)->int_value++;
	}
	dio_count_seqscans(stmt, plan->lefttree, oids, seen);
	dio_count_seqscans(stmt, plan->righttree, oids, seen);
	if (IsA(plan, Append))
		kids = ((Append *) plan)->appendplans;
	else if (IsA(plan, MergeAppend))
		kids = ((MergeAppend *) plan)->mergeplans;
	else if (IsA(plan, CustomScan))
		kids = ((CustomScan *) plan)->custom_plans;
	else if (IsA(plan, SubqueryScan))
		kids = list_make1(((SubqueryScan *) plan)->subplan);
	foreach(lc, kids)
		dio_count_seqscans(stmt, (Plan *) lfirst(lc), oids, seen);
}

/*
 * The relations that two or more Seq Scans of the statement read and that
 * fit in effective_cache_size: the first scan's buffered reads leave them in
 * the OS page cache for the others, where direct reads would have each scan
 * read them from the device (TPC-H Q22 reads customer twice).
 */
static List *
dio_rescanned_relations(PlannedStmt *stmt)
{
	List	   *oids = NIL;
	List	   *seen = NIL;
	List	   *result = NIL;
	ListCell   *lo;
	ListCell   *ls;

	dio_count_seqscans(stmt, stmt->planTree, &oids, &seen);
	foreach(lo, stmt->subplans)
		dio_count_seqscans(stmt, (Plan *) lfirst(lo), &oids, &seen);
	forboth(lo, oids, ls, seen)
	{
		Relation	rel;
		BlockNumber nblocks;

		if (lfirst_int(ls) < 2)
			continue;
		/* the planner holds a lock on every relation of the plan */
		rel = table_open(lfirst_oid(lo), NoLock);
		nblocks = RelationGetNumberOfBlocks(rel);
		table_close(rel, NoLock);
		if ((double) nblocks <= (double) effective_cache_size)
			result = lappend_oid(result, lfirst_oid(lo));
	}
	return result;
}

static List *
dio_subst_list(DioSubst *cx, List *plans, int pos)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = dio_subst_walk(cx, (Plan *) lfirst(lc), pos);
	return plans;
}

/*
 * The fraction of its input's rows that a Limit is expected to read: the
 * planner's own model of it (adjust_limit_rows_costs), in the Limit's
 * costs: its input's startup cost plus that fraction of the rest.
 */
static double
dio_limit_fraction(Plan *limit)
{
	Plan	   *input = limit->lefttree;
	double		run = input->total_cost - input->startup_cost;

	if (run <= 0)
		return 1.0;
	return Max(0.0, Min(1.0, (limit->total_cost - input->startup_cost) / run));
}

/*
 * 'plan' with pg_dio's scans in place of core's where they apply; 'pos':
 * DIO_POS_* of its position.  A bound passes down only through nodes that
 * return their input's rows as they read them (a Sort or an Agg reads all
 * of it first).  Read partially (DIO_POS_PARTIAL): a Limit's input, a
 * subquery (EXISTS stops at its first row), a declared cursor, the inner
 * side of a nested loop that stops at an inner row's first match, both
 * sides of a merge join, and the input of any node below those that does
 * not read all of it first (a Sort or a Hash does).
 *
 * A SeqScan of a relation that a nested loop above it probes through an
 * index stays core's: its buffered reads leave the blocks in the OS page
 * cache for those probes (TPC-H Q21 scans lineitem and probes it by
 * l_orderkey, the table's order), where direct reads would leave them to be
 * read a second time.  So does a SeqScan of a relation that another SeqScan
 * of the statement reads too (dio_rescanned_relations).
 */
static Plan *
dio_subst_walk(DioSubst *cx, Plan *plan, int pos)
{
	Plan	   *sub = NULL;
	int			bounded = pos & DIO_POS_BOUNDED;
	int			stream = pos & DIO_POS_STREAM;
	int			inner;
	Oid			probed;

	if (plan == NULL)
		return NULL;
	check_stack_depth();
	CHECK_FOR_INTERRUPTS();

	switch (nodeTag(plan))
	{
		case T_SeqScan:
			{
				Oid			relid = rt_fetch(((Scan *) plan)->scanrelid,
											 cx->stmt->rtable)->relid;

				if (!list_member_oid(cx->probed, relid) &&
					!list_member_oid(cx->rescanned, relid))
					sub = dio_direct_substitute(cx->stmt, plan, cx->plain,
												bounded ? cx->bound_fraction : 1.0,
												cx->set);
			}
			break;
		case T_IndexScan:
		case T_IndexOnlyScan:
			if (!(pos & DIO_POS_MARK))
				sub = pf_substitute(cx->stmt, plan, cx->plain, bounded != 0,
									(pos & DIO_POS_FIRST) != 0, cx->set);
			break;
		case T_MergeJoin:
			plan->lefttree = dio_subst_walk(cx, plan->lefttree, DIO_POS_PARTIAL);
			plan->righttree = dio_subst_walk(cx, plan->righttree, DIO_POS_PARTIAL |
											 (((MergeJoin *) plan)->skip_mark_restore ? 0 : DIO_POS_MARK));
			break;
		case T_Limit:
			if (((Limit *) plan)->limitCount)
			{
				double		outer_fraction = cx->bound_fraction;

				cx->bound_fraction = dio_limit_fraction(plan);
				plan->lefttree = dio_subst_walk(cx, plan->lefttree, DIO_POS_STREAM);
				cx->bound_fraction = outer_fraction;
			}
			else
				plan->lefttree = dio_subst_walk(cx, plan->lefttree, stream);
			break;
		case T_Result:
			plan->lefttree = dio_subst_walk(cx, plan->lefttree, pos);
			break;
		case T_Memoize:
			plan->lefttree = dio_subst_walk(cx, plan->lefttree,
											pos & (DIO_POS_FIRST | DIO_POS_PARTIAL));
			break;
		case T_Sort:
		case T_Hash:
			/* read to the end before the first row is returned */
			plan->lefttree = dio_subst_walk(cx, plan->lefttree, 0);
			break;
		case T_IncrementalSort:
		case T_Unique:
			plan->lefttree = dio_subst_walk(cx, plan->lefttree, stream);
			break;
		case T_Gather:
		case T_GatherMerge:
			{
				double		outer_participants = cx->participants;

				/* below, a node's rows are one process's (compute_gather_rows) */
				if (plan->lefttree != NULL && plan->lefttree->plan_rows > 0)
					cx->participants = Max(plan->plan_rows / plan->lefttree->plan_rows, 1.0);
				plan->lefttree = dio_subst_walk(cx, plan->lefttree, stream);
				cx->participants = outer_participants;
			}
			break;
		case T_Append:
			dio_subst_list(cx, ((Append *) plan)->appendplans, stream);
			break;
		case T_MergeAppend:
			dio_subst_list(cx, ((MergeAppend *) plan)->mergeplans, stream);
			break;
		case T_BitmapAnd:
			dio_subst_list(cx, ((BitmapAnd *) plan)->bitmapplans, 0);
			break;
		case T_BitmapOr:
			dio_subst_list(cx, ((BitmapOr *) plan)->bitmapplans, 0);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan =
				dio_subst_walk(cx, ((SubqueryScan *) plan)->subplan, stream);
			break;
		case T_CustomScan:
			if (dio_generic_custom_node((CustomScan *) plan))
				dio_subst_list(cx, ((CustomScan *) plan)->custom_plans, stream);
			break;
		case T_NestLoop:
			inner = (((Join *) plan)->jointype == JOIN_SEMI ||
					 ((Join *) plan)->jointype == JOIN_ANTI ||
					 ((Join *) plan)->inner_unique) ? DIO_POS_PARTIAL : 0;
			/* a semi or anti join without a join filter stops at the first inner row */
			if ((((Join *) plan)->jointype == JOIN_SEMI ||
				 ((Join *) plan)->jointype == JOIN_ANTI) &&
				((Join *) plan)->joinqual == NIL)
				inner |= DIO_POS_FIRST;
			probed = dio_probed_relation(cx->stmt, (NestLoop *) plan);
			if (OidIsValid(probed))
				cx->probed = lappend_oid(cx->probed, probed);
			plan->lefttree = dio_subst_walk(cx, plan->lefttree, stream);
			if (OidIsValid(probed))
				cx->probed = list_delete_last(cx->probed);
			/* under a ProbePrefetch the inner stays core's unless it is fed */
			sub = dio_probe_substitute(cx->stmt, (NestLoop *) plan, cx->plain,
									   stream != 0, cx->participants, &cx->next_id, cx->set);
			if (sub != NULL)
			{
				plan->lefttree = sub;
				sub = NULL;
			}
			else
				plan->righttree = dio_subst_walk(cx, plan->righttree, inner);
			break;
		case T_HashJoin:
			plan->lefttree = dio_subst_walk(cx, plan->lefttree, pos & DIO_POS_PARTIAL);
			plan->righttree = dio_subst_walk(cx, plan->righttree, pos & DIO_POS_PARTIAL);
			sub = dio_probe_hash_substitute(cx->stmt, (HashJoin *) plan, cx->plain,
											(pos & (DIO_POS_STREAM | DIO_POS_PARTIAL)) != 0,
											cx->participants, &cx->next_id, cx->set);
			if (sub != NULL)
			{
				plan->lefttree = sub;
				sub = NULL;
			}
			break;
		default:
			/* a node that stops when its parent stops reads its input in part */
			plan->lefttree = dio_subst_walk(cx, plan->lefttree, pos & DIO_POS_PARTIAL);
			plan->righttree = dio_subst_walk(cx, plan->righttree, pos & DIO_POS_PARTIAL);
			break;
	}
	return sub != NULL ? sub : plan;
}

/* The largest plan node ID in the tree (core numbers them from 0). */
static int
dio_max_plan_id(Plan *plan)
{
	List	   *kids = NIL;
	ListCell   *lc;
	int			id;
	int			sub;

	if (plan == NULL)
		return -1;
	check_stack_depth();
	CHECK_FOR_INTERRUPTS();
	/* (each call once: Max() evaluates its arguments twice) */
	id = plan->plan_node_id;
	sub = dio_max_plan_id(plan->lefttree);
	id = Max(id, sub);
	sub = dio_max_plan_id(plan->righttree);
	id = Max(id, sub);
	if (IsA(plan, Append))
		kids = ((Append *) plan)->appendplans;
	else if (IsA(plan, MergeAppend))
		kids = ((MergeAppend *) plan)->mergeplans;
	else if (IsA(plan, BitmapAnd))
		kids = ((BitmapAnd *) plan)->bitmapplans;
	else if (IsA(plan, BitmapOr))
		kids = ((BitmapOr *) plan)->bitmapplans;
	else if (IsA(plan, CustomScan))
		kids = ((CustomScan *) plan)->custom_plans;
	else if (IsA(plan, SubqueryScan))
		kids = list_make1(((SubqueryScan *) plan)->subplan);
	foreach(lc, kids)
	{
		sub = dio_max_plan_id((Plan *) lfirst(lc));
		id = Max(id, sub);
	}
	return id;
}

/* May the plan, planned with these cursor options, be run backward? */
static bool
dio_may_scroll(int cursorOptions)
{
	if (cursorOptions & CURSOR_OPT_SCROLL)
		return true;
	/* run once, to completion (parallel-safe callers), or declared NO SCROLL */
	return (cursorOptions & (CURSOR_OPT_NO_SCROLL | CURSOR_OPT_PARALLEL_OK)) == 0;
}

static void
dio_settings_now(DioPlanSettings *set)
{
	set->enable_direct_scan = pg_dio_enable_direct_scan;
	set->direct_scan_threshold = pg_dio_direct_scan_threshold;
	set->enable_index_prefetch = pg_dio_enable_index_prefetch;
	set->index_prefetch_min_rows = pg_dio_index_prefetch_min_rows;
	set->enable_probe_prefetch = pg_dio_enable_probe_prefetch;
	set->probe_direct_read = pg_dio_probe_direct_read;
	set->probe_shared_memory_kb = pg_dio_probe_shared_memory_kb;
}

/* create_upper_paths_hook: the settings at a top query level's end */
static void
dio_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				RelOptInfo *output_rel, void *extra)
{
	if (prev_create_upper_paths_hook)
		prev_create_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage == UPPERREL_FINAL && root->parent_root == NULL)
	{
		dio_settings_now(&dio_seen_settings);
		dio_seen_count++;
	}
}

static PlannedStmt *
dio_planner(DIO_PLANNER_PARAMS)
{
	PlannedStmt *stmt;
	DioSubst	cx;
	DioPlanSettings set;
	uint64		seen = dio_seen_count;

	if (prev_planner_hook)
		stmt = prev_planner_hook(DIO_PLANNER_ARGS);
	else
		stmt = standard_planner(DIO_PLANNER_ARGS);

	/* as core planned; where nothing below reached core's planner, as they are */
	if (dio_seen_count != seen)
		set = dio_seen_settings;
	else
		dio_settings_now(&set);

	if (stmt->commandType == CMD_UTILITY || dio_may_scroll(cursorOptions))
		return stmt;
	if (!set.enable_direct_scan && !set.enable_index_prefetch)
		return stmt;

	cx.stmt = stmt;
	cx.set = &set;
	cx.plain = stmt->commandType == CMD_SELECT && stmt->rowMarks == NIL &&
		!stmt->hasModifyingCTE;
	cx.next_id = dio_max_plan_id(stmt->planTree) + 1;
	cx.probed = NIL;
	cx.bound_fraction = 1.0;
	cx.participants = 1.0;
	cx.rescanned = set.enable_direct_scan ? dio_rescanned_relations(stmt) : NIL;
	{
		ListCell   *lc;

		foreach(lc, stmt->subplans)
		{
			int			sub = dio_max_plan_id((Plan *) lfirst(lc)) + 1;

			cx.next_id = Max(cx.next_id, sub);
		}
	}
	stmt->planTree = dio_subst_walk(&cx, stmt->planTree,
									(cursorOptions & CURSOR_OPT_NO_SCROLL) ? DIO_POS_PARTIAL : 0);
	dio_subst_list(&cx, stmt->subplans, DIO_POS_PARTIAL);
	return stmt;
}

void
dio_plan_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = dio_planner;
	prev_create_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = dio_upper_paths;
}
