// SPDX-License-Identifier: Apache-2.0
/**
 * The Cluster API runtime-extension hooks molt serves for in-place updates (CAPI v1.14, * `runtime/hooks/v1alpha1`): Discovery, CanUpdateMachine, CanUpdateMachineSet and UpdateMachine.
 * Requests are read as CAPI sends them (apiVersion and kind required; the objects CAPI embeds —
 * Machines, MachineSets and the provider's objects molt does not own — keep every field, known or
 * not, because molt compares their specs whole). molt's answers are exact (strict objects).
 * Every string and array is bounded here; {@link jsonWithinLimits} bounds depth and size first.
 */
import { z } from 'zod';
import { capiObject, machine, machineSet } from './capi-objects.ts';

/** The API version of every hook request and answer. */
export const HookApiVersion = 'hooks.runtime.cluster.x-k8s.io/v1alpha1';

/** The hooks molt serves, as CAPI names them (the URL segment is the name lowercased). */
export const CapiHook = {
  CanUpdateMachine: 'CanUpdateMachine',
  CanUpdateMachineSet: 'CanUpdateMachineSet',
  UpdateMachine: 'UpdateMachine',
} as const;
export type CapiHook = (typeof CapiHook)[keyof typeof CapiHook];

/** The handler molt registers for each hook (ExtensionConfig status names them `<handler>.<config>`). */
export const CapiHandlerName: Readonly<Record<CapiHook, string>> = {
  CanUpdateMachine: 'can-update-machine',
  CanUpdateMachineSet: 'can-update-machineset',
  UpdateMachine: 'update-machine',
};

/** The URL path of a hook handler under the extension's base URL; discovery is `…/v1alpha1/discovery`. */
export function hookPath(hook: CapiHook | 'Discovery', handler?: string): string {
  const base = `/${HookApiVersion}/${hook.toLowerCase()}`;
  return handler === undefined ? base : `${base}/${handler}`;
}

/** Status of every hook answer: anything but `Success` is an error to CAPI (and blocks). */
export const HookStatus = z.enum(['Success', 'Failure']);
export type HookStatus = z.output<typeof HookStatus>;

const settings = z.record(z.string().max(253), z.string().max(4096)).optional();

function request<K extends string, S extends z.ZodRawShape>(kind: K, shape: S) {
  return z.looseObject({
    apiVersion: z.literal(HookApiVersion),
    kind: z.literal(kind),
    settings,
    ...shape,
  });
}

/** `POST …/discovery`: only TypeMeta. */
export const DiscoveryRequest = request('DiscoveryRequest', {});

const machineObjects = z.looseObject({
  machine,
  infrastructureMachine: capiObject,
  bootstrapConfig: capiObject.optional(),
});

/** CanUpdateMachine: the Machine and its provider objects as they are and as KCP wants them. */
export const CanUpdateMachineRequest = request('CanUpdateMachineRequest', {
  current: machineObjects,
  desired: machineObjects,
});
export type CanUpdateMachineRequest = z.output<typeof CanUpdateMachineRequest>;

const machineSetObjects = z.looseObject({
  machineSet,
  infrastructureMachineTemplate: capiObject,
  bootstrapConfigTemplate: capiObject.optional(),
});

/** CanUpdateMachineSet: the old and the new MachineSet of a MachineDeployment, with templates. */
export const CanUpdateMachineSetRequest = request('CanUpdateMachineSetRequest', {
  current: machineSetObjects,
  desired: machineSetObjects,
});
export type CanUpdateMachineSetRequest = z.output<typeof CanUpdateMachineSetRequest>;

/** UpdateMachine: only the desired objects (CAPI already wrote them); called until done. */
export const UpdateMachineRequest = request('UpdateMachineRequest', { desired: machineObjects });
export type UpdateMachineRequest = z.output<typeof UpdateMachineRequest>;

/** A patch CAPI applies to the *current* object's spec; `patch` is base64 of the JSON document. */
export const HookPatch = z.strictObject({
  patchType: z.enum(['JSONPatch', 'JSONMergePatch']),
  patch: z.base64().max(256 * 1024),
});
export type HookPatch = z.output<typeof HookPatch>;

const message = z.string().max(4096).optional();

function response<K extends string, S extends z.ZodRawShape>(kind: K, shape: S) {
  return z.strictObject({
    apiVersion: z.literal(HookApiVersion),
    kind: z.literal(kind),
    status: HookStatus,
    message,
    ...shape,
  });
}

/** One handler in the discovery answer; CAPI allows a timeout of 0–30 s. */
export const ExtensionHandler = z.strictObject({
  name: z
    .string()
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/),
  requestHook: z.strictObject({ apiVersion: z.literal(HookApiVersion), hook: z.string().max(64) }),
  timeoutSeconds: z.int().min(0).max(30),
  failurePolicy: z.enum(['Fail', 'Ignore']),
});
export type ExtensionHandler = z.output<typeof ExtensionHandler>;

export const DiscoveryResponse = response('DiscoveryResponse', {
  handlers: z.array(ExtensionHandler).max(32),
});
export type DiscoveryResponse = z.output<typeof DiscoveryResponse>;

export const CanUpdateMachineResponse = response('CanUpdateMachineResponse', {
  machinePatch: HookPatch.optional(),
  infrastructureMachinePatch: HookPatch.optional(),
  bootstrapConfigPatch: HookPatch.optional(),
});
export type CanUpdateMachineResponse = z.output<typeof CanUpdateMachineResponse>;

export const CanUpdateMachineSetResponse = response('CanUpdateMachineSetResponse', {
  machineSetPatch: HookPatch.optional(),
  infrastructureMachineTemplatePatch: HookPatch.optional(),
  bootstrapConfigTemplatePatch: HookPatch.optional(),
});
export type CanUpdateMachineSetResponse = z.output<typeof CanUpdateMachineSetResponse>;

/**
 * UpdateMachine's answer: `Success` with `retryAfterSeconds > 0` is "in progress, ask again",
 * `Success` with 0 is "done", `Failure` is an error CAPI retries with backoff. CAPI requires
 * `retryAfterSeconds` (it serialises it even when 0).
 */
export const UpdateMachineResponse = response('UpdateMachineResponse', {
  retryAfterSeconds: z.int().min(0).max(3600),
});
export type UpdateMachineResponse = z.output<typeof UpdateMachineResponse>;

/**
 * A failure whose hook is unknown (an unknown path, a body too large to read): the common
 * response alone, as upstream's SDK server answers.
 */
export const HookFailure = z.strictObject({ status: z.literal('Failure'), message: z.string() });
export type HookFailure = z.output<typeof HookFailure>;

/** Depth and size bounds a request body is held to before its schema is (a hostile body is cheap). */
export interface JsonLimits {
  readonly maxDepth: number;
  /** Object keys plus array items, counted over the whole document. */
  readonly maxNodes: number;
}

/** @default 32 levels, 20 000 nodes: a live CanUpdateMachineRequest is 8 levels and ≈ 200 nodes. */
export const defaultJsonLimits: JsonLimits = { maxDepth: 32, maxNodes: 20_000 };

/** The first bound `value` breaks (with the path where), or undefined when it is within them. */
export function jsonWithinLimits(value: unknown, limits = defaultJsonLimits): string | undefined {
  let nodes = 0;
  const stack: { v: unknown; path: string; depth: number }[] = [{ v: value, path: '', depth: 0 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (typeof top.v !== 'object' || top.v === null) continue;
    if (top.depth >= limits.maxDepth)
      return `${top.path || '(root)'}: nested deeper than ${String(limits.maxDepth)} levels`;
    const entries = Array.isArray(top.v) ? top.v.entries() : Object.entries(top.v);
    for (const [k, v] of entries) {
      if (++nodes > limits.maxNodes)
        return `the body has more than ${String(limits.maxNodes)} fields`;
      stack.push({
        v,
        path: top.path ? `${top.path}.${String(k)}` : String(k),
        depth: top.depth + 1,
      });
    }
  }
  return undefined;
}
