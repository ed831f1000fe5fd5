// SPDX-License-Identifier: Apache-2.0
// `molt … | head`: when the reader of molt's output goes away, molt ends quietly (exit 0, nothing
// on stderr), as `cat` does — not with an EPIPE stack trace.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const molt = join(import.meta.dirname, '../../src/bin/molt.ts');

describe('molt writing into a closed pipe', () => {
  it('ends quietly with exit 0 when its reader has gone', async () => {
    // `lab --help` writes its usage once it has loaded; the pipe is closed well before that.
    const child = spawn(process.execPath, [molt, 'lab', '--help'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(stderr, '');
    assert.equal(code, 0);
  });
});
