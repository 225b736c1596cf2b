/*-------------------------------------------------------------------------
 *
 * scan_feed.c
 *	  Direct heap images read ahead by one node for another's fetches.
 *
 * A nested loop's probes that walk the heap forward (TPC-H Q4 probes
 * lineitem_pkey in l_orderkey order, the table's order) read most of the
 * heap, and through the page cache that costs the kernel about as much CPU
 * as the device needs time (docs/benchmarks.md).  ProbePrefetch, which
 * knows the blocks ahead of the probes, submits O_DIRECT reads of their
 * chunks to pg_dio's engine (dio_feed_submit); the inner PrefetchIndexScan
 * takes a block's image from the feed (dio_feed_take) where it has one, and
 * else reads the block through the buffer manager.  The two nodes find the
 * feed by the feeder's plan node ID within their EState (dio_feed_find): the
 * nested loop begins its outer node first.
 *
 * Safety is DirectSeqScan's (docs/design.md): the feeder submits only blocks
 * that are all-visible in the visibility map and not in shared buffers, under
 * an MVCC snapshot outside SERIALIZABLE, with the replay-position bound read
 * before those bits (rules 1-3); a chunk's other blocks are read with it but
 * never used (its mask).  The consumer uses an image only if it passes
 * verification and is all-visible (rule 4, dio_direct_image_usable).
 *
 * Lifetime: images are held in submission order, the ones the consumer has
 * taken forming a prefix (the engine hands out reads in that order).  An
 * image stays held until the consumer asks for a block beyond its chunk or
 * the feeder is reset; the block the consumer holds (it may point into it)
 * is never given back under it.  dio_feed_end, or the resource owner on
 * ERROR, reaps every read still in flight.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_feed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "lib/ilist.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "diag.h"
#include "engine.h"
#include "safety.h"
#include "scan_feed.h"

/* chunk reads submitted and not yet given back, at most (and at most
 * pg_dio.queue_depth, the engine's limit for one stream) */
#define DIO_FEED_MAX		32
/*
 * Once this many blocks of chunks given back have been judged, a feed whose
 * consumer used fewer than DIO_FEED_MIN_USE of them submits no more: the
 * consumer wants few blocks of each chunk (parallel processes whose probes
 * interleave, each reading every chunk for its third of the blocks).
 */
#define DIO_FEED_JUDGE_AFTER	(DIO_FEED_CHUNK_MAX * 32)
#define DIO_FEED_MIN_USE	0.2

typedef struct DioFeedEntry
{
	BlockNumber first;
	int			nblocks;
	uint16		mask;			/* blocks that passed rules 2-3 at submission */
	uint16		checked;		/* ... and of those, passed rule 4 */
	bool		held;			/* taken from the engine: 'run' is valid */
	DioRun		run;
} DioFeedEntry;

struct DioFeed
{
	dlist_node	node;			/* in dio_feeds */
	EState	   *estate;
	int			plan_id;
	Relation	heap;
	XLogRecPtr	lsn_bound;		/* read before any visibility-map bit */
	DioStream  *stream;			/* begun at the first submission */
	DioFeedEntry ent[DIO_FEED_MAX];
	int			count;
	uint64		judged_blocks;	/* usable blocks of the chunks given back */
	uint64		judged_used;	/* ... of those, the consumer took */
	bool		sparse;			/* too few used: no more submissions */
	BlockNumber held_blk;		/* the consumer's current image, or invalid */
	DioFeedCounters c;
};

/* the feeds of this process's running queries */
static dlist_head dio_feeds = DLIST_STATIC_INIT(dio_feeds);

static void
dio_feed_forget(void *arg)
{
	DioFeed    *f = (DioFeed *) arg;

	if (f->estate != NULL)
	{
		dlist_delete(&f->node);
		f->estate = NULL;
	}
}

/*
 * A feed for node 'plan_id' of 'estate', reading 'heap', or NULL where no
 * image may be used (rule 1) or pg_dio's engine is not there.  It lives in
 * the query's memory and is forgotten with it.
 */
DioFeed *
dio_feed_create(EState *estate, int plan_id, Relation heap)
{
	DioFeed    *f;
	MemoryContextCallback *cb;

	if (!IsMVCCSnapshot(estate->es_snapshot) || IsolationIsSerializable() ||
		!dio_stats_available() || RelationUsesLocalBuffers(heap))
		return NULL;
	f = MemoryContextAllocZero(estate->es_query_cxt, sizeof(DioFeed));
	f->estate = estate;
	f->plan_id = plan_id;
	f->heap = heap;
	f->lsn_bound = dio_image_lsn_bound(estate->es_snapshot);
	f->held_blk = InvalidBlockNumber;
	cb = MemoryContextAlloc(estate->es_query_cxt, sizeof(MemoryContextCallback));
	cb->func = dio_feed_forget;
	cb->arg = f;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, cb);
	dlist_push_head(&dio_feeds, &f->node);
	return f;
}

/* The feed node 'plan_id' of 'estate' created, or NULL. */
DioFeed *
dio_feed_find(EState *estate, int plan_id)
{
	dlist_iter	it;

	dlist_foreach(it, &dio_feeds)
	{
		DioFeed    *f = dlist_container(DioFeed, node, it.cur);

		if (f->estate == estate && f->plan_id == plan_id)
			return f;
	}
	return NULL;
}

/* Take the engine's reads of entries [0, i] (waiting for them). */
static void
feed_take_through(DioFeed *f, int i)
{
	for (int j = 0; j <= i; j++)
	{
		DioFeedEntry *e = &f->ent[j];

		if (e->held)
			continue;
		if (!dio_stream_next(f->stream, &e->run) || e->run.first != e->first)
			elog(ERROR, "direct read of heap block %u out of step", e->first);
		e->held = true;
	}
}

/* Give entry i's image back; it must be held. */
static void
feed_drop(DioFeed *f, int i)
{
	Assert(f->ent[i].held);
	dio_stream_release(f->stream, &f->ent[i].run);
	f->judged_blocks += pg_popcount32(f->ent[i].mask);
	f->judged_used += pg_popcount32(f->ent[i].checked);
	if (f->judged_blocks >= DIO_FEED_JUDGE_AFTER && !f->sparse &&
		f->judged_used < f->judged_blocks * DIO_FEED_MIN_USE)
	{
		f->sparse = true;
		f->c.stopped = true;
	}
	f->count--;
	memmove(&f->ent[i], &f->ent[i + 1], sizeof(DioFeedEntry) * (f->count - i));
}

static inline bool
feed_has(DioFeedEntry *e, BlockNumber blk)
{
	return BlockNumberIsValid(blk) && blk >= e->first &&
		blk < e->first + (BlockNumber) e->nblocks;
}

/* Give back every image but the consumer's current one. */
static void
feed_trim(DioFeed *f)
{
	int			i = 0;

	if (f->count > 0)
		feed_take_through(f, f->count - 1);
	while (i < f->count)
	{
		if (feed_has(&f->ent[i], f->held_blk))
			i++;
		else
			feed_drop(f, i);
	}
}

/*
 * May a chunk of 'nblocks' from 'first' be submitted now?  Not if it is
 * larger than one read of the engine (pg_dio.io_size).  Full, and 'first' is
 * before every chunk held (the probes started over lower): what is held
 * will not be wanted soon, so it is given back.
 */
bool
dio_feed_can_submit(DioFeed *f, BlockNumber first, int nblocks)
{
	if (f->sparse)
		return false;
	if (f->stream == NULL)
	{
		if (!dio_stream_slot_free())
			return false;
		f->stream = dio_stream_begin(f->heap, MAIN_FORKNUM, DIO_FEED_MAX);
	}
	if (nblocks > dio_stream_max_blocks(f->stream))
		return false;
	if (f->count == DIO_FEED_MAX || !dio_stream_can_submit(f->stream))
	{
		if (f->count == 0 || first >= f->ent[0].first)
			return false;
		feed_trim(f);
	}
	return f->count < DIO_FEED_MAX && dio_stream_can_submit(f->stream);
}

/*
 * Submit the read of 'nblocks' blocks from 'first' (one segment, at most
 * DIO_FEED_CHUNK_MAX), of which those in 'mask' passed rules 2-3 just now.
 * dio_feed_can_submit must have said yes.
 */
void
dio_feed_submit(DioFeed *f, BlockNumber first, int nblocks, uint16 mask)
{
	DioFeedEntry *e;

	Assert(nblocks > 0 && nblocks <= DIO_FEED_CHUNK_MAX && f->count < DIO_FEED_MAX);
	dio_stream_submit(f->stream, first, nblocks);
	e = &f->ent[f->count++];
	e->first = first;
	e->nblocks = nblocks;
	e->mask = mask;
	e->checked = 0;
	e->held = false;
	f->c.chunks++;
	f->c.blocks += pg_popcount32(mask);
}

/* Send the reads submitted so far to the kernel now. */
void
dio_feed_flush(DioFeed *f)
{
	if (f->stream != NULL)
		dio_submit_pending();
}

/*
 * The consumer arrives at heap block 'blk', having given back its previous
 * image (dio_feed_untake): the usable image of it, held for the consumer
 * until its next call, or NULL (read it through the buffer manager).  If
 * it has the block, the images of chunks before it are given back (a block
 * it does not have may be one the probes' walk skips over).
 */
Page
dio_feed_take(DioFeed *f, BlockNumber blk)
{
	DioFeedEntry *e;
	int			i = 0;
	int			off;
	Page		page;

	f->held_blk = InvalidBlockNumber;
	for (i = 0; i < f->count && !feed_has(&f->ent[i], blk); i++)
		;
	if (i == f->count)
		return NULL;
	/* a block of a chunk held: the chunks before it are passed */
	for (int j = 0; j < i;)
	{
		if (f->ent[j].first < f->ent[i].first)
		{
			feed_take_through(f, j);
			feed_drop(f, j);
			i--;
		}
		else
			j++;
	}
	e = &f->ent[i];
	off = blk - e->first;
	if (!(e->mask & (1 << off)))
		return NULL;
	feed_take_through(f, i);
	page = (Page) (e->run.data + (Size) off * BLCKSZ);
	if (!(e->checked & (1 << off)))
	{
		if (off >= e->run.nvalid ||
			!dio_direct_image_usable(f->heap, page, blk, f->lsn_bound))
		{
			dio_stats_count_blocks(0, off >= e->run.nvalid ? e->run.reason : DIO_FB_VERIFY, 1);
			e->mask &= ~(1 << off);
			f->c.unusable++;
			return NULL;
		}
		e->checked |= 1 << off;
		dio_stats_count_blocks(1, DIO_FB_VERIFY, 0);
		f->c.used++;
	}
	f->held_blk = blk;
	return page;
}

/* The consumer no longer points into the image dio_feed_take gave it. */
void
dio_feed_untake(DioFeed *f)
{
	f->held_blk = InvalidBlockNumber;
}

/* The feeder starts over (rescan): every image but the consumer's goes. */
void
dio_feed_reset(DioFeed *f)
{
	if (f->stream != NULL)
		feed_trim(f);
}

/* The feeder ends: every read reaped and given back. */
void
dio_feed_end(DioFeed *f)
{
	if (f->stream != NULL)
		dio_stream_end(f->stream);
	f->stream = NULL;
	f->count = 0;
	dio_feed_forget(f);
}

const DioFeedCounters *
dio_feed_counters(DioFeed *f)
{
	return &f->c;
}
