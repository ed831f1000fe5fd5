// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { readBusybox } from './busybox.ts';

const toolMissing = (e: unknown): boolean => isMoltError(e, ErrorCode.ToolMissing);

describe('readBusybox', () => {
  it('refuses a dynamically linked executable, which would not run in a container without libc', async () => {
    // The machine's own `ls` needs ld-linux: what Debian's dynamic `busybox` package would be.
    await assert.rejects(readBusybox('/bin/ls'), toolMissing);
  });

  it('refuses what is not an x86-64 executable, and a path that does not exist', async () => {
    await assert.rejects(readBusybox(new URL(import.meta.url).pathname), toolMissing);
    await assert.rejects(
      readBusybox('/nonexistent/busybox'),
      (e: unknown) => toolMissing(e) && /busybox-static/.test((e as { hint?: string }).hint ?? ''),
    );
  });
});
