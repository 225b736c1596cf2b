/*-------------------------------------------------------------------------
 *
 * scan_probe_leaf.c
 *	  Which btree leaf page a probe will start at, found without reading it.
 *
 * A probe of a large index reads one leaf page at random, and the probe
 * waits for it as the inner's heap fetch would.  The levels above the
 * leaves are a small part of the index and stay cached, so ProbePrefetch
 * descends them itself, with an insertion key built from the probe's scan
 * keys, and advises the leaf before the probe runs.
 *
 * The descent is the one _bt_search makes for a forward scan (nextkey false,
 * no heap TID): the same page at each level, _bt_compare for the same
 * binary search, moving right past a page split since the parent was read.
 * It stops at level 1 and returns the downlink.  A wrong guess (a page
 * deleted meanwhile) costs one advised block; the probe itself is btree's.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_probe_leaf.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/stratnum.h"
#include "catalog/pg_am_d.h"
#include "utils/rel.h"

#include "scan_probe.h"

/* pages visited at most in one descent, moves right included */
#define LEAF_MAX_HOPS	64

struct DioLeafKey
{
	BTScanInsert key;			/* keysz set per probe: all of 'which' */
	int			nkeys;
	int			which[INDEX_MAX_KEYS];	/* the scan key of each column */
};

/*
 * Can a scan key start the descent at column 'att': '=' on it, or (the
 * last) '>=' or '>' on an ascending column, of the column's own type?
 */
static bool
leaf_key_usable(Relation index, ScanKey sk, AttrNumber att, bool *equal)
{
	if (sk->sk_attno != att ||
		(sk->sk_flags & (SK_ROW_HEADER | SK_SEARCHARRAY | SK_SEARCHNULL |
						 SK_SEARCHNOTNULL)) != 0)
		return false;
	if (OidIsValid(sk->sk_subtype) && sk->sk_subtype != index->rd_opcintype[att - 1])
		return false;
	*equal = sk->sk_strategy == BTEqualStrategyNumber;
	if (*equal)
		return true;
	return (sk->sk_strategy == BTGreaterEqualStrategyNumber ||
			sk->sk_strategy == BTGreaterStrategyNumber) &&
		(index->rd_indoption[att - 1] & INDOPTION_DESC) == 0;
}

/*
 * The insertion key for probes with scan keys 'keys' (built by
 * ExecIndexBuildScanKeys; arguments set per probe), or NULL where the index
 * is not a btree or the keys bound no leading column.
 */
DioLeafKey *
dio_leaf_key_create(Relation index, ScanKey keys, int nkeys)
{
	DioLeafKey *lk;
	int			natts = IndexRelationGetNumberOfKeyAttributes(index);

	if (index->rd_rel->relam != BTREE_AM_OID)
		return NULL;
	lk = palloc0(sizeof(DioLeafKey));
	for (AttrNumber att = 1; att <= natts; att++)
	{
		int			found = -1;
		bool		equal = false;

		for (int i = 0; i < nkeys && found < 0; i++)
			if (leaf_key_usable(index, &keys[i], att, &equal) && equal)
				found = i;
		for (int i = 0; i < nkeys && found < 0; i++)
			if (leaf_key_usable(index, &keys[i], att, &equal))
				found = i;
		if (found < 0)
			break;
		lk->which[lk->nkeys++] = found;
		if (!equal)
			break;
	}
	if (lk->nkeys == 0)
	{
		pfree(lk);
		return NULL;
	}
	lk->key = _bt_mkscankey(index, NULL);
	_bt_metaversion(index, &lk->key->heapkeyspace, &lk->key->allequalimage);
	return lk;
}

/* The first offset whose downlink leads to the keys, as _bt_binsrch finds it */
static OffsetNumber
leaf_binsrch(Relation index, BTScanInsert key, Page page, BTPageOpaque opaque)
{
	OffsetNumber low = P_FIRSTDATAKEY(opaque);
	OffsetNumber high = PageGetMaxOffsetNumber(page);

	if (high < low)
		return low;
	/* the first item not less than the key is in [low, high + 1] */
	high++;
	while (high > low)
	{
		OffsetNumber mid = low + ((high - low) / 2);

		if (_bt_compare(index, key, page, mid) > 0)
			low = mid + 1;
		else
			high = mid;
	}
	/* the downlink before it: the first data item is minus infinity */
	return Max(OffsetNumberPrev(low), P_FIRSTDATAKEY(opaque));
}

/*
 * The leaf page a probe with 'keys' (arguments set) starts at, found through
 * the upper levels; InvalidBlockNumber where the root is a leaf, a key is
 * NULL (nothing matches), or the descent goes astray.
 */
BlockNumber
dio_leaf_find(DioLeafKey *lk, Relation index, Relation heap, ScanKey keys)
{
	BTScanInsert key = lk->key;
	BlockNumber leaf = InvalidBlockNumber;
	Buffer		buf;

	for (int i = 0; i < lk->nkeys; i++)
	{
		ScanKey		sk = &keys[lk->which[i]];
		ScanKey		ik = &key->scankeys[i];

		if (sk->sk_flags & SK_ISNULL)
			return InvalidBlockNumber;
		ik->sk_argument = sk->sk_argument;
		ik->sk_flags &= ~SK_ISNULL;
	}
	key->keysz = lk->nkeys;
	key->anynullkeys = false;
	key->nextkey = false;
	key->backward = false;
	key->scantid = NULL;

	buf = _bt_getroot(index, heap, BT_READ);
	if (!BufferIsValid(buf))
		return InvalidBlockNumber;
	for (int hops = 0; hops < LEAF_MAX_HOPS; hops++)
	{
		Page		page = BufferGetPage(buf);
		BTPageOpaque opaque = BTPageGetOpaque(page);
		ItemId		itemid;
		BlockNumber child;

		if (P_ISLEAF(opaque))
			break;
		/* split since the parent was read: the keys may be to the right */
		if (!P_RIGHTMOST(opaque) &&
			(P_IGNORE(opaque) || _bt_compare(index, key, page, P_HIKEY) > 0))
		{
			buf = _bt_relandgetbuf(index, buf, opaque->btpo_next, BT_READ);
			continue;
		}
		itemid = PageGetItemId(page, leaf_binsrch(index, key, page, opaque));
		child = BTreeTupleGetDownLink((IndexTuple) PageGetItem(page, itemid));
		if (opaque->btpo_level == 1)
		{
			leaf = child;
			break;
		}
		buf = _bt_relandgetbuf(index, buf, child, BT_READ);
	}
	_bt_relbuf(index, buf);
	return leaf;
}
