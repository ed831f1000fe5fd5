// SPDX-License-Identifier: Apache-2.0
// Fuzz target (docs/patterns/testing.md): SSE event streams as the CLI and dashboard read them.
// Any bytes, cut anywhere, give the same frames as the whole stream in one chunk; never a throw.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { anyBytes, fuzzParameters, fuzzText, outcomeAsync } from '../testkit/fuzz.ts';
import { parseSse, type SseFrame } from './sse.ts';

const stream =
  'id: op-1:1\nevent: progress\ndata: {"a":1}\ndata: 2\n\n: comment\r\nid\r\ndata\r\n\r\n';

async function frames(chunks: readonly Uint8Array[]): Promise<SseFrame[]> {
  const out: SseFrame[] = [];
  for await (const f of parseSse(Readable.from(chunks) as AsyncIterable<Uint8Array>)) out.push(f);
  return out;
}

describe('fuzz: SSE streams', () => {
  it('frames do not depend on where the stream is cut', async () => {
    const bytes = fc.oneof(
      anyBytes(400),
      fuzzText([stream], 400).map((t) => new TextEncoder().encode(t)),
    );
    await fc.assert(
      fc.asyncProperty(bytes, fc.array(fc.nat(), { maxLength: 6 }), async (b, cuts) => {
        const at = [...new Set(cuts.map((c) => c % (b.length + 1)))].sort((x, y) => x - y);
        const chunks = [0, ...at].map((from, i) => b.subarray(from, at[i] ?? b.length));
        const whole = await outcomeAsync(() => frames([b]), 'parseSse');
        const cut = await outcomeAsync(() => frames(chunks), 'parseSse');
        assert.ok(whole.ok && cut.ok);
        assert.deepEqual(cut.value, whole.value);
      }),
      fuzzParameters(1_000),
    );
  });
});
