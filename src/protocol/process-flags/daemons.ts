// SPDX-License-Identifier: Apache-2.0
/** The flags of `molt agent` and `molt operator` (their main.ts), declared once (`../flags.ts`). */
import { HelpFlag, type FlagTable } from '../flags.ts';

const root = { type: 'string', value: 'DIR', help: 'the machine’s root directory' } as const;

/** `molt agent --root DIR`: the node agent. */
export const AgentFlags = { root, help: HelpFlag } as const satisfies FlagTable;

/** `molt agent install --root DIR --image REF`: the first release into slot A. */
export const AgentInstallFlags = {
  root,
  image: { type: 'string', value: 'REF', help: 'the installer image' },
  insecure: { type: 'boolean', help: 'plain-HTTP registry' },
  help: HelpFlag,
} as const satisfies FlagTable;

/** `molt operator --config FILE`. */
export const OperatorFlags = {
  config: { type: 'string', value: 'FILE', help: 'the operator config (YAML)' },
  help: HelpFlag,
} as const satisfies FlagTable;
