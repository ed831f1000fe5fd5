// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's error answers (STYLE §4.5): its code → HTTP status table on the shared answerer
 * (`platform/https/errors.ts`). The table lists the codes the runner, the image pipeline and the
 * etcd lease raise; anything unlisted is a server-side failure (500).
 */
import { ErrorCode } from '../../core/errors.ts';
import { errorAnswers } from '../../platform/https/errors.ts';

const statusByCode: Partial<Record<ErrorCode, number>> = {
  [ErrorCode.BadInput]: 400,
  [ErrorCode.BadFlag]: 400,
  [ErrorCode.InvalidReference]: 400,
  [ErrorCode.InvalidTag]: 400,
  [ErrorCode.InvalidVersion]: 400,
  [ErrorCode.TlsRejected]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.OperationNotFound]: 404,
  [ErrorCode.ServiceNotFound]: 404,
  [ErrorCode.EtcdMemberNotFound]: 404,
  [ErrorCode.EtcdSnapshotTooLarge]: 413,
  [ErrorCode.EtcdSnapshotInvalid]: 422,
  [ErrorCode.ToolMissing]: 409,
  [ErrorCode.ServiceStartFailed]: 503,
  [ErrorCode.ServiceStopFailed]: 503,
  [ErrorCode.AgentBusy]: 409,
  [ErrorCode.MachineHeld]: 409,
  [ErrorCode.NotCancellable]: 409,
  [ErrorCode.NotStaged]: 409,
  [ErrorCode.NoValidSlot]: 409,
  [ErrorCode.LeaseHeld]: 409,
  [ErrorCode.QuorumAtRisk]: 409,
  [ErrorCode.KubeBundleInvalid]: 422,
  [ErrorCode.KubeComponentUnhealthy]: 409,
  [ErrorCode.NotControlPlane]: 409,
  [ErrorCode.NotKubernetesNode]: 409,
  [ErrorCode.ImagePinFailed]: 502,
  [ErrorCode.ImageInvalid]: 422,
  [ErrorCode.ImageTooLarge]: 422,
  [ErrorCode.NoSpace]: 507,
  [ErrorCode.LayerUnsafePath]: 422,
  [ErrorCode.SignatureMissing]: 422,
  [ErrorCode.SignatureInvalid]: 422,
  [ErrorCode.EtcdUnhealthy]: 503,
  [ErrorCode.TimedOut]: 504,
};

/** Status and body for anything a route threw. */
export const errorAnswer = errorAnswers(
  statusByCode,
  'the agent hit an unexpected error (a bug in molt); the agent log has the details',
);
