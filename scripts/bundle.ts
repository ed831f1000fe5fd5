// SPDX-License-Identifier: Apache-2.0
// `npm run build`'s last step: bundles molt's entry point (src/bin/molt.ts), the CLI it runs for a
// person and the daemons that run on machines and in pods (`molt agent`, `molt operator`), with
// their dependencies, into dist/bin/molt.js, in place of tsc's module of that name; what a verb
// imports lazily goes to dist/bin/chunks/. A command then reads a few files instead of resolving
// some 500 modules (zod, yaml, commander): most of a short command's time (benchmark P16); a daemon
// compiles half as much when it starts, which on a slow machine (a VM under emulation, a pod
// without a writable compile cache) is most of its start. The build host's processes (`molt lab`,
// `image`, `install`) stay tsc's modules, imported from the bundle by their built path: they digest
// their own folder (the image builder's tree), which a chunk has none of.
// esbuild rather than a hand-made concatenation: it splits at dynamic imports and turns CommonJS
// dependencies into ES modules.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';

const root = join(import.meta.dirname, '..');
const outdir = join(root, 'dist', 'bin');

/**
 * `import('../lab/main.ts')` in src/bin/dispatch.ts stays an import of tsc's `lab/main.js`,
 * written relative to where that module lands: dist/bin/chunks/, since the entry imports it lazily.
 */
const processes: Plugin = {
  name: 'molt-processes',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/(image|lab)\/main\.ts$/ }, (args) => ({
      path: `../${args.path.replace(/\.ts$/, '.js')}`,
      external: true,
    }));
  },
};

await rm(join(outdir, 'chunks'), { recursive: true, force: true });
await build({
  entryPoints: { molt: join(root, 'src', 'bin', 'molt.ts') },
  outdir,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  // Maps name the sources' lines in a bug's stack (`node --enable-source-maps`) without carrying
  // the sources themselves: the package stays small.
  sourcemap: 'linked',
  sourcesContent: false,
  plugins: [processes],
  // etcd3 and the gRPC library under it read their .proto files beside their modules at run time
  // (`${__dirname}/../proto`): imported from node_modules, as installed. (pino's transports, the
  // only other code here that looks beside itself, never run: molt's servers log through no pino.)
  external: ['etcd3'],
  // CommonJS dependencies (commander, semver) call require() for Node's own modules; an ES module
  // has no require, so each output file gets one.
  banner: {
    js: "import { createRequire as __moltRequire } from 'node:module'; const require = __moltRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
