// SPDX-License-Identifier: Apache-2.0
/** The errors of changing a workload's images (docs/adr/0013 §4), the same from every adapter. */
import { ErrorCode, MoltError } from '../errors.ts';

interface Ref {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

const id = (r: Ref): string => `${r.kind}/${r.namespace}/${r.name}`;

export function workloadNotFound(ref: Ref, cause?: unknown): MoltError {
  return new MoltError(ErrorCode.WorkloadNotFound, `${id(ref)} does not exist`, {
    cause,
    hint: 'the workload was deleted or renamed; its image rollout skips it',
    details: { workload: id(ref) },
  });
}

/** What a container runs now against what molt read; `now` undefined: the container is gone. */
export interface EditedContainer {
  readonly container: string;
  readonly expected: string;
  readonly now: string | undefined;
}

export function workloadEdited(ref: Ref, edited: readonly EditedContainer[]): MoltError {
  const what = edited
    .map((e) =>
      e.now === undefined
        ? `container ${e.container} is gone`
        : `container ${e.container} runs ${e.now}, not ${e.expected}`,
    )
    .join('; ');
  return new MoltError(
    ErrorCode.WorkloadEdited,
    `${id(ref)} was changed by someone else: ${what || 'its containers moved'}`,
    {
      hint: 'molt changed nothing; look at the workload, then resume its image rollout or leave it out of the policy',
      details: { workload: id(ref), containers: edited },
    },
  );
}
