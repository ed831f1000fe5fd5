// SPDX-License-Identifier: Apache-2.0
/**
 * A server-sent-events parser (WHATWG HTML §9.2.6) over a byte stream: fields `id`, `event`,
 * `data` (multi-line), comments ignored, any line ending. Pure: bytes in, frames out.
 */

/** UTF-8 decoding is a global in every runtime molt's clients run in (Node, browsers). */
declare const TextDecoder: new (label?: string) => {
  decode(input?: Uint8Array, options?: { stream?: boolean }): string;
};

/** One dispatched event. `id` is the last id seen on the stream, as `Last-Event-ID` would send it. */
export interface SseFrame {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

interface Pending {
  event: string;
  data: string[];
}

/** Frames of an SSE byte stream, in order; ends when the stream ends (a partial frame is dropped). */
export async function* parseSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let lastId: string | undefined;
  let pending: Pending = { event: '', data: [] };
  for await (const chunk of chunks) {
    let text = buffer + decoder.decode(chunk, { stream: true });
    // A trailing '\r' may be half of a '\r\n' split across chunks: hold it back with the
    // unfinished line, or the '\n' would end an extra, empty line and dispatch a frame early.
    const held = text.endsWith('\r') ? '\r' : '';
    if (held !== '') text = text.slice(0, -1);
    const lines = text.split(/\r\n|\r|\n/);
    buffer = (lines.pop() ?? '') + held;
    for (const line of lines) {
      const frame = line === '' ? dispatch(pending, lastId) : undefined;
      if (line === '') pending = { event: '', data: [] };
      else lastId = applyField(line, pending) ?? lastId;
      if (frame !== undefined) yield frame;
    }
  }
}

/** The frame a blank line completes; none when no data line came (a comment-only block). */
function dispatch(pending: Pending, id: string | undefined): SseFrame | undefined {
  return pending.data.length === 0
    ? undefined
    : { id, event: pending.event || 'message', data: pending.data.join('\n') };
}

/** Apply one non-empty line to the frame being built; returns a new id when the line sets one. */
function applyField(line: string, pending: Pending): string | undefined {
  if (line.startsWith(':')) return undefined;
  const colon = line.indexOf(':');
  const field = colon === -1 ? line : line.slice(0, colon);
  let value = colon === -1 ? '' : line.slice(colon + 1);
  if (value.startsWith(' ')) value = value.slice(1);
  if (field === 'event') pending.event = value;
  else if (field === 'data') pending.data.push(value);
  else if (field === 'id' && !value.includes('\0')) return value;
  return undefined;
}
