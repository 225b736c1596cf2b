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
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/dsa.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

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

/* a process waits this long for another's read of a block it wants, at most */
#define DIO_FEED_WAIT_MS	100

typedef enum DioFeedSlotState
{
	DIO_SLOT_FREE,
	DIO_SLOT_READING,			/* claimed; its reader's read in flight */
	DIO_SLOT_READY,				/* image copied in */
} DioFeedSlotState;

/* one chunk of the shared images; fields under DioFeedShared.mutex */
typedef struct DioFeedSlot
{
	BlockNumber first;
	uint16		nblocks;
	uint16		submitted;		/* blocks that passed rules 2-3 at submission */
	uint16		mask;			/* ... and were read completely, READY only */
	uint16		checked;		/* ... and of those, passed rule 4 */
	uint16		used;			/* ... and of those, some process took */
	uint8		state;			/* DioFeedSlotState */
	int			reader;			/* participant reading it */
	int			pins;			/* processes pointing into its image */
	XLogRecPtr	lsn_bound;		/* the reader's, read before its VM bits */
} DioFeedSlot;

struct DioFeedShared
{
	slock_t		mutex;
	ConditionVariable ready;	/* a slot left READING */
	bool		sparse;			/* too few used: no more submissions */
	uint64		judged_blocks;	/* usable blocks of the slots reused */
	uint64		judged_used;	/* ... of those, some process took */
	int			nslots;			/* chunk images: 0 when not shared */
	int			nparts;			/* the leader, then one per worker */
	int			nused;			/* slots ever claimed (read unlocked: a hint) */
	Size		slots_off;		/* from this struct to the slot table */
	dsa_pointer images;			/* in the query's DSA, at the first claim */
	bool		allocating;		/* a process is allocating 'images' */
	/* each participant's block of its last take; invalid: none or done */
	BlockNumber pos[FLEXIBLE_ARRAY_MEMBER];
};

typedef struct DioFeedEntry
{
	BlockNumber first;
	int			nblocks;
	uint16		mask;			/* blocks that passed rules 2-3 at submission */
	uint16		checked;		/* ... and of those, passed rule 4 */
	bool		held;			/* taken from the engine: 'run' is valid */
	int			shslot;			/* shared: the slot it is read for */
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

	/* a parallel query's feed: images only in 'sh', once attached */
	bool		shared;
	DioFeedShared *sh;
	dsa_area   *area;			/* the query's DSA, holding the images */
	char	   *images;			/* 'sh->images' mapped here, or NULL */
	int			part;			/* this process's participant number */
	int			held_slot;		/* slot of the consumer's image, or -1 */
	int			claimed;		/* slot feed_claim gave, for dio_feed_submit */
};

/* the feeds of this process's running queries */
static dlist_head dio_feeds = DLIST_STATIC_INIT(dio_feeds);

/* what a process waiting for another's read of a shared image shows */
static uint32 dio_feed_wait_event = 0;

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
 * the query's memory and is forgotten with it.  A 'shared' one reads only
 * once attached to its parallel query's images (dio_feed_share).
 */
DioFeed *
dio_feed_create(EState *estate, int plan_id, Relation heap, bool shared)
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
	f->shared = shared;
	f->held_slot = -1;
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

/* ======================================================================
 * Images shared by a parallel query's processes
 *
 * Where the probes of several processes walk the same chunks (each process
 * probes for its share of the outer rows), each chunk is read once, by the
 * process that first wants it, and its image is copied into the query's
 * dynamic shared memory for all of them.  A slot is claimed before the read
 * is submitted, so no chunk is read twice; the reader copies the image in
 * when it takes its own completion (feed_publish), and any process may then
 * use it under the same rule 4, against the reader's replay-position bound.
 * The kernel writes only into the reader's private memory, under the
 * engine's rules.  A process that wants a block of a chunk still being read
 * by another waits up to DIO_FEED_WAIT_MS for it, publishing its own
 * completions meanwhile (so two processes waiting on each other's reads both
 * proceed), then reads the block through the buffer manager.
 *
 * A slot is reused once no process points into it and every process that
 * has taken a block is past it (the walks go forward), else the lowest one
 * the claiming process is past.  A slot's fields are under the mutex; its
 * image is written only while READING, by its reader, and read only while
 * pinned.
 * ====================================================================== */

static inline DioFeedSlot *
feed_slot(DioFeedShared *sh, int i)
{
	return (DioFeedSlot *) ((char *) sh + sh->slots_off) + i;
}

/* The image of slot 'i'; the images must have been allocated. */
static inline char *
slot_image(DioFeed *f, int i)
{
	if (f->images == NULL)
		f->images = dsa_get_address(f->area, f->sh->images);
	return f->images + (Size) i * DIO_FEED_CHUNK_MAX * BLCKSZ;
}

/* The slot holding a chunk with block 'blk', or -1.  Under the mutex. */
static int
slot_find(DioFeedShared *sh, BlockNumber blk)
{
	for (int i = 0; i < sh->nused; i++)
	{
		DioFeedSlot *sl = feed_slot(sh, i);

		if (sl->state != DIO_SLOT_FREE && blk >= sl->first &&
			blk < sl->first + (BlockNumber) sl->nblocks)
			return i;
	}
	return -1;
}

/* Where the slot table of 'nparts' processes' positions starts. */
static Size
feed_slots_off(int nparts)
{
	return MAXALIGN(add_size(offsetof(DioFeedShared, pos),
							 mul_size(nparts, sizeof(BlockNumber))));
}

/*
 * Bytes of the parallel query's DSM the table of 'nslots' chunk images of
 * 'nparts' processes takes; the images themselves are allocated in its DSA
 * at the first claim (none where nothing is read directly: a warm run).
 * With no slot (the leader has no feed) the processes do not share.
 */
Size
dio_feed_shared_size(int nparts, int nslots)
{
	return add_size(feed_slots_off(nparts), mul_size(nslots, sizeof(DioFeedSlot)));
}

/*
 * Initialize the table at 'sh' as sized, or empty it again for a rescan
 * ('reuse': the images allocated stay).
 */
void
dio_feed_shared_init(DioFeedShared *sh, int nparts, int nslots, bool reuse)
{
	dsa_pointer images = reuse ? sh->images : InvalidDsaPointer;

	memset(sh, 0, offsetof(DioFeedShared, pos));
	SpinLockInit(&sh->mutex);
	ConditionVariableInit(&sh->ready);
	sh->nslots = nslots;
	sh->nparts = nparts;
	sh->slots_off = feed_slots_off(nparts);
	sh->images = images;
	for (int i = 0; i < nparts; i++)
		sh->pos[i] = InvalidBlockNumber;
	for (int i = 0; i < nslots; i++)
	{
		DioFeedSlot *sl = feed_slot(sh, i);

		memset(sl, 0, sizeof(DioFeedSlot));
		sl->first = InvalidBlockNumber;
	}
}

/*
 * Feed 'f' of participant 'part' reads into and takes from 'sh' from now,
 * its images in 'area'.
 */
void
dio_feed_share(DioFeed *f, DioFeedShared *sh, dsa_area *area, int part)
{
	Assert(f->shared && f->sh == NULL && f->count == 0);
	if (part < 0 || part >= sh->nparts || sh->nslots == 0 || area == NULL)
		return;
	if (dio_feed_wait_event == 0)
		dio_feed_wait_event = WaitEventExtensionNew("PgDioSharedImage");
	f->sh = sh;
	f->area = area;
	f->images = NULL;
	f->part = part;
	f->held_slot = -1;
}

/* The consumer no longer points into the slot it had. */
static void
feed_unpin(DioFeed *f)
{
	if (f->held_slot >= 0)
	{
		SpinLockAcquire(&f->sh->mutex);
		feed_slot(f->sh, f->held_slot)->pins--;
		SpinLockRelease(&f->sh->mutex);
		f->held_slot = -1;
	}
	f->held_blk = InvalidBlockNumber;
}

/* Take this process's oldest read and copy its image into its slot. */
static void
feed_publish_head(DioFeed *f)
{
	DioFeedEntry *e = &f->ent[0];
	DioFeedSlot *sl = feed_slot(f->sh, e->shslot);
	uint16		valid;
	uint16		lost;

	feed_take_through(f, 0);
	valid = e->run.nvalid >= 16 ? 0xFFFF : (uint16) ((1 << e->run.nvalid) - 1);
	lost = e->mask & ~valid;
	if (e->mask & valid)
		memcpy(slot_image(f, e->shslot), e->run.data, (Size) e->run.nvalid * BLCKSZ);
	if (lost)
	{
		dio_stats_count_blocks(0, e->run.reason, pg_popcount32(lost));
		f->c.unusable += pg_popcount32(lost);
	}
	SpinLockAcquire(&f->sh->mutex);
	Assert(sl->state == DIO_SLOT_READING && sl->reader == f->part);
	sl->mask = e->mask & valid;
	sl->state = DIO_SLOT_READY;
	SpinLockRelease(&f->sh->mutex);
	ConditionVariableBroadcast(&f->sh->ready);
	dio_stream_release(f->stream, &e->run);
	f->count--;
	memmove(&f->ent[0], &f->ent[1], sizeof(DioFeedEntry) * f->count);
}

/* Publish this process's completed reads in order; all of them if 'all'. */
static void
feed_publish(DioFeed *f, bool all)
{
	while (f->count > 0 && (all || dio_stream_head_done(f->stream)))
		feed_publish_head(f);
}

/*
 * Are the images allocated?  The first process to claim a slot allocates
 * them in the query's DSA; while it does, or if it could not (no memory for
 * them), nothing is claimed.
 */
static bool
feed_images(DioFeed *f)
{
	DioFeedShared *sh = f->sh;
	dsa_pointer p;

	if (f->images != NULL)
		return true;
	SpinLockAcquire(&sh->mutex);
	if (DsaPointerIsValid(sh->images) || sh->allocating || sh->nslots == 0)
	{
		bool		ready = DsaPointerIsValid(sh->images);

		SpinLockRelease(&sh->mutex);
		return ready;
	}
	sh->allocating = true;
	SpinLockRelease(&sh->mutex);
	p = dsa_allocate_extended(f->area, (Size) sh->nslots * DIO_FEED_CHUNK_MAX * BLCKSZ,
							  DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
	SpinLockAcquire(&sh->mutex);
	sh->allocating = false;
	if (DsaPointerIsValid(p))
		sh->images = p;
	else
		sh->nslots = 0;			/* no sharing in this run */
	SpinLockRelease(&sh->mutex);
	return DsaPointerIsValid(p);
}

/*
 * Claim a slot for the chunk of 'nblocks' from 'first', which this process
 * will read.  False if a slot has it already, or none can be reused.
 */
static bool
feed_claim(DioFeed *f, BlockNumber first, int nblocks)
{
	DioFeedShared *sh = f->sh;
	BlockNumber minpos = InvalidBlockNumber;
	BlockNumber mypos;
	int			best = -1;
	DioFeedSlot *sl;

	if (!feed_images(f))
		return false;
	SpinLockAcquire(&sh->mutex);
	mypos = sh->pos[f->part];
	if (sh->sparse || slot_find(sh, first) >= 0)
	{
		f->c.stopped = sh->sparse;
		SpinLockRelease(&sh->mutex);
		return false;
	}
	for (int p = 0; p < sh->nparts; p++)
		if (BlockNumberIsValid(sh->pos[p]) && sh->pos[p] < minpos)
			minpos = sh->pos[p];
	for (int pass = 0; pass < 3 && best < 0; pass++)
	{
		for (int i = 0; i < sh->nslots; i++)
		{
			BlockNumber end;

			sl = feed_slot(sh, i);
			if (pass == 0)
			{
				if (sl->state == DIO_SLOT_FREE)
				{
					best = i;
					break;
				}
				continue;
			}
			if (sl->state != DIO_SLOT_READY || sl->pins > 0)
				continue;
			end = sl->first + sl->nblocks;
			/* pass 1: every process is past it; pass 2: this one is */
			if ((pass == 1 && (!BlockNumberIsValid(minpos) || end <= minpos)) ||
				(pass == 2 && BlockNumberIsValid(mypos) && end <= mypos))
			{
				if (best < 0 || sl->first < feed_slot(sh, best)->first)
					best = i;
			}
		}
	}
	if (best < 0)
	{
		SpinLockRelease(&sh->mutex);
		return false;
	}
	sl = feed_slot(sh, best);
	if (sl->state == DIO_SLOT_READY)
	{
		sh->judged_blocks += pg_popcount32(sl->submitted);
		sh->judged_used += pg_popcount32(sl->used);
		if (sh->judged_blocks >= DIO_FEED_JUDGE_AFTER &&
			sh->judged_used < sh->judged_blocks * DIO_FEED_MIN_USE)
			sh->sparse = true;
	}
	sl->first = first;
	sl->nblocks = nblocks;
	sl->submitted = sl->mask = sl->checked = sl->used = 0;
	sl->state = DIO_SLOT_READING;
	sl->reader = f->part;
	sl->pins = 0;
	sl->lsn_bound = f->lsn_bound;
	if (best >= sh->nused)
		sh->nused = best + 1;
	SpinLockRelease(&sh->mutex);
	f->claimed = best;
	return true;
}

/*
 * Has another process of the parallel query read the chunk from 'first', or
 * is it reading it?  Then this one neither reads nor advises it.
 */
bool
dio_feed_claimed(DioFeed *f, BlockNumber first)
{
	bool		found;

	if (f->sh == NULL)
		return false;
	SpinLockAcquire(&f->sh->mutex);
	found = slot_find(f->sh, first) >= 0;
	SpinLockRelease(&f->sh->mutex);
	return found;
}

/* dio_feed_take for a shared feed. */
static Page
feed_take_shared(DioFeed *f, BlockNumber blk)
{
	DioFeedShared *sh = f->sh;
	TimestampTz wait_start = 0;
	Page		page = NULL;

	feed_unpin(f);
	feed_publish(f, false);
	/* written by this process only, read by claimers: a hint */
	sh->pos[f->part] = blk;
	/* no chunk read yet (the heap is cached): no lock taken */
	if (sh->nused == 0)
		return NULL;
	for (;;)
	{
		DioFeedSlot *sl;
		int			i;
		uint16		bit;
		bool		checked;
		bool		first_use;
		XLogRecPtr	bound;

		SpinLockAcquire(&sh->mutex);
		i = slot_find(sh, blk);
		if (i < 0)
		{
			SpinLockRelease(&sh->mutex);
			break;
		}
		sl = feed_slot(sh, i);
		bit = 1 << (blk - sl->first);
		if (sl->state == DIO_SLOT_READING)
		{
			bool		mine = (sl->reader == f->part);

			SpinLockRelease(&sh->mutex);
			if (mine)
			{
				/* ours: take our reads up to it */
				Assert(f->count > 0);
				if (f->count == 0)
					break;
				feed_publish_head(f);
				continue;
			}
			if (wait_start == 0)
			{
				wait_start = GetCurrentTimestamp();
				ConditionVariablePrepareToSleep(&sh->ready);
			}
			else if (TimestampDifferenceExceeds(wait_start, GetCurrentTimestamp(),
												DIO_FEED_WAIT_MS))
			{
				f->c.timeouts++;
				break;
			}
			feed_publish(f, false);
			(void) ConditionVariableTimedSleep(&sh->ready, 1, dio_feed_wait_event);
			f->c.waits++;
			continue;
		}
		if (!(sl->mask & bit))
		{
			SpinLockRelease(&sh->mutex);
			break;
		}
		sl->pins++;
		checked = (sl->checked & bit) != 0;
		bound = sl->lsn_bound;
		SpinLockRelease(&sh->mutex);

		page = (Page) (slot_image(f, i) + (Size) (blk - sl->first) * BLCKSZ);
		if (!checked && !dio_direct_image_usable(f->heap, page, blk, bound))
		{
			SpinLockAcquire(&sh->mutex);
			sl->mask &= ~bit;
			sl->pins--;
			SpinLockRelease(&sh->mutex);
			dio_stats_count_blocks(0, DIO_FB_VERIFY, 1);
			f->c.unusable++;
			page = NULL;
			break;
		}
		SpinLockAcquire(&sh->mutex);
		first_use = !(sl->used & bit);
		sl->checked |= bit;
		sl->used |= bit;
		SpinLockRelease(&sh->mutex);
		if (first_use)
		{
			dio_stats_count_blocks(1, DIO_FB_VERIFY, 0);
			f->c.used++;
		}
		f->held_slot = i;
		f->held_blk = blk;
		break;
	}
	if (wait_start != 0)
		ConditionVariableCancelSleep();
	return page;
}

/*
 * This process takes no more blocks for now (its probes are done): its
 * reads are published and its position no longer holds slots.
 */
void
dio_feed_finish(DioFeed *f)
{
	if (f->sh == NULL)
		return;
	feed_publish(f, true);
	SpinLockAcquire(&f->sh->mutex);
	f->sh->pos[f->part] = InvalidBlockNumber;
	SpinLockRelease(&f->sh->mutex);
}

/*
 * Leave the shared images before they go (the parallel query's shutdown):
 * every read of this process published, no slot pinned.
 */
void
dio_feed_detach(DioFeed *f)
{
	if (f->sh == NULL)
		return;
	dio_feed_finish(f);
	feed_unpin(f);
	f->sh = NULL;
}

/*
 * May a chunk of 'nblocks' from 'first' be submitted now?  Not if it is
 * larger than one read of the engine (pg_dio.io_size).  Shared: not before
 * the feed is attached, nor if a slot has the chunk or none is free (the
 * slot is claimed here).  Full, and 'first' is
 * before every chunk held (the probes started over lower): what is held
 * will not be wanted soon, so it is given back.
 */
bool
dio_feed_can_submit(DioFeed *f, BlockNumber first, int nblocks)
{
	if (f->sparse || (f->shared && f->sh == NULL))
		return false;
	if (f->stream == NULL)
	{
		if (!dio_stream_slot_free())
			return false;
		f->stream = dio_stream_begin(f->heap, MAIN_FORKNUM, DIO_FEED_MAX);
	}
	if (nblocks > dio_stream_max_blocks(f->stream))
		return false;
	if (f->sh != NULL)
	{
		if (f->count == DIO_FEED_MAX || !dio_stream_can_submit(f->stream))
			feed_publish(f, false);
		return f->count < DIO_FEED_MAX && dio_stream_can_submit(f->stream) &&
			feed_claim(f, first, nblocks);
	}
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
	if (f->sh != NULL)
	{
		e->shslot = f->claimed;
		SpinLockAcquire(&f->sh->mutex);
		feed_slot(f->sh, e->shslot)->submitted = mask;
		SpinLockRelease(&f->sh->mutex);
	}
	f->c.chunks++;
	f->c.blocks += pg_popcount32(mask);
}

/* Send the reads submitted so far to the kernel now; publish those done. */
void
dio_feed_flush(DioFeed *f)
{
	if (f->stream != NULL)
		dio_submit_pending();
	if (f->sh != NULL)
		feed_publish(f, false);
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

	if (f->sh != NULL)
		return feed_take_shared(f, blk);
	if (f->shared)
		return NULL;
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
	if (f->sh != NULL)
		feed_unpin(f);
	f->held_blk = InvalidBlockNumber;
}

/* The feeder starts over (rescan): every image but the consumer's goes. */
void
dio_feed_reset(DioFeed *f)
{
	if (f->sh != NULL)
	{
		feed_publish(f, true);
		feed_unpin(f);
	}
	else if (f->stream != NULL)
		feed_trim(f);
}

/* The feeder ends: every read reaped and given back. */
void
dio_feed_end(DioFeed *f)
{
	dio_feed_detach(f);
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
