/*-------------------------------------------------------------------------
 *
 * scan_preread.h
 *	  Reads of blocks into shared buffers started ahead of their use, whose
 *	  pins are held only until the I/O completes (scan_preread.c).
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_preread.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SCAN_PREREAD_H
#define PG_DIO_SCAN_PREREAD_H

#include "storage/bufmgr.h"
#include "utils/rel.h"

/* blocks one read covers at most (128 kB: core's default io_combine_limit) */
#define PREREAD_MAX_BLOCKS	16

typedef struct PreReadSlot
{
	ReadBuffersOperation op;
	Buffer		bufs[PREREAD_MAX_BLOCKS];
	int			nbufs;			/* of bufs, pinned by this read */
} PreReadSlot;

typedef struct PreRead
{
	PreReadSlot *slots;			/* a ring: reads [head, tail) in flight */
	int			nslots;
	uint64		head;
	uint64		tail;
	int			pinned;			/* buffers the reads in flight pin */
	int			max_pins;
	uint64		reads;			/* reads started */
	uint64		blocks;			/* blocks they cover */
	uint64		waits;			/* reads waited for to make room */
} PreRead;

extern bool preread_possible(void);
extern void preread_init(PreRead *pr, MemoryContext cxt);
extern int	preread_blocks(PreRead *pr, Relation rel, ForkNumber fork,
						   BlockNumber blk, int n);
extern bool preread_room(PreRead *pr, int n);
extern void preread_reap(PreRead *pr, bool all);

#endif							/* PG_DIO_SCAN_PREREAD_H */
