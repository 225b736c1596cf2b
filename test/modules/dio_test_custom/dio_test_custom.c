/*-------------------------------------------------------------------------
 *
 * dio_test_custom.c
 *	  A custom plan node that pg_dio does not know, for pg_dio's tests.
 *
 * Preloaded before pg_dio, its planner hook runs inside pg_dio's and wraps
 * each SeqScan of a table whose name starts with "wrapped_" in a
 * "DioTestWrapper" CustomScan, which keeps the scan in custom_plans and, as
 * TimescaleDB's SkipScan does with its child, raises an ERROR at executor
 * start unless that child is still a SeqScan.  The wrapper returns its
 * child's rows unchanged.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  test/modules/dio_test_custom/dio_test_custom.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "fmgr.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "compat.h"

PG_MODULE_MAGIC;

static planner_hook_type prev_planner_hook = NULL;

static Node *wrapper_create_state(CustomScan *cscan);
static void wrapper_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *wrapper_exec(CustomScanState *node);
static void wrapper_end(CustomScanState *node);
static void wrapper_rescan(CustomScanState *node);

static const CustomScanMethods wrapper_scan_methods = {
	.CustomName = "DioTestWrapper",
	.CreateCustomScanState = wrapper_create_state,
};

static const CustomExecMethods wrapper_exec_methods = {
	.CustomName = "DioTestWrapper",
	.BeginCustomScan = wrapper_begin,
	.ExecCustomScan = wrapper_exec,
	.EndCustomScan = wrapper_end,
	.ReScanCustomScan = wrapper_rescan,
};

static Node *
wrapper_create_state(CustomScan *cscan)
{
	CustomScanState *css = makeNode(CustomScanState);

	css->methods = &wrapper_exec_methods;
	return (Node *) css;
}

static void
wrapper_begin(CustomScanState *node, EState *estate, int eflags)
{
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Plan	   *child = linitial(cscan->custom_plans);

	if (!IsA(child, SeqScan))
		elog(ERROR, "unknown subscan type in DioTestWrapper: %d",
			 (int) nodeTag(child));
	node->custom_ps = list_make1(ExecInitNode(child, estate, eflags));
	/* the child's slot is returned as it is, whatever its type */
	node->ss.ps.resultopsfixed = false;
}

static TupleTableSlot *
wrapper_exec(CustomScanState *node)
{
	return ExecProcNode(linitial(node->custom_ps));
}

static void
wrapper_end(CustomScanState *node)
{
	ExecEndNode(linitial(node->custom_ps));
}

static void
wrapper_rescan(CustomScanState *node)
{
	ExecReScan(linitial(node->custom_ps));
}

/* the largest plan_node_id in a tree of core's nodes */
static int
max_plan_node_id(Plan *plan)
{
	if (plan == NULL)
		return -1;
	return Max(plan->plan_node_id,
			   Max(max_plan_node_id(plan->lefttree),
				   max_plan_node_id(plan->righttree)));
}

/* 'scan' inside a DioTestWrapper that returns the scan's target list */
static Plan *
wrap(Plan *scan, int *next_id)
{
	CustomScan *cscan = makeNode(CustomScan);
	ListCell   *lc;
	int			resno = 0;

	cscan->scan.plan.startup_cost = scan->startup_cost;
	cscan->scan.plan.total_cost = scan->total_cost;
	cscan->scan.plan.plan_rows = scan->plan_rows;
	cscan->scan.plan.plan_width = scan->plan_width;
	cscan->scan.plan.parallel_safe = scan->parallel_safe;
	cscan->scan.plan.plan_node_id = (*next_id)++;
	cscan->scan.scanrelid = 0;
	cscan->custom_plans = list_make1(scan);
	cscan->custom_scan_tlist = copyObject(scan->targetlist);
	foreach(lc, scan->targetlist)
	{
		TargetEntry *tle = lfirst(lc);
		Var		   *var = makeVar(INDEX_VAR, ++resno, exprType((Node *) tle->expr),
								  exprTypmod((Node *) tle->expr),
								  exprCollation((Node *) tle->expr), 0);

		cscan->scan.plan.targetlist =
			lappend(cscan->scan.plan.targetlist,
					makeTargetEntry((Expr *) var, resno, tle->resname, tle->resjunk));
	}
	cscan->methods = &wrapper_scan_methods;
	return &cscan->scan.plan;
}

/* 'plan' with each SeqScan of a "wrapped_" table wrapped */
static Plan *
wrap_walk(PlannedStmt *stmt, Plan *plan, int *next_id)
{
	if (plan == NULL)
		return NULL;
	if (IsA(plan, SeqScan))
	{
		RangeTblEntry *rte = rt_fetch(((Scan *) plan)->scanrelid, stmt->rtable);
		char	   *name = get_rel_name(rte->relid);

		if (name != NULL && strncmp(name, "wrapped_", 8) == 0)
			return wrap(plan, next_id);
		return plan;
	}
	plan->lefttree = wrap_walk(stmt, plan->lefttree, next_id);
	plan->righttree = wrap_walk(stmt, plan->righttree, next_id);
	return plan;
}

static PlannedStmt *
wrapper_planner(DIO_PLANNER_PARAMS)
{
	PlannedStmt *stmt;
	int			next_id;
	ListCell   *lc;

	if (prev_planner_hook)
		stmt = prev_planner_hook(DIO_PLANNER_ARGS);
	else
		stmt = standard_planner(DIO_PLANNER_ARGS);
	if (stmt->commandType == CMD_UTILITY)
		return stmt;
	next_id = max_plan_node_id(stmt->planTree);
	foreach(lc, stmt->subplans)
		next_id = Max(next_id, max_plan_node_id(lfirst(lc)));
	next_id++;
	stmt->planTree = wrap_walk(stmt, stmt->planTree, &next_id);
	foreach(lc, stmt->subplans)
		lfirst(lc) = wrap_walk(stmt, lfirst(lc), &next_id);
	return stmt;
}

void
_PG_init(void)
{
	RegisterCustomScanMethods(&wrapper_scan_methods);
	prev_planner_hook = planner_hook;
	planner_hook = wrapper_planner;
}
