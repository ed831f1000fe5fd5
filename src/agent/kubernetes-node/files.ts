// SPDX-License-Identifier: Apache-2.0
/**
 * The files a real Kubernetes node runs on, rendered from the machine config's `kubernetes.node`
 * (protocol/machine-config-node.ts) for `/molt/state/kubernetes/node/`: the image's units start
 * containerd with `containerd.toml` and the kubelet with `kubelet.yaml`, `kubelet.env` and
 * `bootstrap.kubeconfig` (deploy/image/kubernetes-node/). They live on STATE because the root is a
 * read-only squashfs and `/var` a tmpfs; what containerd and the kubelet write at run time goes to
 * EPHEMERAL (images, pods), except the kubelet's rotated client certificate (`pki/`, its
 * `--cert-dir`) which stays on STATE, so a machine whose EPHEMERAL was wiped rejoins without a new
 * token. Pure: the caller reads the CA and token and writes the result (image/install/).
 */
import { stringify } from 'yaml';
import { parseImageReference } from '../../core/slots/reference.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { MachineConfig } from '../../protocol/machine-config.ts';
import {
  BootstrapTokenPattern,
  type KubernetesNodeConfig,
} from '../../protocol/machine-config-node.ts';
import { toToml } from './toml.ts';

/** Where STATE holds the node's files on the machine. */
export const NodeDir = '/molt/state/kubernetes/node';
const at = (name: string): string => `${NodeDir}/${name}`;

/** One rendered file: its text and the mode to write it with. */
export interface NodeFile {
  readonly content: string;
  readonly mode: number;
}

/** Relative path under {@link NodeDir} → file. */
export type NodeFiles = Readonly<Record<string, NodeFile>>;

const Public = 0o644;
/** The bootstrap token authenticates as the cluster's bootstrappers: a secret. */
const Secret = 0o600;

function containerdToml(node: KubernetesNodeConfig): string {
  return toToml({
    version: 3,
    // Images and snapshots are rebuilt by pulling: EPHEMERAL, wiped by a preserve:false upgrade.
    root: '/molt/ephemeral/containerd',
    state: '/run/containerd',
    grpc: { address: '/run/containerd/containerd.sock' },
    plugins: {
      'io.containerd.cri.v1.images': {
        snapshotter: 'overlayfs',
        pinned_images: { sandbox: node.sandboxImage },
        registry: { config_path: at('certs.d') },
      },
      'io.containerd.cri.v1.runtime': {
        containerd: {
          default_runtime_name: 'runc',
          runtimes: {
            runc: {
              runtime_type: 'io.containerd.runc.v2',
              // The kubelet's cgroupDriver must agree: both leave cgroups to systemd.
              options: { SystemdCgroup: true },
            },
          },
        },
        cni: { bin_dirs: ['/opt/cni/bin'], conf_dir: at('cni') },
      },
    },
  });
}

/**
 * containerd's `certs.d/<registry>/hosts.toml` files. One per `registry.mirrors` entry: images
 * keep the name they were published under (`127.0.0.1:5000/…`) and are pulled from the mirror (a
 * VM's `10.0.2.2`). And with `registry.insecure`, one saying plain HTTP for each registry the node
 * pulls from directly — `registry.host` and the sandbox image's — since containerd, unlike the
 * agent, assumes HTTPS for any registry it has no file for.
 */
function hostsTomls(config: MachineConfig, sandboxImage: string): Record<string, NodeFile> {
  const { mirrors, insecure } = config.registry;
  const file = (server: string): NodeFile => ({
    content: toToml({
      server,
      capabilities: ['pull', 'resolve'],
      ...(insecure && { skip_verify: true }),
    }),
    mode: Public,
  });
  const files: Record<string, NodeFile> = {};
  for (const [registry, mirror] of Object.entries(mirrors))
    files[`certs.d/${registry}/hosts.toml`] = file(`${insecure ? 'http' : 'https'}://${mirror}`);
  if (!insecure) return files;
  const direct = [config.registry.host, parseImageReference(sandboxImage).registry];
  for (const registry of direct)
    if (registry !== undefined && mirrors[registry] === undefined)
      files[`certs.d/${registry}/hosts.toml`] = file(`http://${registry}`);
  return files;
}

/**
 * A bridge `cni0` with this node's pod subnet. Pods reach other nodes' pods through routes (the
 * machine config's `network`), and anything else by masquerade: traffic leaving the subnet takes
 * the node's address, so the host or router on the node network that the pod talks to (an API
 * server, a registry) answers without a route back to every node's pods. Across nodes, that
 * hides a pod's own address; a cluster that needs it brings its own CNI.
 */
function bridgeConflist(node: KubernetesNodeConfig): string {
  const conflist = {
    cniVersion: '1.0.0',
    name: 'molt-bridge',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        ipMasq: true,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: node.podCidr }]],
          routes: [{ dst: '0.0.0.0/0' }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  return `${JSON.stringify(conflist, null, 2)}\n`;
}

function kubeletYaml(node: KubernetesNodeConfig): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    cgroupDriver: 'systemd',
    containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
    // Only the API server (with a certificate the cluster CA signed) and those it authorizes
    // may use the kubelet's API: no anonymous requests.
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: at('ca.crt') },
    },
    authorization: { mode: 'Webhook' },
    rotateCertificates: true,
    failSwapOn: false,
    staticPodPath: at('manifests'),
    clusterDomain: 'cluster.local',
    // The image resolves names through systemd-resolved, whose /etc/resolv.conf names its stub at
    // 127.0.0.53 — unreachable from a pod's network namespace. Pods get the upstream servers.
    resolvConf: '/run/systemd/resolve/resolv.conf',
    maxPods: node.maxPods ?? 110,
    // A 2 GiB machine cannot spare the kubelet's default margins (10 % of disk and more).
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '5%',
      'nodefs.inodesFree': '5%',
      'imagefs.available': '5%',
    },
    // Set, so the status report follows it too (4 s): a lab controller manager declares a node
    // NotReady after 10 s without news. The lease keeps the standard 40 s.
    nodeStatusUpdateFrequency: '4s',
    nodeLeaseDurationSeconds: 40,
  });
}

function bootstrapKubeconfig(server: string, token: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'cluster', cluster: { server, 'certificate-authority': at('ca.crt') } }],
    users: [{ name: 'kubelet-bootstrap', user: { token } }],
    contexts: [{ name: 'bootstrap', context: { cluster: 'cluster', user: 'kubelet-bootstrap' } }],
    'current-context': 'bootstrap',
  });
}

/** The kubelet's extra flags: the Node's name, and its InternalIP when the config gives one. */
function kubeletEnv(name: string, address: string | undefined): string {
  const ip = address === undefined ? '' : ` --node-ip=${address}`;
  return `KUBELET_ARGS=--hostname-override=${name}${ip}\n`;
}

function invalid(message: string): MoltError {
  return new MoltError(ErrorCode.MachineInvalid, message, {
    hint: 'kubernetes.node needs the cluster CA (PEM) and a bootstrap token <6 of a-z0-9>.<16 of a-z0-9>',
  });
}

/**
 * The node's files for `config` (which must have `kubernetes.node`), with the cluster CA's PEM and
 * the bootstrap token read from the files it names. The Node's name is `kubernetes.nodeName`, or
 * the machine's `node`, as the agent cordons and drains it.
 */
export function renderNodeFiles(
  config: MachineConfig,
  secrets: { readonly caPem: string; readonly token: string },
): NodeFiles {
  const node = config.kubernetes?.node;
  if (node === undefined)
    throw invalid(`the machine config of ${config.node} has no kubernetes.node`);
  const token = secrets.token.trim();
  if (!BootstrapTokenPattern.test(token))
    throw invalid('the bootstrap token is not <6 of a-z0-9>.<16 of a-z0-9>');
  if (!secrets.caPem.includes('-----BEGIN CERTIFICATE-----'))
    throw invalid('the cluster CA is not a PEM certificate');
  const name = config.kubernetes?.nodeName ?? config.node;
  return {
    'containerd.toml': { content: containerdToml(node), mode: Public },
    ...hostsTomls(config, node.sandboxImage),
    'cni/10-molt-bridge.conflist': { content: bridgeConflist(node), mode: Public },
    'kubelet.yaml': { content: kubeletYaml(node), mode: Public },
    'kubelet.env': { content: kubeletEnv(name, node.address), mode: Public },
    'bootstrap.kubeconfig': { content: bootstrapKubeconfig(node.server, token), mode: Secret },
    'ca.crt': {
      content: secrets.caPem.endsWith('\n') ? secrets.caPem : `${secrets.caPem}\n`,
      mode: Public,
    },
  };
}
