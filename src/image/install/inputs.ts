// SPDX-License-Identifier: Apache-2.0
/**
 * What `molt install` copies onto STATE, read and checked before the disk is touched: the machine
 * config (the agent's schema; a `disk:` section is what makes the agent choose its real-machine
 * adapters, so one is added when missing) and the machine's PKI — the fleet CA and the node
 * certificate and key the agent serves and calls with (`state/pki/{ca.pem,node.pem,node.key}`).
 * A certificate that would make the agent fail at its first start (wrong CA, wrong key, another
 * machine's name, not a node certificate, expired) is refused here, where it is cheap to fix. A
 * real Kubernetes node (`kubernetes.node`) also gets its kubelet's and containerd's files, rendered
 * from the cluster CA and bootstrap token its config names on this host.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml, parseDocument } from 'yaml';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { renderNodeFiles, type NodeFiles } from '../../agent/kubernetes-node/files.ts';
import { RoleOrganisationPrefix } from '../../protocol/agent.ts';
import { MachineConfig } from '../../protocol/machine-config.ts';

export interface InstallConfig {
  readonly config: MachineConfig;
  /** The file as written, plus `disk: {}` when it had no disk section (comments kept). */
  readonly text: string;
}

function configError(path: string, message: string, cause?: unknown): MoltError {
  return new MoltError(ErrorCode.MachineInvalid, `the machine config ${path} ${message}`, {
    hint: 'write a config.yaml with node, role, bootloader (docs/install.md shows one) and pass it with --config',
    ...(cause !== undefined && { cause }),
  });
}

/** Read and check `--config`; `bootloader` (the flag) must agree with the file's. */
export async function readInstallConfig(
  path: string,
  bootloader: string | undefined,
): Promise<InstallConfig> {
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch (error) {
    throw configError(
      path,
      `cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      error,
    );
  }
  const doc = parseDocument(raw);
  if (doc.errors.length > 0)
    throw configError(path, `is not valid YAML: ${doc.errors[0]?.message ?? ''}`);
  if (!doc.has('disk')) doc.set('disk', {});
  const parsed = MachineConfig.safeParse(doc.toJS());
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw configError(
      path,
      `is invalid: ${issue === undefined ? '' : `${issue.path.join('.') || '(top level)'}: ${issue.message}`}`,
    );
  }
  const config = parsed.data;
  if (bootloader !== undefined && bootloader !== config.bootloader)
    throw new MoltError(
      ErrorCode.BadFlag,
      `--bootloader ${bootloader} disagrees with the config's bootloader: ${config.bootloader}`,
      { hint: 'the agent writes the bootloader its config names; make the two agree' },
    );
  return { config, text: doc.toString() };
}

/** The three PEM files of `state/pki`. */
export interface MachinePki {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

function pkiError(message: string, hint?: string): MoltError {
  return new MoltError(ErrorCode.PkiInvalid, message, {
    hint:
      hint ??
      'issue one with `molt pki issue --ca-dir CA --role node --name <node> --out DIR` and copy CA/ca.pem into DIR',
  });
}

/** The first readable file of `names` in `dir`, with its name. */
async function readFirst(dir: string, names: readonly string[]): Promise<[string, string]> {
  for (const name of names) {
    const text = await readFile(join(dir, name), 'utf8').catch(() => undefined);
    if (text !== undefined) return [name, text];
  }
  throw pkiError(`${dir} has no ${names.join(' or ')}`);
}

function parseCert(path: string, pem: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (error) {
    throw pkiError(`${path} is not a PEM certificate: ${(error as Error).message}`);
  }
}

function parseKey(path: string, pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (error) {
    throw pkiError(`${path} is not a PEM private key: ${(error as Error).message}`);
  }
}

/**
 * Read `--pki DIR`: `ca.pem` and the node's certificate and key, as `node.pem`/`node.key` or as
 * `molt pki issue` names them (`<node>.pem`/`<node>.key`); check they belong together, to this
 * machine (CN = the config's node, `O=molt:node`) and are valid at `now`.
 */
export async function readMachinePki(dir: string, node: string, now: Date): Promise<MachinePki> {
  const [, ca] = await readFirst(dir, ['ca.pem']);
  const [certName, cert] = await readFirst(dir, ['node.pem', `${node}.pem`]);
  const [keyName, key] = await readFirst(dir, [
    certName === 'node.pem' ? 'node.key' : `${node}.key`,
  ]);
  const caCert = parseCert(join(dir, 'ca.pem'), ca);
  const leaf = parseCert(join(dir, certName), cert);
  const privateKey = parseKey(join(dir, keyName), key);
  if (!caCert.ca) throw pkiError(`${join(dir, 'ca.pem')} is not a CA certificate`);
  if (!leaf.checkIssued(caCert) || !leaf.verify(caCert.publicKey))
    throw pkiError(`${join(dir, certName)} was not issued by ${join(dir, 'ca.pem')}`);
  if (!leaf.checkPrivateKey(privateKey))
    throw pkiError(`${join(dir, keyName)} is not the key of ${join(dir, certName)}`);
  const subject = leaf.subject.split('\n');
  if (!subject.includes(`CN=${node}`) || !subject.includes(`O=${RoleOrganisationPrefix}node`))
    throw pkiError(
      `${join(dir, certName)} is for ${leaf.subject.replaceAll('\n', ', ')}, not the node certificate of ${node} (CN=${node}, O=molt:node)`,
    );
  if (leaf.validToDate < now || leaf.validFromDate > now)
    throw pkiError(
      `${join(dir, certName)} is valid from ${leaf.validFromDate.toISOString()} to ${leaf.validToDate.toISOString()}, not now`,
    );
  return { ca, cert, key };
}

async function readNamed(key: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `the machine config's ${key} ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      {
        hint: `${key} is a file on the host molt install runs on; its content is copied onto STATE`,
        cause: error,
      },
    );
  }
}

/**
 * The files of `state/kubernetes/node/` when the config has `kubernetes.node`: its `caFile` (a
 * PEM certificate) and `bootstrapTokenFile` read here, the rest rendered from the config.
 */
export async function readNodeFiles(config: MachineConfig): Promise<NodeFiles | undefined> {
  const node = config.kubernetes?.node;
  if (node === undefined) return undefined;
  const caPem = await readNamed('kubernetes.node.caFile', node.caFile);
  parseCert(node.caFile, caPem);
  const token = await readNamed('kubernetes.node.bootstrapTokenFile', node.bootstrapTokenFile);
  return renderNodeFiles(config, { caPem, token });
}

/** Where the machine mounts STATE: a file copied onto it is named by a path under it. */
const StateMountPath = '/molt/state/';

/** Enough of a kubeconfig to know it is one (the agent's loader reads the rest). */
const AgentKubeconfig = z.object({
  clusters: z.array(z.object({ cluster: z.object({ server: z.string() }) })).min(1),
  users: z.array(z.object({ name: z.string() })).min(1),
  contexts: z.array(z.object({ name: z.string() })).min(1),
});

/**
 * `--kubeconfig FILE`: the agent's own kubeconfig, for the place on STATE the config's
 * `kubernetes.kubeconfig` names. Checked before the disk is touched: the config must name a file
 * on STATE (anywhere else the image's read-only root would hide it), and FILE must be a kubeconfig.
 */
export async function readAgentKubeconfig(
  config: MachineConfig,
  file: string | undefined,
): Promise<{ readonly path: string; readonly text: string } | undefined> {
  if (file === undefined) return undefined;
  const path = config.kubernetes?.kubeconfig;
  if (path === undefined || !path.startsWith(StateMountPath))
    throw new MoltError(
      ErrorCode.BadFlag,
      `--kubeconfig ${file} has nowhere to go: the machine config's kubernetes.kubeconfig is ${path === undefined ? 'not set' : `${path}, not on STATE`}`,
      {
        hint: `set kubernetes.kubeconfig to a path under ${StateMountPath}, e.g. ${StateMountPath}kubernetes/agent.kubeconfig`,
      },
    );
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    throw new MoltError(
      ErrorCode.BadFlag,
      `--kubeconfig ${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      { cause: error },
    );
  });
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 0 });
  } catch {
    doc = undefined;
  }
  const parsed = AgentKubeconfig.safeParse(doc);
  if (!parsed.success)
    throw new MoltError(
      ErrorCode.BadFlag,
      `--kubeconfig ${file} is not a kubeconfig with a cluster, a user and a context`,
      { hint: 'kubectl config view --minify --raw writes one' },
    );
  return { path, text };
}
