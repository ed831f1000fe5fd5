// SPDX-License-Identifier: Apache-2.0
/**
 * Are the GM images still in the registry? (docs/adr/0013 decision 5.) A GM digest is kept for the
 * product's lifetime; a registry's garbage collection or a person's delete can still take it away,
 * and nothing would notice until a node needs to pull it. Each check HEADs every GM digest of every
 * policy in force — at most {@link GmCheckOptions.concurrency} at once, each bounded by a timeout —
 * and says per digest `present`, `missing` (the registry answered 404) or `unknown` (it failed, or
 * did not answer in time). A registry that is away is never reported as a missing image: that
 * would page someone for an outage as if the product had lost its images.
 */
import { errorLine } from '../../core/errors.ts';
import type { ImagePolicy } from '../../core/images/types.ts';
import { mapConcurrent } from '../../releases/discovery/pool.ts';

export type GmState = 'present' | 'missing' | 'unknown';

/** One GM digest of one policy, as the last check saw it. */
export interface GmFinding {
  readonly policy: string;
  readonly repository: string;
  readonly digest: string;
  /** The pin's reason (why the digest is kept). */
  readonly reason: string;
  readonly state: GmState;
  /** Why it is `unknown` (the registry's error, or the timeout). */
  readonly message?: string;
}

/**
 * HEAD `/v2/<repository>/manifests/<digest>`: true when there, false on 404; any other failure
 * rejects (and the digest is `unknown`). `repository` is `host[:port]/path`.
 */
export type GmExists = (repository: string, digest: string) => Promise<boolean>;

export interface GmCheckOptions {
  /** HEADs in flight at once, over every registry. @default 8 */
  readonly concurrency?: number;
  /** How long one HEAD may take before its digest is `unknown`. @default 10 s */
  readonly timeoutMs?: number;
}

/** `work`, or a rejection after `ms` (the timer never outlives the call). */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`no answer within ${String(ms)} ms`));
    }, ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Check every GM digest of every policy once; findings in policy, then pin order. */
export async function checkGm(
  policies: readonly ImagePolicy[],
  exists: GmExists,
  options: GmCheckOptions = {},
): Promise<GmFinding[]> {
  const pins = policies.flatMap((p) =>
    p.gm.map((g) => ({
      policy: p.name,
      repository: p.repository,
      digest: g.digest,
      reason: g.reason,
    })),
  );
  const timeoutMs = options.timeoutMs ?? 10_000;
  return mapConcurrent(pins, options.concurrency ?? 8, async (pin): Promise<GmFinding> => {
    try {
      const there = await within(timeoutMs, exists(pin.repository, pin.digest));
      return { ...pin, state: there ? 'present' : 'missing' };
    } catch (e) {
      return { ...pin, state: 'unknown', message: errorLine(e) };
    }
  });
}

/** The last findings, kept between checks (the metric, the condition and the log read them). */
export interface GmWatch {
  /** Check now; the findings replace the last ones. */
  check(): Promise<readonly GmFinding[]>;
  /** The last check's findings; undefined before the first (or after {@link clear}). */
  findings(): readonly GmFinding[] | undefined;
  /** Forget the findings (a standby stops checking: what it last saw goes stale). */
  clear(): void;
}

export function createGmWatch(d: {
  /** The image policies in force, live. */
  readonly policies: () => readonly ImagePolicy[];
  readonly exists: GmExists;
  readonly options?: GmCheckOptions;
}): GmWatch {
  let last: readonly GmFinding[] | undefined;
  return {
    async check() {
      last = await checkGm(d.policies(), d.exists, d.options);
      return last;
    },
    findings: () => last,
    clear() {
      last = undefined;
    },
  };
}
