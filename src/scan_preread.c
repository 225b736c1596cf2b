/*-------------------------------------------------------------------------
 *
 * scan_preread.c
 *	  Reads of blocks into shared buffers started ahead of their use, let go
 *	  of once read.
 *
 * Advice gets blocks into the OS page cache at any depth, but the process
 * that advises, and later reads each block into shared buffers, pays the
 * kernel's side of both: the page-cache pages and the copy.  A read started
 * through core's asynchronous I/O (StartReadBuffers) is done by an I/O
 * worker (io_method=worker) or by the kernel (io_uring) into a shared
 * buffer, where the probes that want the block then find it.  ProbePrefetch
 * reads its dense chunks this way too, after advising them, where no
 * Gather's processes take the CPUs (scan_probe.c): the advice keeps the
 * device busy, the reads move the copies off a process short of CPU.
 *
 * Each read keeps its buffers pinned until its I/O has completed; then
 * WaitReadBuffers (which no longer waits) and the pins go, and the blocks
 * stay in shared buffers, unpinned.  The reads in flight are a ring bounded
 * by a share of the process's I/O handles and pins (preread_room); the
 * caller reads nothing where there is no room.  A backend that wants a block
 * still being read waits for that read in the buffer manager, as for any
 * other.  Nothing is read with io_method=sync, whose reads would happen only
 * when waited for.
 *
 * Lifetime: the ring lives in the caller's memory context; preread_reap
 * (all) runs before that memory goes, except on ERROR, when the resource
 * owner releases the pins and forgets where the reads' results go.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_preread.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/aio.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "scan_preread.h"

/* reads in flight at most, and their share of the handles and of the pins */
#define PREREAD_MAX_SLOTS	32

/* Are reads started ahead done in the background with this io_method? */
bool
preread_possible(void)
{
	return io_method != IOMETHOD_SYNC;
}

/*
 * Set up 'pr' in 'cxt'.  It reads nothing (nslots 0) where the I/O handles
 * or the pins a process may hold leave no room for it.
 */
void
preread_init(PreRead *pr, MemoryContext cxt)
{
	int			handles = io_max_concurrency > 0 ? io_max_concurrency : 16;

	memset(pr, 0, sizeof(*pr));
	pr->nslots = Min(PREREAD_MAX_SLOTS, handles / 2);
	pr->max_pins = Min(pr->nslots * PREREAD_MAX_BLOCKS, (int) (GetPinLimit() / 4));
	if (!preread_possible() || pr->nslots < 1 || pr->max_pins < 1)
	{
		pr->nslots = 0;
		return;
	}
	pr->slots = MemoryContextAllocZero(cxt, sizeof(PreReadSlot) * pr->nslots);
}

/* Has the oldest read's I/O completed (or is it another process's)? */
static bool
preread_done(PreReadSlot *s)
{
	return !pgaio_wref_valid(&s->op.io_wref) || pgaio_wref_check_done(&s->op.io_wref);
}

/* Complete the oldest read (waiting if its I/O is in flight) and unpin it. */
static void
preread_release_oldest(PreRead *pr)
{
	PreReadSlot *s = &pr->slots[pr->head % pr->nslots];

	WaitReadBuffers(&s->op);
	for (int i = 0; i < s->nbufs; i++)
		ReleaseBuffer(s->bufs[i]);
	pr->pinned -= s->nbufs;
	s->nbufs = 0;
	pr->head++;
}

/*
 * Release the reads whose I/O has completed, oldest first, or (all) every
 * read, waiting for those in flight.
 */
void
preread_reap(PreRead *pr, bool all)
{
	while (pr->head < pr->tail &&
		   (all || preread_done(&pr->slots[pr->head % pr->nslots])))
		preread_release_oldest(pr);
}

/* Is there room for a read of n blocks, once the completed ones go? */
bool
preread_room(PreRead *pr, int n)
{
	if (pr->head < pr->tail)
		preread_reap(pr, false);
	return pr->tail - pr->head < (uint64) pr->nslots &&
		pr->pinned + Min(n, PREREAD_MAX_BLOCKS) <= pr->max_pins;
}

/*
 * Start reading blocks [blk, blk + n) of 'rel' into shared buffers, in reads
 * of the consecutive blocks not there already; n is at most
 * PREREAD_MAX_BLOCKS.  Waits only where a chunk split by blocks in shared
 * buffers wants more reads than there is room for.  Returns the number of
 * blocks reads were started for.
 */
int
preread_blocks(PreRead *pr, Relation rel, ForkNumber fork, BlockNumber blk, int n)
{
	int			started = 0;

	Assert(pr->nslots > 0 && n <= PREREAD_MAX_BLOCKS);
	n = Min(n, Min(io_combine_limit, pr->max_pins));
	while (n > 0)
	{
		PreReadSlot *s;
		int			asked = n;
		int			nblocks = n;

		while (!preread_room(pr, nblocks))
		{
			preread_release_oldest(pr);
			pr->waits++;
		}
		s = &pr->slots[pr->tail % pr->nslots];
		s->op.rel = rel;
		s->op.smgr = RelationGetSmgr(rel);
		s->op.persistence = rel->rd_rel->relpersistence;
		s->op.forknum = fork;
		s->op.strategy = NULL;
		for (int i = 0; i < nblocks; i++)
			s->bufs[i] = InvalidBuffer;
		if (StartReadBuffers(&s->op, s->bufs, blk, &nblocks, 0))
		{
			s->nbufs = nblocks;
			pr->pinned += nblocks;
			pr->tail++;
			pr->reads++;
			pr->blocks += nblocks;
			started += nblocks;
		}
		else
		{
			/* valid already: nothing to read */
			for (int i = 0; i < nblocks; i++)
				ReleaseBuffer(s->bufs[i]);
		}
		/* a split read leaves the buffers after it pinned: not wanted */
		for (int i = nblocks; i < asked; i++)
			if (s->bufs[i] != InvalidBuffer)
				ReleaseBuffer(s->bufs[i]);
		blk += nblocks;
		n -= nblocks;
	}
	return started;
}
