/*-------------------------------------------------------------------------
 *
 * scan_feed.h
 *	  Direct heap images read ahead by one node for another's fetches
 *	  (scan_feed.c): ProbePrefetch reads the chunks its probes will fetch
 *	  from, the nested loop's inner PrefetchIndexScan takes each block's
 *	  image from it instead of the buffer manager where the image is usable.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_feed.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SCAN_FEED_H
#define PG_DIO_SCAN_FEED_H

#include "nodes/execnodes.h"
#include "storage/bufpage.h"
#include "utils/dsa.h"
#include "utils/rel.h"

/* blocks a feed chunk has at most (a bit each in its mask) */
#define DIO_FEED_CHUNK_MAX	16
/* kB of one shared chunk image */
#define DIO_FEED_CHUNK_KB	(DIO_FEED_CHUNK_MAX * BLCKSZ / 1024)

typedef struct DioFeed DioFeed;
typedef struct DioFeedShared DioFeedShared;

/* what a feed did, for EXPLAIN */
typedef struct DioFeedCounters
{
	uint64		chunks;			/* reads submitted */
	uint64		blocks;			/* blocks in them that passed rules 2-3 */
	uint64		used;			/* blocks whose images the consumer took */
	uint64		unusable;		/* images that failed the read or rule 4 */
	uint64		waits;			/* shared: sleeps for another process's read */
	uint64		timeouts;		/* ... that ended with the buffer manager */
	bool		stopped;		/* the consumer used too few: no more reads */
} DioFeedCounters;

extern DioFeed *dio_feed_create(EState *estate, int plan_id, Relation heap,
							   bool shared);
extern DioFeed *dio_feed_find(EState *estate, int plan_id);
extern bool dio_feed_can_submit(DioFeed *f, BlockNumber first, int nblocks);
extern void dio_feed_submit(DioFeed *f, BlockNumber first, int nblocks, uint16 mask);
extern void dio_feed_flush(DioFeed *f);
extern Page dio_feed_take(DioFeed *f, BlockNumber blk);
extern void dio_feed_untake(DioFeed *f);
extern void dio_feed_reset(DioFeed *f);
extern void dio_feed_end(DioFeed *f);
extern const DioFeedCounters *dio_feed_counters(DioFeed *f);

/* a parallel query's images, in its dynamic shared memory */
extern Size dio_feed_shared_size(int nparts, int nslots);
extern void dio_feed_shared_init(DioFeedShared *sh, int nparts, int nslots, bool reuse);
extern void dio_feed_share(DioFeed *f, DioFeedShared *sh, dsa_area *area, int part);
extern bool dio_feed_claimed(DioFeed *f, BlockNumber first);
extern void dio_feed_finish(DioFeed *f);
extern void dio_feed_detach(DioFeed *f);

#endif							/* PG_DIO_SCAN_FEED_H */
