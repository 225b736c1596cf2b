/*-------------------------------------------------------------------------
 *
 * scan_narrow.c
 *	  The narrow scan tuple of pg_dio's heap scans (DirectSeqScan and
 *	  PrefetchIndexScan): a virtual scan slot holding just the columns the
 *	  plan needs, filled by deforming the heap tuple straight into it.
 *
 * pg_dio's scans take the place of core's in the finished plan (scan_plan.c)
 * and keep its target list.  Where that is the relation's row (createplan.c's
 * physical target list), the node never projects and its parent deforms the
 * columns it uses.  Where it is an exact target list, a scan tuple of the
 * relation's row would be projected into a second slot on top of the
 * deforming; with a scan tuple of just the plain Vars needed (target list
 * first, in its order, then those only the quals use), a target list of plain
 * Vars matches it exactly and the node projects nothing.
 *
 * Lifetime: the slot's by-reference values point into the heap tuple, so the
 * caller keeps the tuple's page alive (pinned buffer or held direct read)
 * for as long as a heap tuple stored in the slot would need it, that is until
 * its next store or clear of the slot.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_narrow.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"

#include "scan_narrow.h"

/* Var(scanrelid, attno) -> Var(INDEX_VAR, its position in the scan tuple) */
typedef struct DioNarrowMap
{
	Index		scanrelid;
	List	   *scan_tlist;
} DioNarrowMap;

static Node *
dio_narrow_mutator(Node *node, DioNarrowMap *m)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == (int) m->scanrelid &&
		((Var *) node)->varlevelsup == 0)
	{
		Var		   *var = (Var *) node;
		ListCell   *lc;

		foreach(lc, m->scan_tlist)
		{
			TargetEntry *tle = lfirst_node(TargetEntry, lc);

			if (((Var *) tle->expr)->varattno == var->varattno)
			{
				Var		   *iv = copyObject(var);

				iv->varno = INDEX_VAR;
				iv->varattno = tle->resno;
				return (Node *) iv;
			}
		}
		elog(ERROR, "column %d missing from the scan tuple", var->varattno);
	}
	return expression_tree_mutator(node, dio_narrow_mutator, m);
}

/*
 * The scan tuple for a finished scan plan of relation 'scanrelid' (of natts
 * attributes) with target list *tlist and quals *quals (after setrefs.c), as
 * a custom_scan_tlist: the plain Vars used, target list first, in its order,
 * then those only the quals use.  *tlist and *quals are rewritten to
 * reference it (Var(INDEX_VAR, position)).
 *
 * NIL (scan tuple = the relation's row, nothing rewritten) for a target list
 * that is already the relation's row, where no column is used at all
 * (count(*) without quals: no scan tuple is needed), and for anything but
 * plain user-column Vars of this relation (system columns, whole-row Vars).
 * The plan must not be subject to EvalPlanQual (a plain SELECT without row
 * marks): its test tuples have the relation's row.
 */
List *
dio_narrow_substitute(Index scanrelid, int natts, List **tlist, List **quals)
{
	List	   *vars;
	ListCell   *lc;
	int			resno = 1;
	bool		physical = true;
	DioNarrowMap m = {.scanrelid = scanrelid};

	foreach(lc, *tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) tle->expr;

		if (!IsA(var, Var) || var->varno != (int) scanrelid || var->varattno != resno++)
			physical = false;
	}
	if (physical && list_length(*tlist) == natts)
		return NIL;

	vars = list_concat(pull_var_clause((Node *) *tlist, 0),
					   pull_var_clause((Node *) *quals, 0));
	foreach(lc, vars)
	{
		Var		   *var = (Var *) lfirst(lc);

		if (var->varno != (int) scanrelid || var->varlevelsup != 0 ||
			var->varattno <= 0 || var->varreturningtype != VAR_RETURNING_DEFAULT)
			return NIL;
	}
	m.scan_tlist = add_to_flat_tlist(NIL, vars);
	if (m.scan_tlist == NIL)
		return NIL;
	*tlist = (List *) dio_narrow_mutator((Node *) *tlist, &m);
	*quals = (List *) dio_narrow_mutator((Node *) *quals, &m);
	return m.scan_tlist;
}

/*
 * Set up the mapping of a narrow scan tuple 'scan_tlist' (made by
 * dio_narrow_substitute) onto the rows of a relation of descriptor 'desc'.
 * Allocates in the current memory context.
 */
void
dio_narrow_init(DioNarrow *n, TupleDesc desc, List *scan_tlist)
{
	int			i = 0;
	int32		off = 0;
	int32	   *fixed_off;
	ListCell   *lc;

	n->desc = desc;
	n->nout = list_length(scan_tlist);
	n->out_attno = palloc(sizeof(AttrNumber) * n->nout);
	n->cols = palloc(sizeof(DioNarrowCol) * n->nout);
	n->max_attno = 0;
	foreach(lc, scan_tlist)
	{
		Var		   *var = castNode(Var, lfirst_node(TargetEntry, lc)->expr);

		if (var->varattno <= 0 || var->varattno > desc->natts)
			elog(ERROR, "unexpected column %d in scan tuple", var->varattno);
		n->out_attno[i++] = var->varattno;
		n->max_attno = Max(n->max_attno, var->varattno);
	}

	/*
	 * Offsets of the leading fixed-length attributes in a tuple without
	 * nulls; a varlena right after them starts where they end, or aligned if
	 * it has a 4-byte header (decided per tuple: att_pointer_alignby).
	 */
	fixed_off = palloc(sizeof(int32) * n->max_attno);
	n->fixed_offsets = true;
	for (int a = 0; a < n->max_attno; a++)
	{
		CompactAttribute *att = TupleDescCompactAttr(desc, a);

		if (att->attlen == -1 && a == n->max_attno - 1)
		{
			fixed_off[a] = off;		/* not yet aligned */
			break;
		}
		if (att->attlen <= 0)
		{
			n->fixed_offsets = false;
			break;
		}
		off = att_nominal_alignby(off, att->attalignby);
		fixed_off[a] = off;
		off += att->attlen;
	}
	for (i = 0; i < n->nout; i++)
	{
		CompactAttribute *att = TupleDescCompactAttr(desc, n->out_attno[i] - 1);

		n->cols[i].off = n->fixed_offsets ? fixed_off[n->out_attno[i] - 1] : -1;
		n->cols[i].len = att->attlen;
		n->cols[i].byval = att->attbyval;
		n->cols[i].alignby = att->attalignby;
	}
	pfree(fixed_off);

	/* for the other tuples */
	n->att_out = palloc(sizeof(int16) * n->max_attno);
	for (int a = 0; a < n->max_attno; a++)
		n->att_out[a] = -1;
	for (i = 0; i < n->nout; i++)
		n->att_out[n->out_attno[i] - 1] = i;
}

/*
 * The narrow scan tuple's columns of heap tuple 'tup', walking its attributes
 * in order: NULLs from the null bitmap, each value at its offset aligned as
 * its length and header require, attributes the tuple lacks (added later)
 * from the relation's missing values.  (dio_narrow_store's slow path.)
 */
void
dio_narrow_deform(const DioNarrow *n, HeapTupleHeader tup, Datum *values, bool *isnull)
{
	TupleDesc	desc = n->desc;
	bool		hasnulls = (tup->t_infomask & HEAP_HASNULL) != 0;
	char	   *data = (char *) tup + tup->t_hoff;
	int			nfetch = Min(HeapTupleHeaderGetNatts(tup), n->max_attno);
	uintptr_t	off = 0;

	for (int a = 0; a < nfetch; a++)
	{
		CompactAttribute *att = TupleDescCompactAttr(desc, a);
		int			o = n->att_out[a];

		if (hasnulls && att_isnull(a, tup->t_bits))
		{
			if (o >= 0)
			{
				values[o] = (Datum) 0;
				isnull[o] = true;
			}
			continue;
		}
		if (att->attlen == -1)
			off = att_pointer_alignby(off, att->attalignby, -1, data + off);
		else
			off = att_nominal_alignby(off, att->attalignby);
		if (o >= 0)
		{
			values[o] = fetchatt(att, data + off);
			isnull[o] = false;
		}
		off = att_addlength_pointer(off, att->attlen, data + off);
	}
	for (int a = nfetch; a < n->max_attno; a++)
	{
		int			o = n->att_out[a];

		if (o >= 0)
			values[o] = getmissingattr(desc, a + 1, &isnull[o]);
	}
}
