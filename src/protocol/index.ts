// SPDX-License-Identifier: Apache-2.0
/** molt's wire contract: error codes, release views and print columns. Browser-safe. */
export { ErrorCode, MoltError, isMoltError } from '../core/errors.ts';
export type { MoltErrorOptions } from '../core/errors.ts';
export * from './releases.ts';
export * from './image-json.ts';
export * from './connect-failure.ts';
export * from './agent.ts';
export * from './agent-hold.ts';
export * from './agent-client.ts';
export * from './agent-columns.ts';
export * from './operator.ts';
export * from './operator-image-plan.ts';
export * from './operator-client.ts';
export * from './operator-columns.ts';
export * from './dashboard.ts';
