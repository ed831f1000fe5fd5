// SPDX-License-Identifier: Apache-2.0
// Lint is where the layer rules of docs/adr/0001 are enforced, next to the TypeScript project
// references: core is pure, protocol is browser-safe, lower layers never import upper ones.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

const zone = (target, from, message, except) => ({ target, from, message, ...(except && { except }) });

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
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
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            zone('./src/core', './src', 'core imports nothing from molt outside core', ['./core']),
            zone('./src/protocol', './src/!(core|protocol)/**', 'protocol imports only core'),
            zone('./src/oci', './src/!(core|protocol|oci)/**', 'oci imports core and protocol only'),
            zone('./src/releases', './src/(cli|testkit|bin)/**', 'releases is below cli'),
            zone('./src/!(testkit)/**', './src/testkit', 'testkit is for tests only'),
          ],
        },
      ],
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
        { patterns: [{ group: ['node:*', 'undici', 'etcd3', 'tar', 'yaml'], message: 'core and protocol are pure: no I/O' }] },
      ],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'setTimeout', 'setInterval', 'fetch'],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'core takes `now` as an argument' },
      ],
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
