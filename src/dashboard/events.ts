// SPDX-License-Identifier: Apache-2.0
/**
 * A live event log: the operator's history over server-sent events (`/v1/events?follow=true`,
 * filtered to a rollout or a machine on their pages), newest first, the last 300 kept. The
 * browser's EventSource reconnects by itself and resumes after the last event it saw
 * (`Last-Event-ID`). `decision` events (holds, blocks: who did what) reach signed-in people only.
 */
import { HistoryKinds } from '../core/rollout/vocabulary.ts';
import type { HistoryEventView } from '../protocol/operator.ts';
import { el, setPill } from './dom.ts';
import { clock } from './format.ts';

type Kind = HistoryEventView['kind'];

const kinds: readonly Kind[] = HistoryKinds;
const kept = 300;

/** Where the log goes, what it follows and what to do on each event. */
export interface FollowOptions {
  /** The list the events are prepended to (emptied first). */
  readonly list: HTMLElement;
  /** The pill that says whether the stream is live. */
  readonly pill?: HTMLElement | undefined;
  /** Only this rollout's or this machine's events. */
  readonly filter?: { readonly rollout?: string; readonly machine?: string } | undefined;
  /** Called after each event. */
  readonly onEvent?: () => void;
}

function entry(e: HistoryEventView): HTMLLIElement {
  return el(
    'li',
    { class: `kind-${e.kind}`, 'data-seq': e.seq },
    el('time', { datetime: e.at }, clock(e.at)),
    e.message,
  );
}

/** Follow the operator's events into `list`; the answer stops following. */
export function followEvents(o: FollowOptions): () => void {
  const q = new URLSearchParams({ follow: 'true' });
  if (o.filter?.rollout !== undefined) q.set('rollout', o.filter.rollout);
  if (o.filter?.machine !== undefined) q.set('machine', o.filter.machine);
  o.list.replaceChildren();
  const source = new EventSource(`/v1/events?${q.toString()}`);
  source.onopen = () => {
    if (o.pill !== undefined) setPill(o.pill, 'live', 'ok');
  };
  source.onerror = () => {
    if (o.pill !== undefined) setPill(o.pill, 'reconnecting', 'bad');
  };
  for (const kind of kinds) {
    source.addEventListener(kind, (message) => {
      o.list.prepend(entry(JSON.parse(message.data as string) as HistoryEventView));
      while (o.list.children.length > kept) o.list.lastElementChild?.remove();
      o.onEvent?.();
    });
  }
  return () => {
    source.close();
  };
}
