/*-------------------------------------------------------------------------
 *
 * diag_explain.c
 *	  EXPLAIN (IO) of pg_dio's scans, PostgreSQL 19: the prefetch and I/O
 *	  figures core shows for its Seq Scan and Bitmap Heap Scan, with the same
 *	  labels and layout.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/diag_explain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "commands/explain_format.h"

#include "compat.h"
#include "diag.h"

/*
 * Show 's' as core's EXPLAIN (IO) shows a scan's: nothing before the first
 * block was returned; the I/O line (text) only if there were I/Os.
 */
void
dio_explain_io_stats(ExplainState *es, const DioIOStats *s)
{
	if (s->prefetch_count == 0)
		return;
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		ExplainIndentText(es);
		appendStringInfo(es->str, "Prefetch: avg=%.2f max=%d capacity=%d\n",
						 (double) s->distance_sum / s->prefetch_count,
						 s->distance_max, s->distance_capacity);
		if (s->io_count > 0)
		{
			ExplainIndentText(es);
			appendStringInfo(es->str, "I/O: count=" UINT64_FORMAT " waits=" UINT64_FORMAT
							 " size=%.2f in-progress=%.2f\n",
							 s->io_count, s->wait_count,
							 (double) s->io_nblocks / s->io_count,
							 (double) s->io_in_progress / s->io_count);
		}
	}
	else
	{
		ExplainPropertyFloat("Average Prefetch Distance", NULL,
							 (double) s->distance_sum / s->prefetch_count, 3, es);
		ExplainPropertyInteger("Max Prefetch Distance", NULL, s->distance_max, es);
		ExplainPropertyInteger("Prefetch Capacity", NULL, s->distance_capacity, es);
		ExplainPropertyUInteger("I/O Count", NULL, s->io_count, es);
		ExplainPropertyUInteger("I/O Waits", NULL, s->wait_count, es);
		ExplainPropertyFloat("Average I/O Size", NULL,
							 (double) s->io_nblocks / Max(1, s->io_count), 3, es);
		ExplainPropertyFloat("Average I/Os In Progress", NULL,
							 (double) s->io_in_progress / Max(1, s->io_count), 3, es);
	}
}
