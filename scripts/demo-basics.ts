// SPDX-License-Identifier: Apache-2.0
// `npm run demo -- --basics`, and the first chapter of `npm run demo` while Kubernetes builds:
// release discovery on a real registry, told as a short story. Every step checks its outcome and
// the demo exits non-zero if anything happens other than described.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../src/cli/main.ts';
import { memoryIo } from '../src/cli/io.ts';
import { generateKeyPair } from '../src/releases/index.ts';
import { startRegistry } from '../src/lab/services/registry.ts';
import { tempDir } from '../src/platform/process/managed-process.ts';
import { agentStory } from './demo-agent.ts';

const tty = process.stdout.isTTY;
const bold = (s: string): string => (tty ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s: string): string => (tty ? `\x1b[2m${s}\x1b[0m` : s);

interface Ctx {
  readonly base: string[];
  readonly cache: string;
  failures: string[];
}

async function molt(
  args: string[],
  show = true,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo({ ...process.env, ...env });
  const code = await main(args, io);
  if (show) {
    console.log(dim(`$ molt ${args.join(' ')}`));
    process.stdout.write(io.stdout());
    if (io.stderr() !== '') process.stdout.write(dim(io.stderr()));
    console.log(dim(`(exit ${code})\n`));
  }
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

function expect(ctx: Ctx, ok: boolean, what: string): void {
  console.log(ok ? `  ✔ ${what}\n` : `  ✘ NOT AS EXPECTED: ${what}\n`);
  if (!ok) ctx.failures.push(what);
}

async function publish(ctx: Ctx, tags: string[], flags: string[]): Promise<void> {
  const r = await molt(
    ['dev', 'publish', ...ctx.base, ...tags.flatMap((t) => ['--tag', t]), ...flags, '-o', 'json'],
    false,
  );
  if (r.code !== 0) throw new Error(`publishing ${tags.join(',')} failed: ${r.stderr}`);
  const { digest } = JSON.parse(r.stdout) as { digest: string };
  console.log(
    `  ${tags.join(', ').padEnd(44)} ${dim(digest.slice(0, 19))}  ${flags.filter((f) => !f.includes('/')).join(' ')}`,
  );
}

async function publishReleases(ctx: Ctx, keyFile: string): Promise<void> {
  const signed = ['--sign-key', keyFile];
  console.log(bold('1. A release engineer publishes installer images (molt dev publish):'));
  await publish(
    ctx,
    ['1.0.0', '1.0.0-rev1', '1.0.0-rev1-b100'],
    ['--channels', 'stable', '--official', '--kubernetes', '>=1.29 <1.32', ...signed],
  );
  await publish(
    ctx,
    ['1.1.0', '1.1.0-rev1', '1.1.0-rev1-b110'],
    [
      '--channels',
      'stable,beta',
      '--official',
      '--kubernetes',
      '>=1.30',
      '--upgrade-from',
      '>=1.0.0',
      ...signed,
    ],
  );
  await publish(
    ctx,
    ['1.2.0-rev1', '1.2.0-rev1-b120'],
    [
      '--channels',
      'stable,beta',
      '--official',
      '--kubernetes',
      '>=1.30',
      '--upgrade-from',
      '>=1.1.0',
      '--sign-format',
      'sigstore-bundle',
      ...signed,
    ],
  );
  await publish(
    ctx,
    ['1.2.1'],
    ['--channels', 'stable', '--kubernetes', '>=1.30', '--upgrade-from', '>=1.1.0'],
  );
  await publish(
    ctx,
    ['1.3.0-beta.1'],
    ['--channels', 'beta', '--official', '--kubernetes', '>=1.30', '--upgrade-from', '>=1.2.0'],
  );
  await publish(
    ctx,
    ['1.4.0'],
    ['--channels', 'stable', '--official', '--kubernetes', '>=1.33', '--upgrade-from', '>=1.2.0'],
  );
  await publish(ctx, ['latest', 'nightly-2026-11-22'], ['--channels', 'alpha']);
  console.log();
}

async function story(ctx: Ctx, keyFile: string): Promise<void> {
  await publishReleases(ctx, keyFile);

  console.log(
    bold('2. What the repository holds: one row per digest, tags as aliases, junk tags skipped.'),
  );
  const list = await molt(['releases', 'list', ...ctx.base, '--all', '--cache', ctx.cache]);
  expect(
    ctx,
    list.code === 0 &&
      /skipped latest/.test(list.stderr) &&
      /1\.2\.0-rev1-b120,1\.2\.0-rev1/.test(list.stdout),
    '6 releases listed; `latest` and `nightly-…` skipped, never fatal',
  );

  console.log(
    bold('3. A machine on 1.0.0 in a Kubernetes 1.31 cluster asks what to run next on stable.'),
  );
  const next = await molt([
    'releases',
    'latest',
    ...ctx.base,
    '--cache',
    ctx.cache,
    '--channel',
    'stable',
    '--current',
    '1.0.0',
    '--kubernetes',
    '1.31.4',
  ]);
  expect(
    ctx,
    next.code === 0 &&
      /1\.2\.0-rev1-b120/.test(next.stdout) &&
      /1\.1\.0.*→.*1\.2\.0/.test(next.stdout),
    '1.2.0-rev1 via 1.1.0 (1.2 only upgrades from >=1.1.0); 1.4.0 rejected: needs Kubernetes >=1.33; 1.2.1 rejected: unofficial',
  );

  console.log(
    bold(
      '4. The same question, requiring signatures (cosign .sig tag and Sigstore bundle referrer):',
    ),
  );
  const signedNext = await molt([
    'releases',
    'latest',
    ...ctx.base,
    '--cache',
    ctx.cache,
    '--channel',
    'stable',
    '--current',
    '1.0.0',
    '--kubernetes',
    '1.31.4',
    '--public-key',
    `${keyFile}.pub`,
    '-o',
    'yaml',
  ]);
  expect(
    ctx,
    signedNext.code === 0 && /signature: verified/.test(signedNext.stdout),
    'both signature formats verify offline with the public key',
  );

  console.log(bold('5. The image is rebuilt: 1.2.0-rev1 now points at a new build (b121).'));
  await publish(
    ctx,
    ['1.2.0-rev1', '1.2.0-rev1-b121'],
    [
      '--channels',
      'stable,beta',
      '--official',
      '--kubernetes',
      '>=1.30',
      '--upgrade-from',
      '>=1.1.0',
    ],
  );
  const rebuilt = await molt([
    'releases',
    'latest',
    ...ctx.base,
    '--cache',
    ctx.cache,
    '--channel',
    'stable',
    '--current',
    '1.1.0',
    '--kubernetes',
    '1.31.4',
  ]);
  expect(
    ctx,
    /rebuilt 1\.2\.0-rev1/.test(rebuilt.stderr) && /1\.2\.0-rev1-b121/.test(rebuilt.stdout),
    'the rebuild is detected and the new build is the one to run',
  );

  console.log(bold('6. A cluster too old for every release gets exit code 3 and the reasons.'));
  const none = await molt([
    'releases',
    'latest',
    ...ctx.base,
    '--cache',
    ctx.cache,
    '--channel',
    'stable',
    '--kubernetes',
    '1.28.0',
  ]);
  expect(ctx, none.code === 3, 'no eligible release → exit 3');

  console.log(bold('7. Bad input gets a stable code and a hint, never a stack trace.'));
  const bad = await molt(['releases', 'latest', ...ctx.base, '--current', 'one-point-oh']);
  expect(
    ctx,
    bad.code === 1 && /MOLT_INVALID_VERSION/.test(bad.stderr),
    'an invalid --current is refused with MOLT_INVALID_VERSION',
  );
}

/**
 * The story: discovery, signatures, then one machine's A/B upgrade and rollback. As `chapter`, the
 * first chapter of `npm run demo` (told while Kubernetes builds), without the title and the end.
 */
export async function basicsStory(o: { readonly chapter?: boolean } = {}): Promise<number> {
  if (o.chapter !== true) console.log(bold('molt — release discovery and node upgrades demo\n'));
  const dir = await tempDir('demo');
  const registry = await startRegistry();
  console.log(`A real OCI registry (Debian docker-registry 2.8) is running on ${registry.host}.\n`);
  const ctx: Ctx = {
    base: ['--registry', registry.host, '--repository', 'acme/installer', '--insecure'],
    cache: join(dir.path, 'cache.json'),
    failures: [],
  };
  try {
    const keys = generateKeyPair();
    const keyFile = join(dir.path, 'cosign.key');
    await writeFile(keyFile, keys.privateKeyPem);
    await writeFile(`${keyFile}.pub`, keys.publicKeyPem);
    await story(ctx, keyFile);
    await agentStory({
      dir: dir.path,
      registry: registry.host,
      molt: (args, env = {}, show = true) => molt(args, show, env),
      expect: (ok, what) => {
        expect(ctx, ok, what);
      },
      bold,
    });
  } finally {
    await registry.stop();
    await dir.remove();
  }
  if (ctx.failures.length > 0) {
    console.error(`demo FAILED: ${ctx.failures.length} step(s) did not happen as described`);
    return 1;
  }
  if (o.chapter === true) return 0;
  console.log(
    bold('Every step happened as described.') + ' Next: `npm test` runs the test suites.',
  );
  return 0;
}
