// SPDX-License-Identifier: Apache-2.0
/**
 * The live event log: the operator's history over server-sent events (`/v1/events?follow=true`),
 * newest first, the last 300 kept. The browser's EventSource reconnects by itself and resumes
 * after the last event it saw (`Last-Event-ID`).
 */
import type { HistoryEventView } from '../protocol/operator.ts';
import { el, setPill } from './dom.ts';
import { clock } from './format.ts';

type Kind = HistoryEventView['kind'];

/** The kinds the log lists; planner decisions are left out (every pass makes them). */
const listed: Readonly<Record<Kind, boolean>> = {
  'rollout-created': true,
  'rollout-state': true,
  'machine-start': true,
  'machine-result': true,
  'machine-rollback': true,
  decision: false,
  warning: true,
};
const kept = 300;

/** Where the log goes and what to do on each event. */
export interface FollowOptions {
  /** The list the events are prepended to. */
  readonly list: HTMLElement;
  /** The pill that says whether the stream is live. */
  readonly pill: HTMLElement;
  /** Called after each listed event. */
  readonly onEvent: () => void;
}

function entry(e: HistoryEventView): HTMLLIElement {
  return el(
    'li',
    { class: `kind-${e.kind}`, 'data-seq': e.seq },
    el('time', {}, clock(e.at)),
    e.message,
  );
}

/** Follow the operator's events into `list` until the page closes. */
export function followEvents(o: FollowOptions): void {
  const source = new EventSource('/v1/events?follow=true');
  source.onopen = () => {
    setPill(o.pill, 'live', 'ok');
  };
  source.onerror = () => {
    setPill(o.pill, 'reconnecting', 'bad');
  };
  for (const [kind, shown] of Object.entries(listed)) {
    if (!shown) continue;
    source.addEventListener(kind, (message) => {
      o.list.prepend(entry(JSON.parse(message.data as string) as HistoryEventView));
      while (o.list.children.length > kept) o.list.lastElementChild?.remove();
      o.onEvent();
    });
  }
}
