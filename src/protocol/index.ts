// SPDX-License-Identifier: Apache-2.0
export { ErrorCode, MoltError, isMoltError } from '../core/errors.ts';
