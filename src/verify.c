/*-------------------------------------------------------------------------
 *
 * verify.c
 *	  Page verification for directly read pages.
 *
 * A directly read page is used only if it passes the test PostgreSQL
 * applies to every page it reads into shared buffers (PageIsVerified with
 * no flags): a sane header and, with data checksums, the right checksum.
 * dio_page_verified makes that test for pages that are not new -- new pages
 * are never used directly -- and computes the checksum with an AVX2 build of
 * PostgreSQL's algorithm where the CPU has it (verify_avx2.c).
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/verify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufpage.h"
#include "storage/checksum.h"

#include "verify.h"

typedef uint16 (*dio_checksum_fn) (char *page, BlockNumber blkno);

static dio_checksum_fn dio_checksum = NULL;

/* The checksum function for this CPU; chosen once per process. */
static inline dio_checksum_fn
dio_checksum_impl(void)
{
	if (likely(dio_checksum != NULL))
		return dio_checksum;
	dio_checksum = pg_checksum_page;
#ifdef DIO_HAVE_AVX2_CHECKSUM
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
		dio_checksum = dio_checksum_page_avx2;
#endif
	return dio_checksum;
}

/*
 * Is this page, read directly as block 'blkno', what PageIsVerified would
 * accept?  New (all-zero header) pages return false: the caller reads them
 * through the buffer manager.  checksums: verify the checksum (the caller
 * asks whether the cluster's are verified right before, dio_checksums_verify).
 * *checksum_failure says whether the checksum was wrong.
 */
bool
dio_page_verified(Page page, BlockNumber blkno, bool checksums, bool *checksum_failure)
{
	PageHeader	p = (PageHeader) page;

	*checksum_failure = false;
	if (PageIsNew(page))
		return false;
	if (checksums &&
		dio_checksum_impl() ((char *) page, blkno) != p->pd_checksum)
		*checksum_failure = true;

	return !*checksum_failure &&
		(p->pd_flags & ~PD_VALID_FLAG_BITS) == 0 &&
		p->pd_lower <= p->pd_upper &&
		p->pd_upper <= p->pd_special &&
		p->pd_special <= BLCKSZ &&
		p->pd_special == MAXALIGN(p->pd_special);
}

