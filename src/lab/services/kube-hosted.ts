// SPDX-License-Identifier: Apache-2.0
/**
 * The control plane hosted by lab control-plane machines (docs/adr/0006 §10, 0012 §3): what
 * `startKubeControlPlane({hostApiservers})` hands its caller so each machine's config can carry
 * the command lines of its three components (`controlPlane.components`).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  apiserverArgs,
  controllerManagerArgs,
  kubeconfig,
  schedulerArgs,
  type Files,
} from './kube-files.ts';

export interface ApiserverSetup {
  /** Directory of the binaries (the three components, kubectl, etcd 3.5). */
  readonly bins: string;
  /** The version asked for in the options, if one was. */
  readonly version: string | undefined;
  /** One API server's arguments: its etcd servers, its port, and a scratch directory of its own. */
  args(o: {
    readonly etcd: readonly string[];
    readonly port: number;
    readonly dir: string;
  }): string[];
  /**
   * Write the kubeconfig the hosted controller managers and schedulers reach the API through:
   * `server`, the balancer (a local API server that restarts would cost a leader its lease, and
   * a leader that loses its lease exits). Resolves with its path.
   */
  controllersKubeconfig(server: string): Promise<string>;
  /**
   * One machine's three components: its etcd servers, each one's port, the kubeconfig from
   * {@link controllersKubeconfig}, and a directory of its own in the machine root (the lab
   * firmware ends a boot's processes by such a path).
   */
  components(o: {
    readonly etcd: readonly string[];
    readonly ports: HostedPorts;
    readonly kubeconfig: string;
    readonly dir: string;
  }): Record<HostedComponent, { args: string[]; port: number }>;
}

export type HostedComponent = 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';
export type HostedPorts = Readonly<Record<HostedComponent, number>>;

/** How a machine's components are built in hosted mode (see {@link ApiserverSetup}). */
export function hostedSetup(bins: string, f: Files, version: string | undefined): ApiserverSetup {
  const args: ApiserverSetup['args'] = (a) => [
    ...apiserverArgs(f, a.etcd.join(','), { address: '127.0.0.1', port: a.port }),
    // The lab firmware ends a boot's services by a path in the machine root.
    `--cert-dir=${a.dir}`,
  ];
  const setup: ApiserverSetup = {
    bins,
    version,
    args,
    async controllersKubeconfig(server) {
      const file = join(f.dir, 'hosted-controllers.kubeconfig');
      const admin = f.users.get('admin')?.token ?? '';
      await writeFile(file, kubeconfig(server, f.caFile, 'admin', admin), { mode: 0o600 });
      return file;
    },
    components: ({ etcd, ports, kubeconfig: kc, dir }) => {
      const own = (name: HostedComponent, a: string[]) => ({
        args: [...a, `--cert-dir=${join(dir, name)}`],
        port: ports[name],
      });
      return {
        'kube-apiserver': {
          args: args({ etcd, port: ports['kube-apiserver'], dir: join(dir, 'kube-apiserver') }),
          port: ports['kube-apiserver'],
        },
        'kube-controller-manager': own(
          'kube-controller-manager',
          controllerManagerArgs(f, {
            kubeconfig: kc,
            port: ports['kube-controller-manager'],
            leaderElect: true,
          }),
        ),
        'kube-scheduler': own(
          'kube-scheduler',
          schedulerArgs({ kubeconfig: kc, port: ports['kube-scheduler'], leaderElect: true }),
        ),
      };
    },
  };
  return setup;
}
