// SPDX-License-Identifier: Apache-2.0
/**
 * Why a running VM's console fell silent, asked of QEMU and of the host when a wait for the
 * console gives up: a guest QEMU has paused (a failed host write, a watchdog set to pause) looks,
 * from the console alone, exactly like a guest that hangs.
 */
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { qmpExecute } from './qmp.ts';

const MiB = 1024 * 1024;

/** What QEMU's `query-status` says of the guest, as a sentence. */
export async function guestState(qmpSocket: string): Promise<string> {
  try {
    const r = (await qmpExecute(qmpSocket, 'query-status', {}, 3_000)) as {
      status?: string;
      running?: boolean;
    };
    const status = r.status ?? 'unknown';
    if (r.running === true) return 'QEMU says the guest is running';
    const why =
      status === 'io-error' ? ' — a write to its disk failed on the host (is the host full?)' : '';
    return `QEMU has paused the guest: ${status}${why}`;
  } catch (e) {
    return `QEMU's monitor did not answer (${(e as Error).message})`;
  }
}

/** The space left on the host filesystem holding `file`, as a sentence. */
export async function hostSpace(file: string): Promise<string> {
  try {
    const s = await statfs(dirname(file));
    return `the host has ${String(Math.floor((s.bavail * s.bsize) / MiB))} MiB free where the disk lives`;
  } catch (e) {
    return `the host's free space is unknown (${(e as Error).message})`;
  }
}

/**
 * `e` with what QEMU and the host say appended, when it is a console wait that ran out of time
 * on a VM that is still on; any other error unchanged.
 */
export async function explainSilence(
  e: unknown,
  vm: { readonly qmpSocket: string; readonly disk: string; readonly on: boolean },
): Promise<unknown> {
  if (!(e instanceof MoltError) || e.code !== ErrorCode.VmFailed || !vm.on) return e;
  const [state, space] = await Promise.all([guestState(vm.qmpSocket), hostSpace(vm.disk)]);
  return new MoltError(e.code, `${e.message}\n(${state}; ${space})`, {
    ...(e.hint !== undefined && { hint: e.hint }),
    cause: e,
  });
}
