// SPDX-License-Identifier: Apache-2.0
/**
 * Reading values back from etcd: each is parsed and checked against its shape, so a value written
 * by hand, by another version or cut short surfaces as one clear `MOLT_FLEET_INVALID` naming the
 * key, instead of a `TypeError` deep in the planner.
 */
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { HistoryKinds, MachinePhases, RolloutStates } from '../../../core/rollout/vocabulary.ts';
import type {
  Hold,
  HistoryEvent,
  MachineRecord,
  ReleaseBlock,
  Rollout,
  StartRecord,
} from './layout.ts';
import type { KubeUpgrade } from '../../../core/kubernetes/types.ts';
import type { KubeDesiredRecord } from '../../ports/kube-upgrade-store.ts';
import { kubeDesiredSchema, kubeUpgradeSchema } from './kube-codec.ts';

const text = z.string().min(1);
const time = z.number().int().nonnegative();

const machine = z.object({
  id: text,
  endpoint: z.string(),
  role: z.enum(['control-plane', 'worker']),
  pool: text,
  cluster: text.optional(),
  labels: z.record(z.string(), z.string()),
  registered: z.boolean().optional(),
  fromNode: z.boolean().optional(),
});

const progress = z.object({
  phase: z.enum(MachinePhases),
  startedAt: time.optional(),
  finishedAt: time.optional(),
  reason: z.string().optional(),
  operationId: z.string().optional(),
});

const release = z.object({ version: z.string(), digest: z.string() });

/** Every field of a rollout: zod drops keys an object does not name (it once dropped `from`). */
const rollout = z.object({
  id: text,
  pool: text,
  target: release,
  state: z.enum(RolloutStates),
  createdAt: z.number(),
  phased: z.object({ startFraction: z.number(), durationMs: z.number() }).optional(),
  machines: z.record(z.string(), progress),
  path: z.array(z.string()).optional(),
  from: release.optional(),
  rollbackOf: text.optional(),
  endReason: z.string().optional(),
  stateReason: z.string().optional(),
  repairOf: text.optional(),
  only: z.array(text).optional(),
  staged: z.record(z.string(), z.object({ operationId: text, at: z.number() })).optional(),
  images: z
    .object({
      policy: text,
      repository: text,
      units: z.record(
        z.string(),
        z.object({
          changes: z.array(z.object({ container: text, from: text, to: text })),
        }),
      ),
    })
    .optional(),
});

const start = z.object({ machine: text, pool: text, rollout: text, at: time });

const hold = z.object({
  reason: z.string(),
  until: z.number(),
  by: z.string().optional(),
  version: z.string().optional(),
});

const block = z.object({
  digest: text,
  pool: text.optional(),
  version: z.string().optional(),
  reason: z.string(),
  by: z.string(),
  at: time,
  rollout: text.optional(),
});

const history = z.object({
  seq: z.number().int().positive(),
  at: z.number(),
  kind: z.enum(HistoryKinds),
  rollout: z.string().optional(),
  machine: z.string().optional(),
  message: z.string(),
  data: z.record(z.string(), z.unknown()).optional(),
});

const seq = z.number().int().nonnegative();

/** What each kind of key holds. */
export interface Decoded {
  machine: MachineRecord;
  rollout: Rollout;
  start: StartRecord;
  hold: Hold;
  block: ReleaseBlock;
  history: HistoryEvent;
  seq: number;
  kubeUpgrade: KubeUpgrade;
  kubeDesired: KubeDesiredRecord;
}
export type Kind = keyof Decoded;

const schemas: { readonly [K in Kind]: z.ZodType } = {
  machine,
  rollout,
  start,
  hold,
  block,
  history,
  seq,
  kubeUpgrade: kubeUpgradeSchema,
  kubeDesired: kubeDesiredSchema,
};

/** Parse the value of `key`, expected to hold a `kind`; `MOLT_FLEET_INVALID` when it does not. */
export function decode<K extends Kind>(kind: K, key: string, value: Buffer | string): Decoded[K] {
  let json: unknown;
  try {
    json = JSON.parse(value.toString());
  } catch (e) {
    throw corrupt(kind, key, 'not JSON', e);
  }
  const parsed = schemas[kind].safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.join('.')}: `;
    throw corrupt(kind, key, `${where}${issue?.message ?? 'invalid'}`, parsed.error);
  }
  // zod types optional fields as `T | undefined`; JSON has no undefined, so the shape is exact.
  return parsed.data as Decoded[K];
}

export function encode(value: Decoded[Kind]): string {
  return JSON.stringify(value);
}

function corrupt(kind: Kind, key: string, why: string, cause: unknown): MoltError {
  return new MoltError(
    ErrorCode.StoreCorrupt,
    `etcd key ${key} does not hold a valid ${kind}: ${why}`,
    {
      cause,
      hint: `inspect it with \`etcdctl get ${key}\`; fix or delete it`,
      details: { key },
    },
  );
}
