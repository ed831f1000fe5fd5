// SPDX-License-Identifier: Apache-2.0
// What the TypeScript project references and ESLint cannot say about the import graph (docs/adr/0001):
// no cycles anywhere, product code never reaches test code, the two daemons never import each other.
// `npm run lint` runs it; `npx depcruise src --config .dependency-cruiser.cjs --output-type dot`
// draws the graph.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A cycle (type-only imports included) makes two modules one; split out what both need.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'product-never-imports-test-code',
      severity: 'error',
      comment:
        'Shipped code never stands on testkit, fakes, tests or test/ (DESIGN: lab folders, not test code).',
      from: { path: '^src/', pathNot: ['^src/testkit/', '[.](test|fake)[.]ts$'] },
      to: { path: ['^src/testkit/', '[.](test|fake)[.]ts$', '^test/'] },
    },
    {
      name: 'daemons-stay-apart',
      severity: 'error',
      comment: 'The agent and the operator share code only through core, protocol and platform.',
      from: { path: '^src/(agent|operator)/', pathNot: '[.]test[.]ts$' },
      to: { path: '^src/(agent|operator)/', pathNot: '^src/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^dist/', '^node_modules/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.test.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
