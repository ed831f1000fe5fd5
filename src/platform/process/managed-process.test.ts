// SPDX-License-Identifier: Apache-2.0
// A managed process's log file: one that cannot be opened is reported in the captured output and
// never throws an unhandled 'error' in this process (which left the child running).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startProcess, tempDir } from './managed-process.ts';

describe('a managed process with a log file', () => {
  it('keeps running and capturing when its log file cannot be opened, and says why', async () => {
    const dir = await tempDir('managed-log');
    try {
      const logFile = join(dir.path, 'missing', 'child.log');
      const p = startProcess(
        'echo',
        process.execPath,
        ['-e', 'console.log("hello from the child")'],
        {
          logFile,
        },
      );
      assert.equal(await p.exited, 0);
      await new Promise((done) => setImmediate(done));
      assert.match(p.output(), /hello from the child/);
      assert.match(p.output(), /\[log file error\] ENOENT/);
    } finally {
      await dir.remove();
    }
  });
});
