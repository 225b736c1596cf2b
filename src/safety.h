/*-------------------------------------------------------------------------
 *
 * safety.h
 *	  The rules under which both of pg_dio's heap scans may use a direct
 *	  image of a block (safety.c; the argument is docs/design.md): the block
 *	  is not in shared buffers, and the image passes verification and is
 *	  all-visible.  Also the shared setting pg_dio.os_cache_check.
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

#include "storage/block.h"
#include "storage/bufpage.h"
#include "utils/rel.h"

extern PGDLLIMPORT bool pg_dio_os_cache_check;

extern void dio_safety_define_settings(void);
extern bool dio_block_resident(Relation rel, BlockNumber blk);
extern bool dio_direct_image_usable(Relation rel, Page page, BlockNumber blk);

#endif							/* PG_DIO_SAFETY_H */
