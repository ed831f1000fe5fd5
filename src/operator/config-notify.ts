// SPDX-License-Identifier: Apache-2.0
/**
 * The `notifications` part of loading `molt operator --config` (docs/adr/0009): a sink's `events`
 * glob that matches no notification kind is refused (a typo would silence the sink for good), and
 * each `secretFile` is read (relative to the config, mode 0600 like every molt secret) at start-up
 * — a missing or exposed secret stops the operator with a clear error, never unsigned deliveries.
 */
import { readFile } from 'node:fs/promises';
import { dirname, posix, resolve } from 'node:path';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { assertPrivate } from '../platform/fs/private-file.ts';
import { NotificationKinds } from '../protocol/notifications.ts';
import type { OperatorConfig } from '../protocol/operator-config.ts';

/** Each sink's shared secret, by sink name (sinks without `secretFile` have none). */
export type NotificationSecrets = ReadonlyMap<string, Uint8Array>;

/** Refuse a sink's `events` glob that matches no notification kind, naming the kinds. */
export function checkNotificationEvents(config: OperatorConfig, path: string): void {
  config.notifications.forEach((sink, i) => {
    sink.events.forEach((glob, j) => {
      if (!NotificationKinds.some((kind) => posix.matchesGlob(kind, glob)))
        throw new MoltError(
          ErrorCode.ConfigInvalid,
          `${path}: notifications.${String(i)}.events.${String(j)}: "${glob}" matches no event kind`,
          { hint: `kinds (globs like rollout.* match several): ${NotificationKinds.join(', ')}` },
        );
    });
  });
}

async function readSecret(path: string, sink: string): Promise<Uint8Array> {
  let bytes: Buffer;
  try {
    await assertPrivate(path, `the secret of notification sink ${sink}`);
    bytes = await readFile(path);
  } catch (e) {
    if (e instanceof MoltError) throw e;
    throw new MoltError(
      ErrorCode.ConfigInvalid,
      `cannot read the secret of notification sink ${sink}, ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      { cause: e, hint: 'secretFile is relative to the operator config' },
    );
  }
  // A file written with `echo` ends in a newline the receiver's copy of the key does not have.
  const secret = bytes.toString('latin1').replace(/\r?\n$/, '');
  if (secret === '')
    throw new MoltError(ErrorCode.ConfigInvalid, `${path}: the secret of sink ${sink} is empty`, {
      hint: 'put the shared secret in it: `openssl rand -hex 32 > FILE; chmod 600 FILE`',
    });
  return Buffer.from(secret, 'latin1');
}

/** Read every sink's `secretFile`, relative to the config at `configPath`. */
export async function readNotificationSecrets(
  config: OperatorConfig,
  configPath: string,
): Promise<NotificationSecrets> {
  const secrets = new Map<string, Uint8Array>();
  for (const sink of config.notifications)
    if (sink.secretFile !== undefined)
      secrets.set(
        sink.name,
        await readSecret(resolve(dirname(configPath), sink.secretFile), sink.name),
      );
  return secrets;
}
