/*-------------------------------------------------------------------------
 *
 * tools.h
 *	  pg_dio's relation tools: pg_dio_read (tool_read.c), pg_dio_evict and
 *	  pg_dio_residency (tool_cache.c).
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/tools.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_TOOLS_H
#define PG_DIO_TOOLS_H

#include "utils/rel.h"

typedef enum DioPrivilege
{
	DIO_PRIV_SELECT,			/* SELECT on the relation */
	DIO_PRIV_OWNER,				/* owner, pg_maintain or superuser */
} DioPrivilege;

extern Relation dio_open_relation(Oid relid, const char *fn, DioPrivilege priv,
								  bool heap_only);

#endif							/* PG_DIO_TOOLS_H */
