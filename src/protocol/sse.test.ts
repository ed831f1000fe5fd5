// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseSse, type SseFrame } from './sse.ts';

async function* chunks(parts: readonly string[]): AsyncGenerator<Uint8Array> {
  await Promise.resolve();
  for (const p of parts) yield new TextEncoder().encode(p);
}

async function parse(parts: readonly string[]): Promise<SseFrame[]> {
  const out: SseFrame[] = [];
  for await (const f of parseSse(chunks(parts))) out.push(f);
  return out;
}

describe('parseSse', () => {
  it('parses id, event and data, ignoring comments and retry', async () => {
    const frames = await parse([
      'retry: 2000\n\n: keep-alive\n\nid: op-1:1\nevent: phase\ndata: {"a":1}\n\n',
    ]);
    assert.deepEqual(frames, [{ id: 'op-1:1', event: 'phase', data: '{"a":1}' }]);
  });

  it('joins multi-line data and defaults the event to message', async () => {
    assert.deepEqual(await parse(['data: a\ndata: b\n\n']), [
      { id: undefined, event: 'message', data: 'a\nb' },
    ]);
  });

  it('handles frames and CRLF split across chunks, and multi-byte characters split mid-sequence', async () => {
    const text = 'id: x:1\r\nevent: log\r\ndata: grüße\r\n\r\nid: x:2\r\ndata: zwei\r\n\r\n';
    const bytes = new TextEncoder().encode(text);
    const cut = text.indexOf('ü') + 1; // inside the two-byte ü
    const parts = [bytes.slice(0, 8), bytes.slice(8, cut), bytes.slice(cut, 30), bytes.slice(30)];
    async function* gen(): AsyncGenerator<Uint8Array> {
      await Promise.resolve();
      yield* parts;
    }
    const frames: SseFrame[] = [];
    for await (const f of parseSse(gen())) frames.push(f);
    assert.deepEqual(frames, [
      { id: 'x:1', event: 'log', data: 'grüße' },
      { id: 'x:2', event: 'message', data: 'zwei' },
    ]);
  });

  it('does not dispatch early when a CRLF is split between chunks', async () => {
    const frames = await parse(['data: a\r', '\ndata: b\r', '\n\r', '\n']);
    assert.deepEqual(frames, [{ id: undefined, event: 'message', data: 'a\nb' }]);
  });

  it('drops an unfinished frame at the end of the stream', async () => {
    assert.deepEqual(await parse(['data: done\n\ndata: half']), [
      { id: undefined, event: 'message', data: 'done' },
    ]);
  });
});
