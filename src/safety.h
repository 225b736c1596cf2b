/*-------------------------------------------------------------------------
 *
 * safety.h
 *	  The rules under which both of pg_dio's heap scans may use a direct
 *	  image of a block (safety.c; the argument is docs/design.md): the block
 *	  is not in shared buffers, and the image passes verification and is
 *	  all-visible (and, for a snapshot taken during recovery, is no newer
 *	  than the replay position read before the block's visibility-map bit).
 *	  Also the shared setting pg_dio.os_cache_check.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/safety.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SAFETY_H
#define PG_DIO_SAFETY_H

#include "access/xlogdefs.h"
#include "storage/block.h"
#include "storage/bufpage.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

extern PGDLLIMPORT bool pg_dio_os_cache_check;

extern void dio_safety_define_settings(void);
extern bool dio_block_resident(Relation rel, BlockNumber blk);
extern XLogRecPtr dio_image_lsn_bound(Snapshot snapshot);
extern bool dio_direct_image_usable(Relation rel, Page page, BlockNumber blk,
									XLogRecPtr lsn_bound);

#endif							/* PG_DIO_SAFETY_H */
