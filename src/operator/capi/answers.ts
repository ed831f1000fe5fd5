// SPDX-License-Identifier: Apache-2.0
/**
 * molt's answers to the Cluster API in-place hooks, from a raw request body to the exact
 * response: the body is held to size bounds and its hook's schema (a problem → `Failure` naming the
 * field), core decides what molt can change in place, the port moves the machine. Which machine
 * is molt's own resolution (`InPlaceUpdates.resolve`: the Machine read from the management
 * cluster, never the request's copy of its labels, annotations or Cluster). A Machine molt does
 * not manage is left alone: CanUpdate* offers no patch (CAPI replaces it as it would without molt),
 * UpdateMachine fails (molt never touches it). A failed read answers `Failure` (CAPI asks again):
 * no patch would have CAPI replace a machine molt manages.
 */
import { Buffer } from 'node:buffer';
import type { z } from 'zod';
import {
  decideMachine,
  decideMachineSet,
  type InPlaceDecision,
  type ReleaseForVersion,
} from '../../core/capi/in-place.ts';
import type {
  CanUpdateMachineRequest,
  CanUpdateMachineSetRequest,
  UpdateMachineRequest,
} from '../../protocol/capi-hooks.ts';
import {
  CapiHandlerName,
  CapiHook,
  HookApiVersion,
  jsonWithinLimits,
  type CanUpdateMachineResponse,
  type CanUpdateMachineSetResponse,
  type DiscoveryResponse,
  type HookPatch,
  type UpdateMachineResponse,
} from '../../protocol/capi-hooks.ts';
import { errorMessage, isMoltError } from '../../core/errors.ts';
import type { Machine, MachineSet } from '../../protocol/capi-objects.ts';
import type { MachineStatus } from './machine-status.ts';
import type {
  CapiMachineRef,
  InPlaceUpdates,
  Managed,
  Resolution,
} from '../ports/in-place-updates.ts';

/**
 * The molt release that brings Kubernetes `version` to the machines `managed` is (its pool's
 * channel), or undefined when none does.
 */
export type ReleaseFor = (
  version: string,
  managed: Managed,
) => string | undefined | Promise<string | undefined>;

/** What the answers need. */
export interface HookDeps {
  readonly updates: InPlaceUpdates;
  readonly releaseForVersion: ReleaseFor;
  /** The Machine's condition and remediation after each UpdateMachine (`capi.kubeconfig`). */
  readonly status?: MachineStatus | undefined;
}

/** The release for the desired version, looked up once, as the pure decision's synchronous function. */
async function releaseLookup(
  deps: HookDeps,
  version: unknown,
  managed: Managed,
): Promise<ReleaseForVersion> {
  if (typeof version !== 'string') return () => undefined;
  const release = await deps.releaseForVersion(version, managed);
  return (v) => (v === version ? release : undefined);
}

/** How long CAPI waits for each handler (CAPI allows 0–30 s; molt's answers never wait on a machine). */
export const HandlerTimeoutSeconds = 10;
/** How soon CAPI asks UpdateMachine again while an update is in progress. */
export const UpdateRetrySeconds = 10;

/** The discovery answer: molt's three in-place handlers, each `Fail` (with `Ignore`, a transport error would read as "done" or "replace"). */
export function discoveryAnswer(): DiscoveryResponse {
  return {
    apiVersion: HookApiVersion,
    kind: 'DiscoveryResponse',
    status: 'Success',
    handlers: Object.values(CapiHook).map((hook) => ({
      name: CapiHandlerName[hook],
      requestHook: { apiVersion: HookApiVersion, hook },
      timeoutSeconds: HandlerTimeoutSeconds,
      failurePolicy: 'Fail' as const,
    })),
  };
}

/** Parse a hook's body (raw JSON text): the request, or the problem named by field. */
export function parseHookBody<S extends z.ZodType>(
  schema: S,
  body: string,
): { ok: z.output<S> } | { invalid: string } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (e) {
    return { invalid: `the body is not JSON: ${errorMessage(e)}` };
  }
  const bound = jsonWithinLimits(value);
  if (bound !== undefined) return { invalid: bound };
  const r = schema.safeParse(value);
  if (r.success) return { ok: r.data };
  const issue = r.error.issues[0];
  return {
    invalid: `${(issue?.path ?? []).map(String).join('.') || '(body)'}: ${issue?.message ?? 'invalid'}`,
  };
}

/** The patch document CAPI reads: base64 of the JSON. */
export function jsonPatch(ops: readonly unknown[]): HookPatch {
  return { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') };
}

/** CanUpdateMachine: a patch on `/spec/version` where molt covers every difference, else none. */
export async function canUpdateMachine(
  req: CanUpdateMachineRequest,
  deps: HookDeps,
): Promise<CanUpdateMachineResponse> {
  const head = {
    apiVersion: HookApiVersion,
    kind: 'CanUpdateMachineResponse',
    status: 'Success',
  } as const;
  const r = await resolved(deps, machineRef(req.current.machine));
  if ('unavailable' in r) return { ...head, status: 'Failure', message: r.unavailable };
  if ('refused' in r) return { ...head, message: notManaged(r.refused) };
  const lookup = await releaseLookup(deps, req.desired.machine.spec.version, r.managed);
  const d = decideMachine(req.current, req.desired, lookup);
  return d.kind === 'inPlace'
    ? { ...head, message: inPlaceMessage(d), machinePatch: jsonPatch(d.patch) }
    : { ...head, message: d.reason };
}

/** CanUpdateMachineSet: a patch on `/spec/template/spec/version` under the same rule. */
export async function canUpdateMachineSet(
  req: CanUpdateMachineSetRequest,
  deps: HookDeps,
): Promise<CanUpdateMachineSetResponse> {
  const head = {
    apiVersion: HookApiVersion,
    kind: 'CanUpdateMachineSetResponse',
    status: 'Success',
  } as const;
  // The Machines CAPI would update in place are the current MachineSet's (the desired one is new).
  const r = await resolved(deps, machineSetRef(req.current.machineSet));
  if ('unavailable' in r) return { ...head, status: 'Failure', message: r.unavailable };
  if ('refused' in r) return { ...head, message: notManaged(r.refused) };
  const desiredVersion = req.desired.machineSet.spec.template.spec['version'];
  const lookup = await releaseLookup(deps, desiredVersion, r.managed);
  const d = decideMachineSet(req.current, req.desired, lookup);
  return d.kind === 'inPlace'
    ? { ...head, message: inPlaceMessage(d), machineSetPatch: jsonPatch(d.patch) }
    : { ...head, message: d.reason };
}

/**
 * UpdateMachine: start or follow the machine's move; in progress → ask again in 10 s (ADR 0014).
 * The Machine's condition (and, after a failure, its remediation) follows within a bounded time.
 */
export async function updateMachine(
  req: UpdateMachineRequest,
  deps: HookDeps,
): Promise<UpdateMachineResponse> {
  const head = { apiVersion: HookApiVersion, kind: 'UpdateMachineResponse' } as const;
  const fail = (message: string): UpdateMachineResponse => ({
    ...head,
    status: 'Failure',
    message,
    retryAfterSeconds: 0,
  });
  const version = req.desired.machine.spec.version;
  const r = await resolved(deps, machineRef(req.desired.machine));
  if ('unavailable' in r) return fail(r.unavailable);
  if ('refused' in r) return fail(notManaged(r.refused));
  const m = r.managed;
  if (m.kind !== 'Machine') return fail(notManaged(`${m.kind} ${m.namespace}/${m.name}`));
  if (version === undefined)
    return fail('desired.machine.spec.version: the Machine names no Kubernetes version');
  // CAPI writes the desired spec before it calls: a version the Machine does not want is not CAPI's,
  // and a Machine that wants none leaves the target to the caller, so it is refused too.
  if (m.version === undefined)
    return fail(
      `Machine ${m.namespace}/${m.name} names no spec.version on the management cluster: nothing changed`,
    );
  if (m.version !== version)
    return fail(
      `Machine ${m.namespace}/${m.name} is at spec.version ${m.version} on the management cluster, not ${version}: nothing changed`,
    );
  const s = await deps.updates.update(m, version);
  await deps.status?.report(m, s);
  if (s.state === 'failed') return fail(s.message);
  return {
    ...head,
    status: 'Success',
    message: s.message,
    retryAfterSeconds: s.state === 'done' ? 0 : UpdateRetrySeconds,
  };
}

/** `resolve`, with a failed read of the management cluster as an answer (CAPI asks again). */
async function resolved(
  deps: HookDeps,
  ref: CapiMachineRef,
): Promise<Resolution | { readonly unavailable: string }> {
  try {
    return await deps.updates.resolve(ref);
  } catch (e) {
    if (!isMoltError(e)) throw e;
    return {
      unavailable: `molt could not read ${ref.kind} ${ref.namespace}/${ref.name}: ${e.message}`,
    };
  }
}

/** Only where the Machine is: everything else about it is read from the management cluster. */
function machineRef(m: Machine): CapiMachineRef {
  return {
    kind: 'Machine',
    namespace: m.metadata.namespace ?? 'default',
    name: m.metadata.name,
    clusterName: m.spec.clusterName,
  };
}

function machineSetRef(s: MachineSet): CapiMachineRef {
  const m = s.metadata;
  return {
    kind: 'MachineSet',
    namespace: m.namespace ?? 'default',
    name: m.name,
    clusterName: s.spec.clusterName,
  };
}

function notManaged(why: string): string {
  return `molt does not manage ${why}: nothing changed`;
}

function inPlaceMessage(d: Extract<InPlaceDecision, { kind: 'inPlace' }>): string {
  return `molt updates in place to Kubernetes ${d.version} (release ${d.release})`;
}
