// SPDX-License-Identifier: Apache-2.0
/**
 * Files that hold secrets: a machine config with a registry password, a private key.
 * {@link writePrivateFile} creates them mode 0600 from the first byte — a new file is written
 * beside the target with `O_EXCL` and that mode, then renamed over it, so the secret is never in a
 * file others could read, not even for the moment between a write and a `chmod`, and replacing an
 * existing 0644 file does not keep its mode. {@link assertPrivate} is the reader's check: a daemon
 * refuses to start on a secret others can read, rather than run with it leaked.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../core/errors.ts';

/** Write `data` to `path`, readable and writable by its owner only (0600), replacing any file. */
export async function writePrivateFile(path: string, data: string | Uint8Array): Promise<void> {
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, data, { mode: 0o600, flag: 'wx' });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * Refuse a secret that group or others can read: `MOLT_SECRET_EXPOSED` naming the file, its mode
 * and `what` it holds, with the `chmod` that fixes it. The owner is not checked: the daemon reads
 * the file as whoever it runs as.
 */
export async function assertPrivate(path: string, what: string): Promise<void> {
  const mode = (await stat(path)).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  throw new MoltError(
    ErrorCode.SecretExposed,
    `${path} holds ${what} and is open to group or others (mode ${mode.toString(8).padStart(4, '0')})`,
    { hint: `chmod 600 ${path}` },
  );
}
