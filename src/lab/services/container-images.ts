// SPDX-License-Identifier: Apache-2.0
/**
 * The container images the lab's real Kubernetes nodes run, built here from the host's static
 * busybox and pushed into the lab's registry, so a node never pulls from the internet:
 *
 * - `molt/pause:3.10`: the pod sandbox image (containerd's `sandbox_image`);
 * - `molt/busybox:1` and `molt/busybox:2`: a workload serving `/www/index.html` over HTTP on
 *   `$HTTP_PORT` (8080), the two differing only in that page and a label, so a rollout from one
 *   to the other changes the digest and what the pods answer.
 *
 * OCI image manifests for linux/amd64 with gzip layers and a fixed creation time: the same busybox
 * gives the same digests, push after push.
 */
import { buildImage, createRegistryClient, pushImage, type BuiltImage } from '../../oci/index.ts';
import { busyboxLayer, readBusybox, wwwLayer } from './busybox.ts';
import { layerMtime } from './tar-layer.ts';

/**
 * PID 1 of a PID namespace gets no signal it has no handler for, so a bare `sleep` would ignore
 * the runtime's SIGTERM and hold the pod until SIGKILL. The shell traps TERM and INT and exits at
 * once: `wait` returns as soon as a trapped signal arrives. It also reaps whatever is reparented
 * to it. The `|| sleep 1` keeps a failing background start (no /dev/null) from spinning.
 */
export const pauseScript =
  'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $! || sleep 1; done';

/** The workload's shell stays PID 1, for the same reason, and ends with `httpd` when it does. */
export const httpdScript = 'trap "exit 0" TERM INT; httpd -f -p "$HTTP_PORT" -h /www & wait $!';

/** The page `molt/busybox:<version>` serves at `/`. */
export const pageOf = (version: string): string => `molt/busybox ${version}\n`;

/** Options of {@link pushContainerImages}. */
export interface ContainerImagesOptions {
  /** The registry, `host:port`. */
  readonly registry: string;
  /** Plain HTTP. */
  readonly insecure: boolean;
  /** @default 'molt' */
  readonly repoPrefix?: string;
  /** The static busybox. @default the first of /bin/busybox, /usr/bin/busybox */
  readonly busybox?: string;
}

/** One pushed image. */
export interface PushedImage {
  /** `molt/busybox` */
  readonly repository: string;
  readonly tag: string;
  readonly digest: string;
  /** `host:port/molt/busybox:1` */
  readonly byTag: string;
  /** `host:port/molt/busybox@sha256:…`: what a rollout pins. */
  readonly byDigest: string;
}

/** What {@link pushContainerImages} pushed. */
export interface ContainerImages {
  readonly pause: PushedImage;
  /** `busybox:1` */
  readonly busybox: PushedImage;
  /** `busybox:2`: the same image with another page and label. */
  readonly busyboxNext: PushedImage;
}

const created = layerMtime.toISOString().replace('.000Z', 'Z');
const env = ['PATH=/bin'];

/** The three images, built (not pushed) from the bytes of a static busybox. */
export function buildContainerImages(
  busybox: Uint8Array,
): Record<keyof ContainerImages, BuiltImage> {
  const base = busyboxLayer(busybox);
  const labels = (title: string, version: string): Record<string, string> => ({
    'org.opencontainers.image.title': title,
    'org.opencontainers.image.version': version,
  });
  const workload = (version: string): BuiltImage =>
    buildImage({
      labels: labels('molt/busybox', version),
      layers: [base, wwwLayer(pageOf(version))],
      run: {
        env: [...env, 'HTTP_PORT=8080'],
        cmd: ['/bin/sh', '-c', httpdScript],
        workingDir: '/',
      },
      created,
    });
  return {
    pause: buildImage({
      labels: labels('molt/pause', '3.10'),
      layers: [base],
      run: { env, entrypoint: ['/bin/sh', '-c', pauseScript], workingDir: '/' },
      created,
    }),
    busybox: workload('1'),
    busyboxNext: workload('2'),
  };
}

const where: Record<keyof ContainerImages, { readonly name: string; readonly tag: string }> = {
  pause: { name: 'pause', tag: '3.10' },
  busybox: { name: 'busybox', tag: '1' },
  busyboxNext: { name: 'busybox', tag: '2' },
};

/**
 * Build the lab's container images and push them to `registry` under `<repoPrefix>/pause:3.10`,
 * `<repoPrefix>/busybox:1` and `:2`; returns each by tag and by digest. Pushing again is cheap and
 * yields the same digests (blobs already there are skipped).
 */
export async function pushContainerImages(o: ContainerImagesOptions): Promise<ContainerImages> {
  const built = buildContainerImages(await readBusybox(o.busybox));
  const prefix = o.repoPrefix ?? 'molt';
  const client = createRegistryClient({ registry: o.registry, insecure: o.insecure });
  try {
    const push = async (key: keyof ContainerImages): Promise<PushedImage> => {
      const repository = `${prefix}/${where[key].name}`;
      const { tag } = where[key];
      const digest = await pushImage(client, repository, [tag], built[key]);
      const at = `${o.registry}/${repository}`;
      return { repository, tag, digest, byTag: `${at}:${tag}`, byDigest: `${at}@${digest}` };
    };
    return {
      pause: await push('pause'),
      busybox: await push('busybox'),
      busyboxNext: await push('busyboxNext'),
    };
  } finally {
    await client.close();
  }
}
