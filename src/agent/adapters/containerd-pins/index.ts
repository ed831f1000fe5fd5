// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ImagePins} on containerd through `ctr` (docs/adr/0015 §7), in the namespace the CRI uses
 * (`k8s.io`), so the kubelet sees the label: `ctr images pull --hosts-dir` reads the same
 * `certs.d/<host>/hosts.toml` files the CRI pulls through (the node's registry mirrors), and
 * `ctr images label REF key=` clears a label. Argument arrays only (no shell), a timeout on every
 * call; a pull is bounded by `pullTimeoutMs`.
 */
import { execFile } from 'node:child_process';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { PinnedLabel, type ImagePins } from '../../ports/image-pins.ts';

export interface ContainerdPinsOptions {
  /** @default /usr/local/bin/ctr (where the image puts it) */
  readonly ctr?: string;
  /** containerd's socket. @default /run/containerd/containerd.sock */
  readonly address?: string;
  /** @default k8s.io (the CRI's: the kubelet sees only images there) */
  readonly namespace?: string;
  /** containerd's registry hosts directory: `/molt/state/kubernetes/node/certs.d` on a node. */
  readonly hostsDir?: string;
  /** Plain HTTP to a registry no hosts file names (the machine's `registry.insecure`). */
  readonly plainHttp?: boolean;
  /** @default 600 000 (10 min) */
  readonly pullTimeoutMs?: number;
  /** Every other call. @default 30 000 */
  readonly timeoutMs?: number;
}

interface Ran {
  readonly ok: boolean;
  readonly stdout: string;
  readonly why: string;
}

export function createContainerdPins(o: ContainerdPinsOptions = {}): ImagePins {
  const ctr = o.ctr ?? '/usr/local/bin/ctr';
  const global = [
    '--address',
    o.address ?? '/run/containerd/containerd.sock',
    '--namespace',
    o.namespace ?? 'k8s.io',
  ];
  const run = (args: readonly string[], timeoutMs = o.timeoutMs ?? 30_000): Promise<Ran> =>
    new Promise((resolve) => {
      execFile(
        ctr,
        [...global, ...args],
        { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const e = error as (NodeJS.ErrnoException & { killed?: boolean }) | null;
          const why =
            e === null
              ? ''
              : e.killed === true
                ? `no answer within ${String(timeoutMs / 1000)} s`
                : (lastLine(stderr) ?? e.message);
          resolve({ ok: e === null, stdout, why });
        },
      );
    });
  const failed = (what: string, reference: string, r: Ran): MoltError =>
    new MoltError(ErrorCode.ImagePinFailed, `cannot ${what} ${reference}: ${r.why}`, {
      hint: "check the registry the node pulls from (its certs.d hosts files) and containerd's log",
      retryable: true,
    });
  const present = async (reference: string): Promise<boolean> => {
    const r = await run(['images', 'ls', '--quiet', `name==${reference}`]);
    if (!r.ok) throw failed('look up', reference, r);
    return names(r.stdout).includes(reference);
  };
  return {
    present,
    async pin(reference) {
      if (!(await present(reference))) {
        const pull = await run(
          [
            'images',
            'pull',
            ...(o.hostsDir === undefined ? [] : ['--hosts-dir', o.hostsDir]),
            ...(o.plainHttp === true ? ['--plain-http'] : []),
            reference,
          ],
          o.pullTimeoutMs ?? 600_000,
        );
        if (!pull.ok) throw failed('pull', reference, pull);
      }
      const label = await run([
        'images',
        'label',
        reference,
        `${PinnedLabel.key}=${PinnedLabel.value}`,
      ]);
      if (!label.ok) throw failed('pin', reference, label);
    },
    async unpin(reference) {
      if (!(await present(reference))) return;
      const r = await run(['images', 'label', reference, `${PinnedLabel.key}=`]);
      if (!r.ok) throw failed('unpin', reference, r);
    },
    async pinned() {
      const r = await run([
        'images',
        'ls',
        '--quiet',
        `labels."${PinnedLabel.key}"==${PinnedLabel.value}`,
      ]);
      if (!r.ok) throw failed('list', 'pinned images', r);
      return names(r.stdout);
    },
  };
}

function names(stdout: string): string[] {
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** containerd logs warnings (cgroup v1 …) on stderr before the error: the last line says why. */
function lastLine(stderr: string): string | undefined {
  return stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .at(-1);
}
