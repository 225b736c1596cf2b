/*-------------------------------------------------------------------------
 *
 * safety.c
 *	  When a direct image of a heap block may be used: the rules DirectSeqScan
 *	  and PrefetchIndexScan's direct heap reads share.  docs/design.md has
 *	  the argument; in short, a block not in shared buffers when its read is
 *	  submitted has on disk every change the scan's snapshot sees, and an
 *	  untorn image with PD_ALL_VISIBLE holds exactly the tuples it sees.  On
 *	  a hot standby the image must also be the version whose visibility-map
 *	  bit the scan saw set: no newer than the replay position read before.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/safety.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogrecovery.h"
#include "storage/buf_internals.h"
#include "utils/guc.h"

#include "compat.h"
#include "safety.h"
#include "verify.h"

bool		pg_dio_os_cache_check = true;

/* Is the block in shared buffers (valid or being read)? */
bool
dio_block_resident(Relation rel, BlockNumber blk)
{
	BufferTag	tag;
	uint32		hash;
	LWLock	   *lock;
	int			id;

	InitBufferTag(&tag, &rel->rd_locator, MAIN_FORKNUM, blk);
	hash = BufTableHashCode(&tag);
	lock = BufMappingPartitionLock(hash);
	LWLockAcquire(lock, LW_SHARED);
	id = BufTableLookup(&tag, hash);
	LWLockRelease(lock);
	return id >= 0;
}

/*
 * The newest page LSN a direct image may carry, for blocks whose
 * visibility-map bit is checked after this call and whose residency is
 * checked after that: none for a snapshot taken outside recovery.  For one
 * taken during recovery (a hot standby, or one promoted since), the replay
 * position now.  An image with an LSN no newer is the very version the
 * visibility-map bit described when it was seen set, which the replay of
 * that bit had cleared with every conflicting snapshot (docs/design.md);
 * PD_ALL_VISIBLE alone is not trusted there, as core's heap scans do not.
 */
XLogRecPtr
dio_image_lsn_bound(Snapshot snapshot)
{
	if (!snapshot->takenDuringRecovery)
		return InvalidXLogRecPtr;
	return GetXLogReplayRecPtr(NULL);
}

/*
 * May the direct image of 'blk' of 'rel' be used?  It must pass verification,
 * be all-visible and be no newer than 'lsn_bound' (if valid; see
 * dio_image_lsn_bound).  Whether data checksums are verified is asked per
 * image: PostgreSQL 19 can turn them on and off while a scan runs.  Without
 * them a torn read would go unnoticed; a write that tears it needs the block
 * resident, so the block must still not be.
 */
bool
dio_direct_image_usable(Relation rel, Page page, BlockNumber blk,
						XLogRecPtr lsn_bound)
{
	bool		checksum_failure = false;
	bool		checksums = dio_checksums_verify();

	if (!dio_page_verified(page, blk, checksums, &checksum_failure))
		return false;
	if (!PageIsAllVisible(page))
		return false;
	if (!XLogRecPtrIsInvalid(lsn_bound) && PageGetLSN(page) > lsn_bound)
		return false;
	return checksums || !dio_block_resident(rel, blk);
}

void
dio_safety_define_settings(void)
{
	DefineCustomBoolVariable("pg_dio.os_cache_check",
							 "Enables reading data that is in the OS page cache through the buffer manager.",
							 "DirectSeqScan reads 8 MB chunks that are mostly in the OS page cache through the buffer manager; PrefetchIndexScan reads heap blocks in the OS page cache itself, synchronously, instead of through its read stream.",
							 &pg_dio_os_cache_check,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
}
