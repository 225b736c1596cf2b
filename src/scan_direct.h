/*-------------------------------------------------------------------------
 *
 * scan_direct.h
 *	  DirectSeqScan (scan_direct.c): a sequential scan that reads
 *	  all-visible, non-resident heap blocks directly.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_direct.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SCAN_DIRECT_H
#define PG_DIO_SCAN_DIRECT_H

#include "nodes/plannodes.h"

#include "scan_plan.h"

extern PGDLLIMPORT bool pg_dio_enable_direct_scan;
extern PGDLLIMPORT int pg_dio_direct_scan_threshold;

extern void dio_direct_init(void);
extern Plan *dio_direct_substitute(PlannedStmt *stmt, Plan *plan, bool plain,
								   double fraction, const DioPlanSettings *set);

#endif							/* PG_DIO_SCAN_DIRECT_H */
