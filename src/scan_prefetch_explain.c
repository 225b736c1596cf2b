/*-------------------------------------------------------------------------
 *
 * scan_prefetch_explain.c
 *	  EXPLAIN of PrefetchIndexScan and PrefetchIndexOnlyScan: core's index
 *	  scan fields, and the read-ahead's figures (with ANALYZE), the leader's
 *	  plus its parallel workers' (pf_total_counters).
 *
 * Runs in the leader after the node ran (workers have ended), or without
 * ANALYZE on a node that was never started: then it reads the plan only.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_prefetch_explain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "commands/explain_format.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"

#include "compat.h"
#include "diag.h"
#include "scan_prefetch_internal.h"
#include "scan_readahead.h"

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

void
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
