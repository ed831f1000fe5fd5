// SPDX-License-Identifier: Apache-2.0
// Lint adds what the TypeScript project references cannot say (docs/adr/0001): core and protocol
// are pure (no Node APIs, no I/O, no clock), promises are never dropped, files stay small. Which
// layer may import which is enforced by the references themselves (`tsc -b`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * A zone of the operator (tests excepted: they compose adapters): its files may not import what
 * `banned` names (an import pattern → why not).
 */
const operatorZone = (files, banned) => ({
  files,
  ignores: ['**/*.test.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      { patterns: Object.entries(banned).map(([group, message]) => ({ group: [group], message })) },
    ],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.molt/**', '**/*.js', '**/*.cjs', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // The dashboard is its own program (the browser's DOM types clash with Node code's).
        project: ['./tsconfig.test.json', './src/dashboard/tsconfig.test.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's describe/it return promises the runner itself awaits.
          allowForKnownSafeCalls: [
            { from: 'package', name: ['describe', 'it', 'test', 'suite'], package: 'node:test' },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      complexity: ['error', 12],
      'max-depth': ['error', 3],
      'max-params': ['error', 4],
      'max-statements': ['error', 25],
      'max-nested-callbacks': ['error', 4],
      // STYLE §12: small files. Every line counts (comments too); tests and test/ are exempt below.
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    files: ['src/core/**/*.ts', 'src/protocol/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'undici', 'etcd3', 'tar'],
              message: 'core and protocol are pure: no I/O',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'setTimeout', 'setInterval', 'fetch'],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'core takes `now` as an argument' },
      ],
    },
  },
  {
    // The browser loads the dashboard's modules as they are served, with no bundler (docs/adr/0007
    // §2): a value may come only from another dashboard module or from core's vocabulary and time,
    // the other modules the operator serves (src/operator/api/dashboard-assets.ts). Anything else
    // from core or protocol must be `import type`, which disappears before the browser sees it.
    files: ['src/dashboard/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!core/rollout/vocabulary\\.ts$|core/time\\.ts$)',
              allowTypeImports: true,
              message:
                'the browser cannot load it: import types only (values from ./, ../core/rollout/vocabulary.ts and ../core/time.ts)',
            },
            {
              regex: '^[^.]',
              message:
                'the browser loads the dashboard without a bundler: no node:* and no packages',
            },
          ],
        },
      ],
    },
  },
  {
    // Inside the agent only main.ts constructs adapters; the runner and the API see ports (STYLE §2).
    files: ['src/agent/machine/**/*.ts', 'src/agent/api/**/*.ts', 'src/agent/ports/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/adapters/**'],
              message: 'machine/, api/ and ports/ depend on ports, never on adapters',
            },
          ],
        },
      ],
    },
  },
  // The operator's zones (STYLE §2, like the agent's): decide/ is pure (no I/O, no Node, no clock);
  // loop/ carries the decisions out through ports; actions/ holds the rules of what a person asks
  // (the API, the dashboard and the declared runner all call it) and records through
  // transitions/; api/ parses, authorises and answers, never through the loop. Only the
  // composition root (main.ts and the files it splits into) constructs adapters.
  operatorZone(['src/operator/decide/**/*.ts'], {
    'node:*': 'decide/ is pure: no I/O',
    '**/adapters/**': 'decide/ depends on ports, never on adapters',
    '**/loop/**': 'decide/ is pure: the loop calls it, not the other way round',
    '**/api/**': 'decide/ is pure: the API reads it, not the other way round',
    '**/transitions/**': 'decide/ is pure: the loop and the API record transitions',
  }),
  {
    files: ['src/operator/decide/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-globals': ['error', 'process', 'Buffer', 'setTimeout', 'setInterval', 'fetch'],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'decide/ takes `now` as an argument' },
      ],
    },
  },
  operatorZone(['src/operator/loop/**/*.ts'], {
    '**/adapters/**': 'loop/ depends on ports, never on adapters',
    '**/api/**': 'the loop knows nothing about the API (main.ts wires them)',
  }),
  operatorZone(['src/operator/actions/**/*.ts'], {
    '**/adapters/**': 'actions/ depends on ports, never on adapters',
    '**/loop/**': 'actions/ serve the loop and the API alike',
    '**/api/**': 'actions/ serve the loop and the API alike',
  }),
  operatorZone(['src/operator/api/**/*.ts'], {
    '**/adapters/**': 'api/ depends on ports, never on adapters',
    '**/loop/**': 'api/ reads decide/ and records through transitions/, never through the loop',
  }),
  operatorZone(['src/operator/transitions/**/*.ts', 'src/operator/ports/**/*.ts'], {
    '**/adapters/**': 'ports and transitions/ depend on ports, never on adapters',
    '**/loop/**': 'ports and transitions/ serve the loop and the API alike',
    '**/api/**': 'ports and transitions/ serve the loop and the API alike',
  }),
  operatorZone(['src/operator/adapters/**/*.ts'], {
    '**/loop/**': 'an adapter implements a port; it never calls into the loop',
  }),
  {
    // @kubernetes/client-node declares its API objects as generated classes that are plain data:
    // the client serialises whatever it is given, and its own docs pass object literals.
    files: [
      'src/platform/kube/**/*.ts',
      'src/agent/adapters/kube-node/**/*.ts',
      'src/agent/adapters/lab/kubelet-node.ts',
      'src/agent/adapters/lab/kubelet-pods.ts',
      'src/operator/adapters/kube-*/**/*.ts',
      'src/lab/services/kube-*.ts',
      'src/lab/fleet/workloads.ts',
      'src/lab/lab.ts',
      'test/integration/kube/**/*.ts',
      'test/vm/harness/node-lab.ts',
      'test/vm/cluster-on-vms.test.ts',
      'bench/p4.ts',
    ],
    rules: {
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      '@typescript-eslint/no-misused-spread': 'off',
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'max-lines': 'off',
      complexity: 'off',
      'max-statements': 'off',
      'max-nested-callbacks': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
