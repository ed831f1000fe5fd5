// SPDX-License-Identifier: Apache-2.0
/**
 * A QMP client (QEMU Machine Protocol: JSON lines over the VM's unix socket): connect, read the
 * greeting, `qmp_capabilities`, one command, close. A connection per command keeps it usable
 * from any process (the lab daemon, `molt lab down`, a test) and never holds QEMU's single
 * monitor connection.
 *
 * Why no library: the npm QMP clients are unmaintained or drag in a whole libvirt-style stack,
 * and molt needs three commands (`query-status`, `system_reset`, `system_powerdown`) of a
 * protocol that is one JSON object per line; node:net is enough.
 */
import { connect } from 'node:net';
import { ErrorCode, MoltError } from '../../core/errors.ts';

interface QmpMessage {
  readonly QMP?: unknown;
  readonly return?: unknown;
  readonly error?: { readonly class: string; readonly desc: string };
  readonly event?: string;
}

/** Splits a stream into QMP messages; events (asynchronous, unrequested) are dropped. */
function replies(onReply: (m: QmpMessage) => void): (chunk: Buffer) => void {
  let pending = '';
  return (chunk) => {
    pending += chunk.toString('utf8');
    let nl = pending.indexOf('\n');
    while (nl >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      nl = pending.indexOf('\n');
      if (line === '') continue;
      let message: QmpMessage;
      try {
        message = JSON.parse(line) as QmpMessage;
      } catch {
        continue; // not QMP: ignored rather than thrown inside a socket callback
      }
      if (message.event === undefined) onReply(message);
    }
  };
}

/**
 * Run QMP `command` (with `args`) on the VM whose monitor listens at `socket`; resolves with the
 * command's `return` value. Rejects (MOLT_VM_FAILED) when the socket is absent, QEMU answers with
 * an error, or nothing answers within `timeoutMs`.
 */
export function qmpExecute(
  socket: string,
  command: string,
  args?: Readonly<Record<string, unknown>>,
  timeoutMs = 5_000,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const conn = connect(socket);
    const fail = (why: string): void => {
      conn.destroy();
      reject(new MoltError(ErrorCode.VmFailed, `QMP ${command} on ${socket}: ${why}`));
    };
    const timer = setTimeout(() => {
      fail(`no answer in ${timeoutMs} ms`);
    }, timeoutMs);
    conn.once('close', () => {
      clearTimeout(timer);
    });
    conn.on('error', (e) => {
      fail(e.message);
    });
    // Replies arrive in order: the greeting, the capabilities' return, the command's.
    const steps = [
      () => conn.write(`${JSON.stringify({ execute: 'qmp_capabilities' })}\n`),
      () => conn.write(`${JSON.stringify({ execute: command, arguments: args ?? {} })}\n`),
    ];
    conn.on(
      'data',
      replies((m) => {
        if (m.error !== undefined) {
          fail(`${m.error.class}: ${m.error.desc}`);
          return;
        }
        const next = steps.shift();
        if (next !== undefined) {
          next();
          return;
        }
        conn.end();
        resolve(m.return);
      }),
    );
  });
}
