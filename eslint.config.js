// SPDX-License-Identifier: Apache-2.0
// Lint adds what the TypeScript project references cannot say (docs/adr/0001): core and protocol
// are pure (no Node APIs, no I/O, no clock), promises are never dropped, files stay small. Which
// layer may import which is enforced by the references themselves (`tsc -b`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    // §2): a value may come only from another dashboard module or from core's vocabulary, the one
    // other module the operator serves (src/operator/api/dashboard-assets.ts). Anything else from
    // core or protocol must be `import type`, which disappears before the browser sees it.
    files: ['src/dashboard/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!core/rollout/vocabulary\\.ts$)',
              allowTypeImports: true,
              message:
                'the browser cannot load it: import types only (values from ./ and ../core/rollout/vocabulary.ts)',
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
  {
    // @kubernetes/client-node declares its API objects as generated classes that are plain data:
    // the client serialises whatever it is given, and its own docs pass object literals.
    files: [
      'src/platform/kube/**/*.ts',
      'src/agent/adapters/kube-node/**/*.ts',
      'src/agent/adapters/lab/kubelet-node.ts',
      'src/operator/adapters/kube-*/**/*.ts',
      'src/lab/services/kube-*.ts',
      'src/lab/fleet/workloads.ts',
      'src/lab/lab.ts',
      'test/integration/kube/**/*.ts',
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
      complexity: 'off',
      'max-statements': 'off',
      'max-nested-callbacks': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
