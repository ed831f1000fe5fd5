// SPDX-License-Identifier: Apache-2.0
// The node-agent half of `npm run demo`: one lab machine (molt's firmware playing GRUB), its agent
// over mutual TLS, and the `molt node` CLI upgrading it through A/B slots — a good release is
// booted once, checked and committed; a broken one rolls back by itself. Every step is checked.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentStatus } from '../src/protocol/agent.ts';
import { eventually, startProcess } from '../src/platform/process/managed-process.ts';

type Molt = (
  args: string[],
  env?: Record<string, string>,
  show?: boolean,
) => Promise<{ code: number; stdout: string; stderr: string }>;
type Expect = (ok: boolean, what: string) => void;

interface AgentDemo {
  readonly dir: string;
  readonly registry: string;
  readonly molt: Molt;
  readonly expect: Expect;
  readonly bold: (s: string) => string;
}

async function publishInstallers(d: AgentDemo): Promise<void> {
  for (const [version, labels] of [
    ['1.0.0', []],
    ['1.1.0', []],
    ['1.2.0', ['--label', 'dev.molt.lab.health=never']],
  ] as const) {
    const files: string[] = [];
    for (const name of ['vmlinuz', 'initrd.img', 'rootfs.img']) {
      const path = join(d.dir, `${name}-${version}`);
      await writeFile(path, `${name} of molt ${version}\n`.repeat(1000));
      files.push('--artifact', `${name}=${path}`);
    }
    const args = [
      'dev',
      'publish',
      '--registry',
      d.registry,
      '--repository',
      'acme/node',
      '--insecure',
      '--tag',
      version,
      '--version',
      version,
    ];
    const r = await d.molt([...args, ...files, ...labels], {}, false);
    if (r.code !== 0) throw new Error(`publishing installer ${version} failed: ${r.stderr}`);
  }
  console.log(
    '  installer images acme/node:1.0.0, 1.1.0 and 1.2.0 (built to never become healthy)\n',
  );
}

async function fleetPki(d: AgentDemo): Promise<string> {
  const pki = join(d.dir, 'pki');
  await d.molt(['pki', 'init', '--dir', pki], {}, false);
  await d.molt(
    ['pki', 'issue', '--ca-dir', pki, '--role', 'operator', '--name', 'demo-operator'],
    {},
    false,
  );
  return pki;
}

export async function agentStory(d: AgentDemo): Promise<void> {
  console.log(
    d.bold('8. Installer images — kernel, initrd and rootfs as layers — for the node agent:'),
  );
  await publishInstallers(d);
  const pki = await fleetPki(d);
  const root = join(d.dir, 'machine-1');
  const image = (v: string): string => `${d.registry}/acme/node:${v}`;
  console.log(
    d.bold(
      '9. A lab machine boots: molt plays firmware and GRUB, installs 1.0.0 into slot A, starts its agent.',
    ),
  );
  console.log(
    `  $ molt lab machine --root ${root} --bootloader grub --image ${image('1.0.0')} --pki ${pki} --insecure\n`,
  );
  const lab = startProcess('lab machine', process.execPath, [
    join(import.meta.dirname, '../src/bin/molt.ts'),
    'lab',
    'machine',
    '--root',
    root,
    '--bootloader',
    'grub',
    '--image',
    image('1.0.0'),
    '--pki',
    pki,
    '--insecure',
    '--health-deadline',
    '6',
  ]);
  try {
    const agent = await eventually(
      async () =>
        JSON.parse(await readFile(join(root, 'run', 'agent.json'), 'utf8')) as { url: string },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const env = {
      MOLT_ENDPOINT: agent.url,
      MOLT_CERT: join(pki, 'demo-operator.pem'),
      MOLT_KEY: join(pki, 'demo-operator.key'),
      MOLT_CA: join(pki, 'ca.pem'),
    };
    const status = async (show = true): Promise<AgentStatus> =>
      JSON.parse((await d.molt(['node', 'status', '-o', 'json'], env, show)).stdout) as AgentStatus;
    await d.molt(['node', 'status'], env);
    d.expect(
      (await status(false)).version === '1.0.0',
      'the machine runs 1.0.0 from slot A, committed',
    );

    console.log(
      d.bold(
        '10. Upgrade to 1.1.0: pull and verify, write slot B, boot it once, health-check, commit.',
      ),
    );
    const up = await d.molt(['node', 'upgrade', '--image', image('1.1.0'), '--follow'], env);
    const after = await status();
    d.expect(
      up.code === 0 &&
        after.version === '1.1.0' &&
        after.bootedSlot === 'B' &&
        after.boot.committed === 'B',
      'slot B runs 1.1.0 and is committed; slot A keeps 1.0.0 to fall back to',
    );

    console.log(
      d.bold(
        '11. Upgrade to the broken 1.2.0: it boots but never becomes healthy before its deadline.',
      ),
    );
    const broken = await d.molt(['node', 'upgrade', '--image', image('1.2.0'), '--follow'], env);
    const rolled = await status();
    d.expect(
      broken.code === 1 && rolled.version === '1.1.0' && rolled.last?.result === 'RolledBack',
      'the agent marked the slot bad and rebooted into 1.1.0 by itself; the journal says why',
    );
    await d.molt(['node', 'operations'], env);
  } finally {
    await lab.stop(10_000);
  }
}
