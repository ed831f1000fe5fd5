// SPDX-License-Identifier: Apache-2.0
/**
 * Composition root of `molt agent` (STYLE §1): reads the machine config and the boot facts,
 * builds the ports, starts the runner and the mTLS API, and writes `run/agent.json` so the lab and
 * tests can find the endpoint. `molt agent install` sets up an empty machine.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { foreignFlag, optionLines, parseOptions } from '../protocol/flags.ts';
import { AgentFlags, AgentInstallFlags } from '../protocol/process-flags/daemons.ts';
import { writeFileAtomic } from './adapters/fs/atomic-write.ts';
import { createFsHoldStore } from './adapters/fs-hold/index.ts';
import { createFsJournalStore } from './adapters/fs-journal/index.ts';
import { readLabBootInfo } from './adapters/lab/boot-info.ts';
import { createLabFaults, noFaults } from './adapters/lab/faults.ts';
import { startKubeletFor } from './adapters/lab/kubelet.ts';
import { createLabPower } from './adapters/lab/power.ts';
import { readProcBootInfo } from './adapters/proc-boot-info/index.ts';
import { createSystemdPower } from './adapters/systemd-power/index.ts';
import { LabEnv } from '../protocol/agent.ts';
import { forceDeleteGrantOf } from './api/drain-permission.ts';
import { createAgentApi } from './api/server.ts';
import { agentApiServing } from './adapters/health/checks.ts';
import { machinePorts } from './compose.ts';
import { pinnedImagesFor } from './compose-images.ts';
import { loadMachineConfig, machineConfigWarnings } from './config.ts';
import type { MachineConfig } from '../protocol/machine-config.ts';
import { assertPrivate } from '../platform/fs/private-file.ts';
import { agentService } from './api-service.ts';
import { installFirstSlot } from './install.ts';
import { loadHolds } from './machine/hold.ts';
import { createRunner } from './machine/runner.ts';

export interface AgentIo {
  out(text: string): void;
  err(text: string): void;
}

function bad(message: string): MoltError {
  return new MoltError(ErrorCode.BadFlag, message, {
    hint: 'usage: molt agent --root DIR | molt agent install --root DIR --image REF [--insecure]',
  });
}

function flags(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: parseOptions(AgentInstallFlags),
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    throw bad((error as Error).message);
  }
}

const newOperationId = (): string =>
  `op-${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`;

/**
 * Advertise the API on the machine's Node when the config asks (`kubernetes.advertise`); the
 * Kubernetes client is loaded only then (P6: agents outside a cluster never load it).
 */
function advertise(config: MachineConfig, url: string, io: AgentIo): { stop(): void } | undefined {
  const k = config.kubernetes;
  if (k?.advertise === undefined || k.advertise === false) return undefined;
  const endpoint = k.advertise === true ? url.replace(/\/$/, '') : k.advertise;
  const running = import('./adapters/kube-node/advertise.ts').then((m) =>
    m.advertiseEndpoint({
      kubeconfig: k.kubeconfig,
      node: k.nodeName ?? config.node,
      endpoint,
      log: (line) => {
        io.err(`molt agent: ${line}\n`);
      },
    }),
  );
  return {
    stop() {
      void running.then((r) => {
        r.stop();
      });
    },
  };
}

/** The machine config, its warnings written to stderr. */
async function loadConfig(root: string, io: AgentIo): Promise<MachineConfig> {
  const config = await loadMachineConfig(root);
  for (const line of machineConfigWarnings(config)) io.err(`molt agent: ${line}\n`);
  return config;
}

async function runDaemon(root: string, io: AgentIo): Promise<number> {
  const config = await loadConfig(root, io);
  // Lab-only adapters (boot facts from the firmware, its power, crash faults, lab image health)
  // only under the lab firmware, never on a real machine.
  const lab = process.env[LabEnv.BootId] !== undefined;
  const boot = lab ? readLabBootInfo(process.env) : await readProcBootInfo();
  const journal = createFsJournalStore(root);
  let shutdown: () => Promise<void> = () => Promise.resolve();
  const served: { url?: string } = {};
  const power = lab ? createLabPower(() => shutdown()) : createSystemdPower(() => shutdown());
  const machine = await machinePorts({ root, config, boot, power, lab });
  const kubelet = await startKubeletFor(config, {
    lab,
    version: (await machine.slots.manifest(boot.slot))?.version ?? 'unknown',
    bootId: boot.bootId,
    log: (line) => {
      io.err(`molt agent: ${line}\n`);
    },
  });
  const ports = { ...machine, health: [...machine.health, agentApiServing(() => served.url)] };
  const holds = await loadHolds(createFsHoldStore(root), ports.clock, config.node);
  const runner = createRunner({
    journal,
    ports,
    boot,
    faults: lab ? createLabFaults(root) : noFaults,
    holds,
    controlPlane: config.role === 'control-plane',
    healthDeadlineMs: config.healthDeadlineSeconds * 1000,
    pullTimeoutMs: config.pullTimeoutSeconds * 1000,
    newOperationId,
    onFatal: (error) => {
      io.err(
        `molt agent: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  });
  const pki = join(root, 'state', 'pki');
  const readPki = (name: string): Promise<string> =>
    readFile(join(pki, name), 'utf8').catch((error: unknown) => {
      throw new MoltError(
        ErrorCode.PkiInvalid,
        `cannot read ${join(pki, name)}: ${(error as Error).message}`,
        {
          hint: 'issue a node certificate with `molt pki issue --role node` into state/pki (ca.pem, node.pem, node.key)',
        },
      );
    });
  const tls = {
    ca: await readPki('ca.pem'),
    cert: await readPki('node.pem'),
    key: await readPki('node.key'),
  };
  // Read first, so a missing key is MOLT_PKI_INVALID; a key others can read stops the agent here.
  await assertPrivate(join(pki, 'node.key'), "the node's private key");
  await runner.start();
  const api = await createAgentApi({
    service: agentService(runner, { node: config.node, role: config.role, boot, ports, holds }),
    journal,
    tls,
    host: config.api.host,
    port: config.api.port,
    forceDelete: forceDeleteGrantOf(config.kubernetes),
    kubernetes: ports.controlPlane,
    pinnedImages: await pinnedImagesFor(root, config),
    recovery: {
      services: ports.serviceControl,
      etcd: ports.etcdRecovery,
      uploadDir: join(root, 'state', 'tmp'),
    },
    onInternalError: (error) => {
      io.err(`molt agent: internal error: ${String(error)}\n`);
    },
  });
  served.url = api.url;
  const advertised = advertise(config, api.url, io);
  const bootstrap =
    config.controlPlane?.bootstrap === undefined
      ? undefined
      : (await import('./compose-bootstrap.ts')).clusterBootstrapOf(root, config, (line) => {
          io.err(`molt agent: ${line}\n`);
        });
  shutdown = async () => {
    advertised?.stop();
    await Promise.all([api.close().catch(() => undefined), kubelet?.shutdown(), bootstrap?.stop()]);
  };
  await writeFileAtomic(
    join(root, 'run', 'agent.json'),
    `${JSON.stringify({ url: api.url, pid: process.pid, bootId: boot.bootId })}\n`,
  );
  io.err(`molt agent: ${config.node} booted slot ${boot.slot}, listening on ${api.url}\n`);
  return new Promise<number>((done) => {
    const stop = (): void => {
      void shutdown().then(async () => {
        await ports.lease?.close();
        done(0);
      });
    };
    process.once('SIGTERM', stop).once('SIGINT', stop);
  });
}

const usage = `Usage: molt agent --root DIR
       molt agent install --root DIR --image REF [--insecure]

The node agent: owns the machine's A/B boot slots and performs upgrades, rollbacks and reboots
requested over its mutual-TLS API (molt node …). Reads DIR/state/config.yaml and DIR/state/pki.
\`install\` writes the first release into slot A of an empty machine and makes it the default.

Options:
${optionLines(AgentInstallFlags)}
`;

export async function runAgentCommand(argv: readonly string[], io: AgentIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(usage);
    return 0;
  }
  const { values, positionals, tokens } = flags(argv);
  if (values.root === undefined) throw bad('--root is required');
  const root = resolve(values.root);
  const [verb] = positionals;
  const foreign = verb === undefined ? foreignFlag(tokens, AgentFlags) : undefined;
  if (foreign !== undefined) throw bad(`${foreign} is a flag of \`molt agent install\``);
  if (verb === undefined) return runDaemon(root, io);
  if (verb !== 'install') throw bad(`unknown agent command ${JSON.stringify(verb)}`);
  if (values.image === undefined) throw bad('install needs --image');
  const config = await loadConfig(root, io);
  const effective = values.insecure
    ? { ...config, registry: { ...config.registry, insecure: true } }
    : config;
  const version = await installFirstSlot(root, effective, values.image);
  io.out(`installed ${version} into slot A of ${config.node}\n`);
  return 0;
}
