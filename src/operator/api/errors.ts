// SPDX-License-Identifier: Apache-2.0
/**
 * The operator API's error answers (STYLE §4.5): its code → HTTP status table on the shared
 * answerer (`platform/https/errors.ts`). The table lists the codes the rollout actions, the machine
 * holds, blocked releases, registration (its check of the agent) and the etcd store raise; anything unlisted is a
 * server-side failure (500).
 */
import { ErrorCode } from '../../core/errors.ts';
import { errorAnswers } from '../../platform/https/errors.ts';

const statusByCode: Partial<Record<ErrorCode, number>> = {
  [ErrorCode.BadInput]: 400,
  [ErrorCode.TlsRejected]: 401,
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.SsoUnavailable]: 502,
  [ErrorCode.RolloutNotFound]: 404,
  [ErrorCode.UnknownMachine]: 404,
  [ErrorCode.UnknownPool]: 400,
  [ErrorCode.UnknownRelease]: 404,
  [ErrorCode.NotBlocked]: 404,
  [ErrorCode.RolloutState]: 409,
  [ErrorCode.AlreadyStarted]: 409,
  [ErrorCode.AgentIdentity]: 403,
  [ErrorCode.AgentUnreachable]: 502,
  [ErrorCode.RegistryUnreachable]: 502,
  [ErrorCode.RegistryTimeout]: 504,
  [ErrorCode.EtcdUnhealthy]: 503,
  [ErrorCode.TimedOut]: 504,
  [ErrorCode.InvalidVersion]: 400,
  [ErrorCode.KubeUpgradeRunning]: 409,
  [ErrorCode.KubeUpgradeNotFound]: 404,
  [ErrorCode.KubeBundleNotFound]: 404,
  [ErrorCode.KubeVersionSkew]: 409,
  [ErrorCode.KubeDowngradeWindow]: 409,
  [ErrorCode.KubeReleaseIncompatible]: 409,
  [ErrorCode.KubeFlagRemoved]: 409,
  [ErrorCode.KubeRemovedApiInUse]: 409,
  [ErrorCode.KubeUnavailable]: 502,
  [ErrorCode.NotControlPlane]: 409,
};

/** Status and body for anything a route threw. */
export const errorAnswer = errorAnswers(
  statusByCode,
  'the operator hit an unexpected error (a bug in molt); its log has the details',
);
