// SPDX-License-Identifier: Apache-2.0
/**
 * `molt plan` without `--fleet`: the live operator's plan (`GET /v1/plan?explain`) — what it
 * starts next, why each other machine waits (every check that refuses it), each rollout's verdict
 * and where each pool goes next — on the operator's own state and observations; then the image
 * driver's last plan (`GET /v1/images/plan`), when the operator follows images.
 */
import {
  ErrorCode,
  isMoltError,
  type ImagePlanView,
  type OperatorClient,
} from '../../../protocol/index.ts';
import type { CommandContext } from '../../context.ts';
import { renderData } from '../../output.ts';
import { withOperator } from '../rollout/run.ts';
import { describeImagePlan } from './image-view.ts';
import { describeLivePlan } from './live-view.ts';

/**
 * The image plan, or undefined when the operator follows no images or predates the route (both
 * answer MOLT_BAD_INPUT, an old operator's with its 404).
 */
async function imagePlanOf(client: OperatorClient): Promise<ImagePlanView | undefined> {
  try {
    return await client.imagePlan();
  } catch (e) {
    if (isMoltError(e) && e.code === ErrorCode.BadInput) return undefined;
    throw e;
  }
}

/** Ask the operator for its plan and print it. */
export function runLivePlan(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withOperator(ctx, raw, async ({ client, output }) => {
    const [plan, rollouts, images] = await Promise.all([
      client.plan({ explain: true }),
      client.rollouts(),
      imagePlanOf(client),
    ]);
    ctx.io.out(
      output === 'table'
        ? describeLivePlan({ operator: client.baseUrl, plan, rollouts }) +
            (images === undefined ? '' : describeImagePlan(images))
        : renderData(output, images === undefined ? plan : { ...plan, images }),
    );
  });
}
