// SPDX-License-Identifier: Apache-2.0
/**
 * What every command's flags share: `-o`, the environment as the CLI sees it, and turning a zod
 * schema's first problem into `MOLT_BAD_FLAG` naming the flag (docs/adr/0001: commander parses, a
 * zod schema per command validates).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { parseDuration, parseTime } from '../core/time.ts';
import { ErrorCode, MoltError } from '../core/errors.ts';

/** Environment variables as the CLI sees them. */
export type CliEnv = Readonly<Record<string, string | undefined>>;

/** Parse `raw` with `schema`, turning the first problem into a MOLT_BAD_FLAG naming the flag. */
export function parseFlags<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const flag = issue?.path.map(String).join('.') ?? '';
  const given =
    typeof raw === 'object' && raw !== null && (raw as Record<string, unknown>)[flag] !== undefined;
  const what =
    !given && issue?.code === 'invalid_type' ? 'is required' : (issue?.message ?? 'is invalid');
  throw new MoltError(ErrorCode.BadFlag, `--${kebab(flag)} ${what}`, {
    hint: 'run the command with --help',
  });
}

const kebab = (s: string): string => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Read a PEM public key file given by flag; unreadable or non-PEM files raise MOLT_PUBLIC_KEY_INVALID. */
export async function readPublicKey(path: string | undefined): Promise<string | undefined> {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new MoltError(ErrorCode.PublicKeyInvalid, `cannot read public key ${path}`, { cause: e });
  }
  if (!text.includes('-----BEGIN PUBLIC KEY-----')) {
    throw new MoltError(
      ErrorCode.PublicKeyInvalid,
      `${path} is not a PEM public key (expected -----BEGIN PUBLIC KEY-----)`,
      {
        hint: 'export the key with `cosign public-key` or `openssl pkey -pubout`',
      },
    );
  }
  return text;
}

/** `--timeout <ms>`: a per-request deadline, 100 ms to 10 min. */
export const timeoutFlag = z.coerce
  .number({ message: 'must be a number of milliseconds' })
  .int()
  .min(100, 'must be at least 100 ms')
  .max(600_000);

/**
 * `--for <duration>` of a hold: checked here, so a typo is named as the flag the person typed
 * (`--for "2x" is not a duration …`), not as the API's `for` field after a round trip.
 */
export const holdForFlag = z
  .string()
  .refine((v) => parseDuration(v) !== undefined, {
    error: (issue) => `${JSON.stringify(issue.input)} is not a duration (e.g. 30m, 2h, 1d)`,
  })
  .refine((v) => (parseDuration(v) ?? 1) > 0, {
    error: (issue) =>
      `${JSON.stringify(issue.input)} holds for no time: give a duration longer than 0 (e.g. 30m), or release the hold with \`molt machine release\``,
  });

/** `--until <time>` of a hold: an ISO 8601 time with a zone. */
export const holdUntilFlag = z.string().refine((v) => parseTime(v) !== undefined, {
  error: (issue) =>
    `${JSON.stringify(issue.input)} is not a time with a zone (e.g. 2026-11-25T06:00:00Z)`,
});
