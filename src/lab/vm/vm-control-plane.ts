// SPDX-License-Identifier: Apache-2.0
/**
 * The machine config of a lab control-plane VM (docs/adr/0018 §3–4): etcd and the three
 * components as systemd units the agent renders, every file named where `molt install --kube-pki`
 * lays the cluster's PKI (kubeadm's layout under `controlPlane.pki.dir`), the binaries where an
 * image built with `--kubernetes-control-plane` has them, and the cluster's bootstrap on the first
 * control plane. The flags are kubeadm's, with the lab's choices: the node controller gives
 * Kubernetes' own 40 s grace (a TCG VM starved by a booting neighbour misses a shorter one), and
 * the controllers include the token cleaner, which deletes expired bootstrap tokens.
 */
import { kubernetesPkiPaths } from '../../platform/pki/kubernetes-layout.ts';
import type { MachineConfigInput } from '../../protocol/machine-config.ts';

/** Where an image with a control plane has its components (`--kubernetes-control-plane`). */
export const ImageControlPlaneBins = '/usr/lib/molt/kubernetes/bin';
/** The PKI's directory on STATE (`controlPlane.pki.dir`'s default). */
export const StatePkiDir = '/molt/state/kubernetes';
export const ApiserverPort = 6443;
const ControllerManagerPort = 10257;
const SchedulerPort = 10259;
/** The service CIDR `molt pki kubernetes` puts the first address of in the serving certificate. */
const ServiceCidr = '10.96.0.0/12';

export interface ControlPlaneVm {
  readonly name: string;
  /** Its address on the lab bridge: etcd's peer and client URLs, the API server's. */
  readonly address: string;
  /** The cluster's control planes (this one among them), by name and bridge address. */
  readonly members: readonly { readonly name: string; readonly address: string }[];
  /** The cluster's name (`molt pki kubernetes --cluster`). */
  readonly cluster: string;
  /** The Kubernetes version of the image's binaries. */
  readonly version: string;
  /** The first control plane bootstraps the cluster for its nodes. */
  readonly bootstrap: boolean;
}

const clientUrl = (address: string): string => `http://${address}:2379`;

/** The `etcd` and `controlPlane` sections (with `role`) of control-plane VM `vm`'s config. */
export function controlPlaneVmConfig(vm: ControlPlaneVm): Partial<MachineConfigInput> {
  const p = kubernetesPkiPaths(StatePkiDir);
  const etcdServers = vm.members.map((m) => clientUrl(m.address)).join(',');
  const several = vm.members.length > 1;
  return {
    role: 'control-plane',
    etcd: {
      name: vm.name,
      peerUrl: `http://${vm.address}:2380`,
      clientUrl: clientUrl(vm.address),
      initialCluster: vm.members.map((m) => `${m.name}=http://${m.address}:2380`).join(','),
      endpoints: vm.members.map((m) => clientUrl(m.address)),
      etcdutl: '/usr/local/bin/etcdutl',
    },
    controlPlane: {
      binaries: ImageControlPlaneBins,
      version: vm.version,
      pki: { cluster: vm.cluster, dir: StatePkiDir },
      ...(vm.bootstrap && { bootstrap: {} }),
      // A first start under TCG: etcd, then three Go binaries on one emulated CPU.
      healthTimeoutSeconds: 600,
      components: {
        'kube-apiserver': {
          port: ApiserverPort,
          args: [
            `--etcd-servers=${etcdServers}`,
            `--advertise-address=${vm.address}`,
            `--secure-port=${String(ApiserverPort)}`,
            `--tls-cert-file=${p.apiserverCert}`,
            `--tls-private-key-file=${p.apiserverKey}`,
            `--client-ca-file=${p.caCert}`,
            '--enable-bootstrap-token-auth=true',
            `--kubelet-client-certificate=${p.kubeletClientCert}`,
            `--kubelet-client-key=${p.kubeletClientKey}`,
            '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname',
            `--service-cluster-ip-range=${ServiceCidr}`,
            '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
            `--service-account-key-file=${p.saPub}`,
            `--service-account-signing-key-file=${p.saKey}`,
            `--requestheader-client-ca-file=${p.frontProxyCaCert}`,
            '--requestheader-allowed-names=front-proxy-client',
            '--requestheader-username-headers=X-Remote-User',
            '--requestheader-group-headers=X-Remote-Group',
            '--requestheader-extra-headers-prefix=X-Remote-Extra-',
            `--proxy-client-cert-file=${p.frontProxyClientCert}`,
            `--proxy-client-key-file=${p.frontProxyClientKey}`,
            '--authorization-mode=Node,RBAC',
            '--enable-admission-plugins=NodeRestriction',
            '--allow-privileged=true',
          ],
        },
        'kube-controller-manager': {
          port: ControllerManagerPort,
          args: [
            `--kubeconfig=${p.controllerManagerConf}`,
            `--authentication-kubeconfig=${p.controllerManagerConf}`,
            `--authorization-kubeconfig=${p.controllerManagerConf}`,
            `--service-account-private-key-file=${p.saKey}`,
            `--root-ca-file=${p.caCert}`,
            `--cluster-signing-cert-file=${p.caCert}`,
            `--cluster-signing-key-file=${p.caKey}`,
            `--requestheader-client-ca-file=${p.frontProxyCaCert}`,
            '--controllers=*,bootstrapsigner,tokencleaner',
            '--use-service-account-credentials=true',
            `--leader-elect=${String(several)}`,
            '--bind-address=127.0.0.1',
            `--secure-port=${String(ControllerManagerPort)}`,
            '--node-monitor-grace-period=40s',
          ],
        },
        'kube-scheduler': {
          port: SchedulerPort,
          args: [
            `--kubeconfig=${p.schedulerConf}`,
            `--authentication-kubeconfig=${p.schedulerConf}`,
            `--authorization-kubeconfig=${p.schedulerConf}`,
            `--leader-elect=${String(several)}`,
            '--bind-address=127.0.0.1',
            `--secure-port=${String(SchedulerPort)}`,
          ],
        },
      },
    },
  };
}

/** The API server's URL on the lab bridge (what `molt pki kubernetes --server` is given). */
export const apiServerUrl = (address: string): string =>
  `https://${address}:${String(ApiserverPort)}`;
