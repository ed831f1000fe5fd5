// SPDX-License-Identifier: Apache-2.0
// The dashboard listener's files over a real socket: from this checkout it serves the dashboard's
// TypeScript as JavaScript the browser can load, from a built tree tsc's output as it is, and
// nothing off its allow-list — `..` included.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { text } from 'node:stream/consumers';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { isMoltError } from '../../core/errors.ts';
import type { ListeningApi } from '../../platform/https/server.ts';
import { apiFixture } from '../../testkit/operator-api-fixture.ts';
import { renameImports, treeOf, type DashboardTree } from './dashboard-assets.ts';
import { createDashboardServer } from './dashboard-server.ts';

const run = promisify(execFile);
const js = 'text/javascript; charset=utf-8';

interface Answer {
  readonly status: number | undefined;
  readonly type: string | undefined;
  readonly body: string;
}

/** GET with the path sent as written (fetch would resolve `..` before sending it). */
async function get(base: string, path: string): Promise<Answer> {
  const { hostname, port } = new URL(base);
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    request({ hostname, port, path }, resolve).on('error', reject).end();
  });
  return { status: res.statusCode, type: res.headers['content-type'], body: await text(res) };
}

async function serve(tree?: DashboardTree): Promise<ListeningApi> {
  const { deps } = await apiFixture();
  const access = { users: [], anonymousRead: true, sessionTtl: 3_600_000 };
  const options = { deps, access, tls: undefined, host: '127.0.0.1', port: 0 };
  return createDashboardServer(tree === undefined ? options : { ...options, tree });
}

const specifiers = (code: string): string[] =>
  [...code.matchAll(/\b(?:from|import)\s*(['"])([^'"]+)\1/g)].map((m) => m[2] ?? '');

describe('the dashboard listener, from a source checkout', () => {
  const dashboardDir = join(import.meta.dirname, '..', '..', 'dashboard');
  let server: ListeningApi;
  let out: string;
  let modules: string[];

  before(async () => {
    server = await serve();
    out = await mkdtemp(join(tmpdir(), 'molt-dashboard-'));
    modules = (await readdir(dashboardDir))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => `/dashboard/${f.replace(/\.ts$/, '.js')}`);
  });
  after(async () => {
    await server.close();
    await rm(out, { recursive: true, force: true });
  });

  it('serves the page at / and its stylesheet', async () => {
    const page = await get(server.url, '/');
    assert.equal(page.status, 200);
    assert.equal(page.type, 'text/html; charset=utf-8');
    assert.match(page.body, /<script type="module" src="dashboard\/main\.js"><\/script>/);
    const css = await get(server.url, '/dashboard/style.css');
    assert.deepEqual([css.status, css.type], [200, 'text/css; charset=utf-8']);
  });

  it('serves every module as JavaScript a browser can load: no types, .js imports', async () => {
    assert.ok(modules.includes('/dashboard/main.js') && modules.length >= 5, modules.join());
    const served = [...modules, '/core/rollout/vocabulary.js', '/core/time.js'];
    await writeFile(join(out, 'package.json'), '{"type":"module"}');
    for (const url of served) {
      const res = await get(server.url, url);
      assert.deepEqual([res.status, res.type], [200, js], url);
      for (const spec of specifiers(res.body)) {
        const target = new URL(spec, `http://dashboard${url}`).pathname;
        assert.ok(served.includes(target), `${url} imports ${spec}, which is not served`);
      }
      const file = join(out, url);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, res.body);
      // A type annotation left behind is a syntax error to JavaScript.
      await run(process.execPath, ['--check', file]);
    }
    // Every module but the entry point only defines things: load them all, imports linked.
    for (const url of served.filter((u) => u !== '/dashboard/main.js'))
      await import(pathToFileURL(join(out, url)).href);
    const vocabulary = (await import(
      pathToFileURL(join(out, 'core/rollout/vocabulary.js')).href
    )) as {
      MachinePhases: unknown;
    };
    assert.ok(Array.isArray(vocabulary.MachinePhases));
    const time = (await import(pathToFileURL(join(out, 'core/time.js')).href)) as {
      instant: (at: number) => string;
    };
    assert.equal(time.instant(0), '1970-01-01T00:00:00Z', 'the page writes times as the CLI does');
  });

  it('answers 404 to anything off its list, .. and sources included', async () => {
    for (const path of [
      '/dashboard/../core/errors.js',
      '/dashboard/%2e%2e/core/errors.js',
      '/../package.json',
      '/core/errors.js',
      '/dashboard/format.ts',
      '/dashboard/format.test.js',
      '/dashboard/tsconfig.json',
      '/dashboard/',
      '/index.html',
      '/app.js',
    ]) {
      assert.equal((await get(server.url, path)).status, 404, path);
    }
  });
});

describe('the dashboard listener, from a built tree', () => {
  let root: string;

  const files: Readonly<Record<string, string>> = {
    'dashboard/main.js': "import { grid } from './grid.js';\ngrid();\n",
    'dashboard/grid.js': "import { MachinePhases } from '../core/rollout/vocabulary.js';\n",
    'dashboard/main.d.ts': 'export {};\n',
    'dashboard/main.js.map': '{}',
    'dashboard/grid.test.js': '',
    'dashboard/index.html':
      '<!doctype html><script type="module" src="dashboard/main.js"></script>',
    'dashboard/style.css': 'body {}',
    'core/rollout/vocabulary.js': 'export const MachinePhases = [];\n',
    'core/time.js': 'export const instant = () => "";\n',
    'core/errors.js': '',
    'secret.txt': 'no',
  };

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'molt-dist-'));
    for (const [path, body] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), body);
    }
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('serves tsc’s output as it is, and nothing else of the tree', async () => {
    const server = await serve({ root, form: 'built' });
    try {
      const served = ['dashboard/main.js', 'dashboard/grid.js', 'core/rollout/vocabulary.js'];
      for (const path of [...served, 'core/time.js']) {
        const res = await get(server.url, `/${path}`);
        assert.deepEqual([res.status, res.type, res.body], [200, js, files[path]], path);
      }
      const page = (await get(server.url, '/')).body;
      assert.match(page, /^<!doctype html><script id="molt-state" type="application\/json">\{/);
      assert.match(page, /<script type="module" src="dashboard\/main\.js"><\/script>$/);
      for (const path of [
        '/dashboard/main.d.ts',
        '/dashboard/main.js.map',
        '/dashboard/grid.test.js',
        '/core/errors.js',
        '/secret.txt',
        '/dashboard/../secret.txt',
      ]) {
        assert.equal((await get(server.url, path)).status, 404, path);
      }
    } finally {
      await server.close();
    }
  });

  it('refuses to start, naming the file, when the build left out the page', async () => {
    await rm(join(root, 'dashboard', 'index.html'));
    await assert.rejects(
      serve({ root, form: 'built' }),
      (e) => isMoltError(e, 'MOLT_INTERNAL') && /index\.html/.test(e.message),
    );
  });
});

describe('where the dashboard is read from', () => {
  it('is the tree the listener’s module runs from: sources in src/, JavaScript in dist/', () => {
    assert.deepEqual(treeOf('file:///pkg/src/operator/api/dashboard-assets.ts', '/pkg'), {
      root: '/pkg/src',
      form: 'source',
    });
    assert.deepEqual(treeOf('file:///pkg/dist/operator/api/dashboard-assets.js', '/pkg'), {
      root: '/pkg/dist',
      form: 'built',
    });
    assert.deepEqual(treeOf('file:///pkg/dist/bin/chunks/chunk-X7.js', '/pkg'), {
      root: '/pkg/dist',
      form: 'built',
    });
  });

  it('renames relative .ts imports and re-exports to .js, and nothing else', () => {
    const code = [
      "import { a } from './a.ts';",
      'import {\n  b,\n} from "../core/b.ts";',
      "import './side.ts';",
      "export { c } from './c.ts';",
      "const s = 'x.ts';",
      "import { d } from 'pkg/d.ts';",
    ].join('\n');
    assert.deepEqual(specifiers(renameImports(code)), [
      './a.js',
      '../core/b.js',
      './side.js',
      './c.js',
      'pkg/d.ts',
    ]);
    assert.match(renameImports(code), /const s = 'x\.ts';/);
  });

  it('strips types without Node’s ExperimentalWarning, and lets other warnings through', async () => {
    const assets = pathToFileURL(join(import.meta.dirname, 'dashboard-assets.ts')).href;
    const script = [
      `import { toJavaScript } from '${assets}';`,
      "process.stdout.write(toJavaScript('const n: number = 1;'));",
      "process.emitWarning('still shown', 'ExperimentalWarning');",
    ].join('\n');
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script]);
    assert.match(stdout, /^const n\s+= 1;$/);
    assert.doesNotMatch(stderr, /stripTypeScriptTypes/);
    assert.match(stderr, /ExperimentalWarning: still shown/);
  });
});
