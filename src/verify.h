/*-------------------------------------------------------------------------
 *
 * verify.h
 *	  Page verification of direct images (verify.c, verify_avx2.c):
 *	  PostgreSQL's PageIsVerified test, with its checksum algorithm.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/verify.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_VERIFY_H
#define PG_DIO_VERIFY_H

#include "storage/block.h"
#include "storage/bufpage.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define DIO_HAVE_AVX2_CHECKSUM 1
extern uint16 dio_checksum_page_avx2(char *page, BlockNumber blkno);
#endif

extern bool dio_page_verified(Page page, BlockNumber blkno, bool checksums,
							  bool *checksum_failure);

#endif							/* PG_DIO_VERIFY_H */
