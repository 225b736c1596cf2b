/*-------------------------------------------------------------------------
 *
 * scan_plan.h
 *	  The planner hook (scan_plan.c): core plans every query, then pg_dio's
 *	  scans take the place of the scans of the finished plan they can run.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_plan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SCAN_PLAN_H
#define PG_DIO_SCAN_PLAN_H

extern void dio_plan_init(void);

#endif							/* PG_DIO_SCAN_PLAN_H */
