/*-------------------------------------------------------------------------
 *
 * scan_readahead.h
 *	  Heap read-ahead for scans that fetch heap tuples by TID in an order
 *	  they do not choose (scan_readahead.c): a queue of TIDs filled by a
 *	  producer, a look-ahead over it, and the heap block sources (a core
 *	  read stream, posix_fadvise advice with the scan's own reads, the OS
 *	  page-cache probe, direct block images through pg_dio's engine).
 *
 * The user embeds a RaState in its scan state, calls ra_init when the node
 * begins, ra_start before the first TID, and then takes entries in queue
 * order with ra_next_entry; the producer queues TIDs with ra_push when the
 * look-ahead asks for them (RaSetup.fetch).  ra_reset forgets everything
 * queued (rescan), ra_end releases all (end of the node).
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_readahead.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SCAN_READAHEAD_H
#define PG_DIO_SCAN_READAHEAD_H

#include "access/htup_details.h"
#include "executor/tuptable.h"
#include "storage/buf.h"
#include "storage/itemptr.h"
#include "storage/read_stream.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "compat.h"
#include "engine.h"

/* queue entry flags: the machinery's */
#define RA_NEED_HEAP		0x01	/* the heap block must be read */
#define RA_GROUP_START		0x02	/* first TID of a stream block */
#define RA_SYNC				0x04	/* group start read by the consumer itself */
#define RA_OS_CACHED		0x08	/* ... because the OS page cache has it */
#define RA_ADVISED			0x10	/* ... after advising the kernel to read it */
#define RA_DIRECT			0x20	/* ... its direct read submitted (ra_direct_block) */
#define RA_EARLY			0x40	/* ... advised with a neighbour's read earlier */
#define RA_COUNTED			0x80	/* counted in ra->ahead (ra_deep_fill) */
/* bits the producer may use for its own purposes */
#define RA_PRODUCER_FLAGS	0xFF00

typedef struct RaEntry
{
	ItemPointerData tid;
	uint16		flags;
	void	   *copy;			/* the producer's data for the TID, or NULL */
} RaEntry;

typedef struct RaCounters
{
	uint64		tids;			/* TIDs the producer read (it counts them) */
	uint64		blocks;			/* heap blocks requested from the stream */
	uint64		blocks_read;	/* of those, read from storage */
	uint64		dist_sum;		/* look-ahead (blocks) summed at each block */
	uint64		waits;
	uint64		wait_us;
	uint64		restarts;		/* stream ended at a cap and was reset */
	uint64		nsearches;		/* the producer's: parallel workers' index searches */
	uint64		sync_blocks;	/* OS-cached blocks read by the consumer */
	uint64		advised;		/* blocks posix_fadvise'd ahead */
	uint64		direct;			/* blocks read and used directly */
	uint64		direct_fallback;	/* direct reads given to the buffer manager */
	uint64		combined;		/* of those, advised with a neighbour (ra_advise) */
	uint64		io_inprog;		/* selfread: advised reads in flight, summed at each read */
	uint64		dist_max;		/* keep last: maximum, not a sum */
} RaCounters;

#define RA_NCOUNTERS	(sizeof(RaCounters) / sizeof(uint64))

/*
 * The producer: queue the next TID with ra_push and return its entry, or
 * NULL at its end, having set ra->done.  Called by the look-ahead, which
 * decides how far ahead of the consumer TIDs are read.
 */
typedef RaEntry *(*RaFetch) (void *arg);

/* What the user decides when the scan starts (ra_start). */
typedef struct RaSetup
{
	Relation	heap;
	Snapshot	snapshot;
	bool		read_only;		/* the relation is not modified (pruning) */
	bool		queued;			/* TIDs go through the queue */
	bool		prefetch;		/* MVCC snapshot: read ahead (else one TID) */
	bool		timing;			/* time the waits */
	bool		advice;			/* self-read mode where it can be, else advice
								 * beside the stream (io_method=worker) */
	bool		combine;		/* self-read: advise neighbours together */
	bool		direct;			/* self-read: direct images wanted */
	bool		copies;			/* entries carry copies (half of hash_mem) */
	struct DioFeed *feed;		/* self-read: images another node read, or NULL */
	RaFetch		fetch;
	/*
	 * Optional: with no look-ahead going on (self-read mode, no block needed
	 * a read lately) the consumer's next entry straight from the producer,
	 * unqueued, made with ra_take_now; NULL at the end.
	 */
	RaFetch		take;
	void	   *arg;			/* passed to fetch and take */
} RaSetup;

struct raahead_hash;

typedef struct RaState
{
	TupleTableSlot *slot;		/* the user's, which may point into a direct
								 * image: cleared before it is given back */

	/* from RaSetup */
	Relation	heap;
	bool		read_only;
	RaFetch		fetch;
	RaFetch		take;
	void	   *arg;
	uint32		capacity;		/* most blocks the stream may look ahead */

	/*
	 * The TID queue: entries [head, tail) in a ring of qsize (a power of two);
	 * the look-ahead has looked at [head, examined) (group starts marked).
	 */
	RaEntry    *q;
	RaEntry		cur;			/* the entry the consumer works on */
	uint32		qsize;
	uint64		head;
	uint64		examined;
	uint64		tail;
	int			run_cap;
	bool		done;			/* the producer has no more TIDs */
	bool		stream_ended;	/* the callback returned InvalidBlockNumber */
	BlockNumber last_blk;		/* block of the last group start */
	int			groups_ahead;	/* group starts handed out, not consumed */
	Buffer		vmbuf;			/* visibility map page, the producer's too */

	/* heap side */
	bool		prefetch;		/* MVCC snapshot: read ahead */
	bool		advice;			/* also posix_fadvise each block handed out */
	bool		selfread;		/* advise ahead, read every block ourselves */
	bool		combine;		/* selfread: read ahead deeper (ra_deep_fill) */
	uint32		deep_max;		/* ... by at most this many TIDs */
	Size		deep_copy_max;	/* ... and copies of at most this */
	Size		copy_bytes;		/* memory of the copies queued (the producer's) */
	int			self_ahead;		/* selfread: group starts queued, not consumed */
	int			self_ios;		/* selfread: of those, advised */
	int			self_dist;		/* selfread: advised blocks wanted ahead */
	int			self_max;		/* selfread: its maximum, the I/O concurrency */
	BlockNumber fwd_last;		/* selfread: the block the consumer read last */
	int			fwd_run;		/* ... the steps to the next block before it */
	struct raahead_hash *ahead; /* selfread: blocks queued beyond the look-ahead */
	bool		topup_pending;	/* selfread: look ahead at the next call */
	DioStream  *oscheck;		/* pg_dio stream, for its fds: cachestat */
	bool		engine_off;		/* no pg_dio stream to be had */
	bool		oscheck_off;	/* not available (or not wanted) */
	int			os_skip;		/* blocks to pass before the next check */
	int			os_checked;		/* checks in the current window of 32 */
	int			os_found;		/* ... that found the block cached */
	bool		os_sparse;		/* few found lately: check every 16th */
	bool		os_dense;		/* nearly all found: check every 8th */
	ReadStream *stream;
	DioIOStats	iostats;		/* the stream's, for EXPLAIN (IO), PostgreSQL 19 */

	/*
	 * Direct reads (ra_direct_block): the consumer's current group is either
	 * cur_buf or, while have_run, the image 'dpage' of block dblk: the
	 * engine's ('run'), or while 'borrowed' the feed's (scan_feed.c); it
	 * stays held until the consumer moves on (ra->slot is cleared first).
	 */
	bool		direct;			/* may read blocks directly */
	DioStream  *dstream;		/* the engine stream, begun at the first one */
	XLogRecPtr	lsn_bound;		/* newest usable image LSN (recovery only) */
	DioRun		run;
	bool		have_run;
	bool		borrowed;
	Page		dpage;
	BlockNumber dblk;
	struct DioFeed *feed;
	uint64	   *dseen;			/* blocks read directly so far, a bit each */
	BlockNumber dseen_nblocks;
	uint64		dfirst;			/* direct candidates seen the first time */
	uint64		dagain;			/* ... and again */

	Buffer		cur_buf;		/* buffer of the consumer's current group */
	Buffer		pending_buf;	/* buffer fetched for the next group start */
	HeapTupleData tup;			/* the tuple ra_fetch_tuple found */

	/* instrumentation */
	bool		timing;
	uint64		cb_us;			/* time in the stream's callback (the producer) */
	uint64		cb_reads;		/* blocks the callback read (index, VM) */
	RaCounters	c;
} RaState;

static inline RaEntry *
ra_entry(RaState *ra, uint64 pos)
{
	return &ra->q[pos & (ra->qsize - 1)];
}

extern void ra_init(RaState *ra, MemoryContext cxt, TupleTableSlot *slot);
extern void ra_start(RaState *ra, const RaSetup *setup);
extern RaEntry *ra_push(RaState *ra);
extern void ra_feed(RaState *ra);
extern RaEntry *ra_next_entry(RaState *ra);
extern RaEntry *ra_take_now(RaState *ra, ItemPointer tid, uint16 flags,
							bool top_up);
extern void ra_top_up(RaState *ra);
extern bool ra_fetch_tuple(RaState *ra, ItemPointer tid, Snapshot snapshot,
						   bool *all_dead);
extern void ra_reset(RaState *ra);
extern void ra_end(RaState *ra);
extern uint32 ra_stream_capacity(Relation rel);

#endif							/* PG_DIO_SCAN_READAHEAD_H */
