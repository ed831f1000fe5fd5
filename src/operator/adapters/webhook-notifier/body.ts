// SPDX-License-Identifier: Apache-2.0
/**
 * The bodies of webhook deliveries (docs/adr/0009): `json`, the notification as
 * `protocol/notifications.ts` defines it, for programs; `slack`, a message for people in the shape
 * of Slack's incoming webhooks (`{text, blocks}`: `text` is the fallback every client shows, the
 * blocks a headline, the operator's sentence and the facts around it) — Mattermost and Rocket.Chat
 * take the same body.
 */
import type { Notification } from '../../ports/notification-sink.ts';

export type WebhookFormat = 'json' | 'slack';

/** Slack's mrkdwn treats these three as control characters: escaped, text stays text. */
const escape = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const bad = /\.(halted|failed|rolled-back|rolling-back|paused|cancelled|block)$|^warning$/;
const good = /\.(completed|succeeded)$/;

/** Slack cuts a section's text at 3000 characters; the operator's sentences are far shorter. */
const clip = (s: string): string => (s.length > 2_000 ? `${s.slice(0, 2_000)}…` : s);

/** A mark people see at a glance: something went wrong, something finished, or news. */
function mark(kind: string): string {
  if (bad.test(kind)) return ':warning:';
  if (good.test(kind)) return ':white_check_mark:';
  return ':information_source:';
}

/** `machine.rolled-back` of `w-1` → `Machine w-1 rolled back`. */
function headline(n: Notification): string {
  const [what = n.kind, verb] = n.kind.split('.');
  const subject = what === 'machine' ? n.machine : what === 'rollout' ? n.rollout : undefined;
  const words = [
    what.charAt(0).toUpperCase() + what.slice(1),
    subject,
    verb?.replace(/-/g, ' '),
  ].filter((w) => w !== undefined);
  return words.join(' ');
}

/** The facts under the message: pool, release, who, when. */
function facts(n: Notification): string[] {
  return [
    ...(n.pool === undefined ? [] : [`pool *${escape(n.pool)}*`]),
    ...(n.release === undefined ? [] : [`release *${escape(n.release.version)}*`]),
    ...(n.rollout === undefined ? [] : [`rollout \`${escape(n.rollout)}\``]),
    `by ${escape(n.by)}`,
    n.at,
  ];
}

export function slackBody(n: Notification): {
  text: string;
  blocks: readonly Record<string, unknown>[];
} {
  const title = `${mark(n.kind)} ${escape(headline(n))}`;
  return {
    text: `${title}: ${escape(clip(n.message))}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${title}*\n${escape(clip(n.message))}` } },
      {
        type: 'context',
        elements: facts(n).map((text) => ({ type: 'mrkdwn', text })),
      },
    ],
  };
}

/** The body to POST, as text (what is signed is exactly what is sent). */
export function bodyOf(format: WebhookFormat, n: Notification): string {
  return JSON.stringify(format === 'slack' ? slackBody(n) : n);
}
