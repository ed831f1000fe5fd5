// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's history in the Kubernetes store (docs/adr/0016): pages of {@link PAGE_EVENTS}
 * events, page `p` holding seqs `p·50+1 … (p+1)·50`, one record each. An append is one write:
 * it replaces the newest page at the resourceVersion read (its last seq + 1 is the new seq), or,
 * when that page is full, creates the next page — a create two appenders cannot both win. So seqs
 * are handed out once each, without gaps, and an event becomes visible only after every lower
 * seq (what the notification cursors rely on: a reader never skips an event still to land).
 *
 * Bounded: creating page `p` deletes page `p − KEPT_PAGES`, so the newest 951–1,000 events stay,
 * and any older page a failed delete left behind (see {@link prune}).
 * An event whose JSON exceeds {@link MAX_EVENT_BYTES} is kept with its message cut and its data
 * replaced by `{truncated: <bytes>}`: a page can then never outgrow one object.
 */
import type { HistoryEvent, NewHistoryEvent } from '../../ports/store.ts';
import { decodeList } from './codec.ts';
import { Conflict, type Read, type Records } from './records.ts';

export const PAGE_EVENTS = 50;
export const KEPT_PAGES = 20;
/** 50 events of at most 16 KiB: a page stays under 1 MiB (`records.ts`' MAX_RECORD_BYTES). */
export const MAX_EVENT_BYTES = 16 * 1024;

export const pageKey = (page: number): string => String(page).padStart(12, '0');

interface Page {
  readonly page: number;
  readonly events: HistoryEvent[];
  readonly rv: string;
}

/**
 * The pages' shape (tests make them small to cross many pages fast) and what the store instance
 * remembers between calls: the newest page it saw.
 */
export interface HistoryCache {
  readonly pageEvents: number;
  readonly keptPages: number;
  newest?: number;
}

function pageOf(r: Records, read: Read): Page {
  const where = { namespace: r.namespace, kind: read.kind, key: read.key };
  return {
    page: Number(read.key),
    events: decodeList('history', where, read.data, 'events'),
    rv: read.rv,
  };
}

async function getPage(r: Records, page: number): Promise<Page | undefined> {
  const read = await r.get('history', pageKey(page));
  return read && pageOf(r, read);
}

async function allPages(r: Records): Promise<Page[]> {
  return (await r.list(['history'])).map((read) => pageOf(r, read)).sort((a, b) => a.page - b.page);
}

const full = (c: HistoryCache, p: Page): boolean =>
  p.events.at(-1)?.seq === (p.page + 1) * c.pageEvents;

/** The newest page, found from the cached hint (pages only ever follow a full one). */
async function newestPage(r: Records, cache: HistoryCache): Promise<Page | undefined> {
  let page = cache.newest === undefined ? undefined : await getPage(r, cache.newest);
  if (page === undefined) {
    page = (await allPages(r)).at(-1);
    if (page === undefined) return undefined;
  }
  for (;;) {
    cache.newest = page.page;
    if (!full(cache, page)) return page;
    const next = await getPage(r, page.page + 1);
    if (next === undefined) return page;
    page = next;
  }
}

function capped(event: NewHistoryEvent): NewHistoryEvent {
  const bytes = Buffer.byteLength(JSON.stringify(event));
  if (bytes <= MAX_EVENT_BYTES) return event;
  return { ...event, message: event.message.slice(0, 2_000), data: { truncated: bytes } };
}

export function appendHistory(
  r: Records,
  cache: HistoryCache,
  event: NewHistoryEvent,
): Promise<HistoryEvent> {
  const kept = capped(event);
  return r.retrying('appending to the history', async () => {
    const head = await newestPage(r, cache);
    const seq = (head?.events.at(-1)?.seq ?? 0) + 1;
    const stored: HistoryEvent = { seq, ...kept };
    const page = Math.floor((seq - 1) / cache.pageEvents);
    if (head !== undefined && head.page === page)
      return (await r.replace(
        'history',
        pageKey(page),
        { events: [...head.events, stored] },
        head.rv,
      )) === Conflict
        ? Conflict
        : stored;
    if ((await r.create('history', pageKey(page), { events: [stored] })) === Conflict) {
      cache.newest = page;
      return Conflict;
    }
    cache.newest = page;
    await prune(r, cache, page);
    return stored;
  });
}

/**
 * Delete the pages that fell out of the window now that `page` exists: from `page − keptPages`
 * down, until one is already gone. Best effort — the event is stored, and failing now would have
 * the caller append it again — so a delete that fails ends the walk, and the next page's walk
 * passes over the page it left (one extra read-free delete per page, a 404 when nothing leaked).
 */
async function prune(r: Records, cache: HistoryCache, page: number): Promise<void> {
  for (let old = page - cache.keptPages; old >= 0; old--)
    if (!(await r.remove('history', pageKey(old)).catch(() => false))) return;
}

export async function historyHead(r: Records, cache: HistoryCache): Promise<number> {
  return (await newestPage(r, cache))?.events.at(-1)?.seq ?? 0;
}

/**
 * Events after `afterSeq`, oldest first, at most `limit`. From a seq: its page and the ones after
 * it, one read each, stopping at a page not full (nothing follows it yet); without one, or when
 * that page was pruned, every page in one list.
 */
/**
 * Whether `after` is the last seq of a full page that nothing follows yet: a reader caught up at a
 * page boundary, whose next page is simply not created — not one whose page was pruned.
 */
async function caughtUpAtPageEnd(r: Records, cache: HistoryCache, after: number): Promise<boolean> {
  if (after === 0 || after % cache.pageEvents !== 0) return false;
  const last = await getPage(r, after / cache.pageEvents - 1);
  return last !== undefined && full(cache, last);
}

export async function history(
  r: Records,
  cache: HistoryCache,
  options: { afterSeq?: number; limit?: number } = {},
): Promise<HistoryEvent[]> {
  const limit = options.limit === undefined ? Infinity : Math.floor(options.limit);
  if (limit <= 0) return [];
  const after = Math.max(0, Math.floor(options.afterSeq ?? 0));
  const take = (pages: readonly Page[]): HistoryEvent[] =>
    pages
      .flatMap((p) => p.events)
      .filter((e) => e.seq > after)
      .slice(0, limit);
  let page =
    options.afterSeq === undefined
      ? undefined
      : await getPage(r, Math.floor(after / cache.pageEvents));
  if (page === undefined && (await caughtUpAtPageEnd(r, cache, after))) return [];
  if (page === undefined) return take(await allPages(r));
  const pages = [page];
  while (full(cache, page) && take(pages).length < limit) {
    page = await getPage(r, page.page + 1);
    if (page === undefined) break;
    pages.push(page);
  }
  return take(pages);
}
