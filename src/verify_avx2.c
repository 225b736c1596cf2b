/*-------------------------------------------------------------------------
 *
 * verify_avx2.c
 *	  PostgreSQL's data checksum, built for CPUs with AVX2.
 *
 * The algorithm is PostgreSQL's own: storage/checksum_impl.h is the header
 * PostgreSQL installs so that programs outside the server can compute page
 * checksums, and this file only includes it under another name.  What
 * differs from the server's copy is the code the compiler makes of it: this
 * file is built with -mavx2 (Makefile), which vectorizes the 32 parallel
 * lanes eight at a time with a real 32-bit multiply, where a generic x86-64
 * build works four at a time with shifts and adds.  In a cold direct scan
 * the checksum is a quarter of the backend's CPU time.
 *
 * Nothing in this file may run on a CPU without AVX2: the only entry point,
 * dio_checksum_page_avx2, is called by dio_page_verified (verify.c) after
 * checking the CPU.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/verify_avx2.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "verify.h"

#ifdef DIO_HAVE_AVX2_CHECKSUM

#define pg_checksum_page dio_checksum_page_avx2
#include "storage/checksum_impl.h"
#undef pg_checksum_page

#endif
