// SPDX-License-Identifier: Apache-2.0
/**
 * Creates a lab machine's root on first use (docs/adr/0004 §2): the directory layout, the machine
 * config, a node certificate from the fleet CA, and an initial install of slot A. Each step is
 * skipped when already done, so `molt lab machine` can be run again on the same root.
 */
import { spawn } from 'node:child_process';
import { access, copyFile, mkdir, readFile, rename } from 'node:fs/promises';
import { isIP } from 'node:net';
import { basename, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { writePrivateFile } from '../platform/fs/private-file.ts';
import { freePort } from '../platform/process/free-port.ts';
import { MachineConfig, type MachineConfigInput } from '../protocol/machine-config.ts';
import { type BootloaderName } from '../core/boot/bootloaders.ts';

export interface MachineInitOptions {
  readonly root: string;
  readonly bootloader: BootloaderName;
  readonly controlPlane: boolean;
  readonly node?: string;
  /** A config file to install as `state/config.yaml` (control-plane machines: etcd section). */
  readonly configFile?: string;
  readonly insecureRegistry: boolean;
  readonly healthDeadlineSeconds: number;
  readonly apiPort: number;
  /** Fleet CA directory (`molt pki init`) to issue the node certificate from. */
  readonly pkiDir?: string;
  /** Installer image for the first install of slot A. */
  readonly image?: string;
  /** argv that starts molt. */
  readonly molt: readonly string[];
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

export function nodeName(options: Pick<MachineInitOptions, 'node' | 'root'>): string {
  return (
    options.node ??
    basename(options.root)
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-')
  );
}

export async function initMachine(options: MachineInitOptions): Promise<void> {
  const { root } = options;
  for (const dir of ['esp', 'slots', 'ephemeral', 'state/journal', 'state/pki', 'run']) {
    await mkdir(join(root, dir), { recursive: true });
  }
  await writeConfig(options);
  if (options.pkiDir !== undefined) await issueNodeCertificate(options, options.pkiDir);
  if (options.image !== undefined && !(await anySlotReady(root))) {
    const args = ['agent', 'install', '--root', root, '--image', options.image];
    await runMolt(options.molt, options.insecureRegistry ? [...args, '--insecure'] : args);
  }
}

async function writeConfig(options: MachineInitOptions): Promise<void> {
  const path = join(options.root, 'state', 'config.yaml');
  // 0600 from creation: a machine config may hold the registry password, and the agent
  // refuses to start on one others can read. copyFile would carry the source's mode over.
  if (options.configFile !== undefined) {
    await writePrivateFile(path, await readFile(options.configFile));
    return;
  }
  if (await exists(path)) return;
  if (options.controlPlane) {
    throw new MoltError(
      ErrorCode.MachineInvalid,
      'a control-plane lab machine needs --config with an etcd section',
      {
        hint: 'write a config.yaml with node, role: control-plane, bootloader and etcd, and pass --config',
      },
    );
  }
  const config: MachineConfigInput = {
    node: nodeName(options),
    role: 'worker',
    bootloader: options.bootloader,
    // A fixed port, chosen once: clients following an operation reconnect to it after reboots.
    api: {
      host: '127.0.0.1',
      port: options.apiPort === 0 ? await freePort() : options.apiPort,
    },
    healthDeadlineSeconds: options.healthDeadlineSeconds,
    registry: { insecure: options.insecureRegistry },
  };
  await writePrivateFile(path, stringify(config));
}

/**
 * The address the agent serves on (`api.host` of the machine config), when it is an IP other than
 * loopback: a lab machine in a network namespace (lab/fleet/network.ts), whose certificate must
 * name it for the operator's TLS check to pass.
 */
async function servingAddress(root: string): Promise<string | undefined> {
  const parsed = MachineConfig.safeParse(
    parse(await readFile(join(root, 'state', 'config.yaml'), 'utf8')),
  );
  // An invalid config names no address; the agent refuses it at start with the field to fix.
  const host = parsed.success ? parsed.data.api.host : undefined;
  return host !== undefined && isIP(host) !== 0 && host !== '127.0.0.1' ? host : undefined;
}

async function issueNodeCertificate(options: MachineInitOptions, pkiDir: string): Promise<void> {
  const dir = join(options.root, 'state', 'pki');
  if (await exists(join(dir, 'node.pem'))) return;
  const name = nodeName(options);
  const address = await servingAddress(options.root);
  await runMolt(options.molt, [
    'pki',
    'issue',
    '--ca-dir',
    pkiDir,
    '--role',
    'node',
    '--name',
    name,
    '--out',
    dir,
    ...(address === undefined ? [] : ['--san', address]),
  ]);
  await rename(join(dir, `${name}.pem`), join(dir, 'node.pem'));
  await rename(join(dir, `${name}.key`), join(dir, 'node.key'));
  await copyFile(join(pkiDir, 'ca.pem'), join(dir, 'ca.pem'));
}

async function anySlotReady(root: string): Promise<boolean> {
  for (const slot of ['a', 'b']) {
    try {
      const manifest = JSON.parse(
        await readFile(join(root, 'slots', slot, 'slot.json'), 'utf8'),
      ) as { status?: string };
      if (manifest.status === 'ready') return true;
    } catch {
      // no manifest: not ready
    }
  }
  return false;
}

function runMolt(molt: readonly string[], args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(molt[0] ?? process.execPath, [...molt.slice(1), ...args], {
      stdio: 'inherit',
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new MoltError(
            ErrorCode.MachineInvalid,
            `\`molt ${args.join(' ')}\` failed (exit ${String(code)})`,
          ),
        );
    });
  });
}
