// SPDX-License-Identifier: Apache-2.0
/**
 * Whether a lab pod's image is "ready" (docs/adr/0013 §7): the lab kubelet runs no containers, so
 * the image says. Its config's labels are read from the registry with molt's OCI client (the
 * platform manifest of an index — linux/amd64 by default), cached by digest; the label
 * `dev.molt.lab.ready` set to `"false"` keeps the pod Running but never Ready, so a bad rebuild
 * really fails its rollout. An image that cannot be read (a made-up name, a registry away) is
 * ready, told to `onError` once, and asked again only after `retryMs`: only a readable label makes
 * an image bad, and a name that does not resolve must not slow every pod start down.
 */
import type { ImageReference } from '../../../core/slots/reference.ts';
import { parseImageReference, referenceTarget } from '../../../core/slots/reference.ts';
import {
  clientOptionsFor,
  createRegistryClient,
  type OciRegistryClient,
  type Platform,
  type ReferencedRegistryOptions,
} from '../../../oci/index.ts';
import { errorMessage } from '../../../core/errors.ts';

/** The image config label that makes pods of the image never Ready when `"false"`. */
export const LabReadyLabel = 'dev.molt.lab.ready';

export interface ImageVerdict {
  readonly ready: boolean;
  readonly reason?: string;
}

export interface ImageReadinessOptions {
  /**
   * Client options for every registry (`insecure` for the lab's plain-HTTP one); the credentials
   * only for their own registry: any pod names any image, and must not collect the password.
   */
  readonly registry?: ReferencedRegistryOptions;
  /** Registry hosts reached at another address, as the agent's pulls do. @default {} */
  readonly mirrors?: Readonly<Record<string, string>>;
  /** @default linux/amd64 */
  readonly platform?: Platform;
  /** Told why an image could not be read. */
  readonly onError?: (image: string, e: unknown) => void;
  /** How long an unreadable image's verdict is kept before it is read again. @default 60000 */
  readonly retryMs?: number;
}

export interface ImageReadiness {
  /** The verdict for a pod container's image reference. Never throws. */
  check(image: string): Promise<ImageVerdict>;
  /** Close the registry connections. */
  close(): Promise<void>;
}

function labelsOf(bytes: Uint8Array): Record<string, unknown> {
  const json = JSON.parse(new TextDecoder().decode(bytes)) as {
    config?: { Labels?: Record<string, unknown> | null };
  } | null;
  return json?.config?.Labels ?? {};
}

export function createImageReadiness(o: ImageReadinessOptions = {}): ImageReadiness {
  const clients = new Map<string, OciRegistryClient>();
  /** Verdicts by `registry/repository@digest`. */
  const byDigest = new Map<string, ImageVerdict>();
  /** Checks by reference: in flight, or unreadable (until `until`). */
  const byReference = new Map<string, { verdict: Promise<ImageVerdict>; until: number }>();
  const clientFor = (registry: string): OciRegistryClient => {
    const address = o.mirrors?.[registry] ?? registry;
    // Keyed by the name, not the address: the credentials go with the name a reference uses.
    let c = clients.get(registry);
    if (c === undefined) {
      c = createRegistryClient({
        retries: 1,
        timeoutMs: 5_000,
        ...clientOptionsFor(o.registry, registry, address),
      });
      clients.set(registry, c);
    }
    return c;
  };
  const key = (ref: ImageReference, digest: string): string =>
    `${ref.registry}/${ref.repository}@${digest}`;

  const read = async (image: string): Promise<ImageVerdict> => {
    const ref = parseImageReference(image);
    if (ref.digest !== undefined) {
      const cached = byDigest.get(key(ref, ref.digest));
      if (cached !== undefined) return cached;
    }
    const client = clientFor(ref.registry);
    const resolved = await client.resolveImage(ref.repository, referenceTarget(ref), o.platform);
    const cached = byDigest.get(key(ref, resolved.digest));
    if (cached !== undefined) return cached;
    const labels = labelsOf(await client.getBlob(ref.repository, resolved.config.digest));
    const verdict: ImageVerdict =
      labels[LabReadyLabel] === 'false'
        ? { ready: false, reason: `image ${image} is labelled ${LabReadyLabel}=false` }
        : { ready: true };
    byDigest.set(key(ref, resolved.digest), verdict);
    return verdict;
  };

  const checkOnce = async (image: string): Promise<ImageVerdict> => {
    try {
      const verdict = await read(image);
      byReference.delete(image);
      return verdict;
    } catch (e) {
      o.onError?.(image, e);
      const until = Date.now() + (o.retryMs ?? 60_000);
      const verdict = {
        ready: true,
        reason: `not read: ${errorMessage(e)}`,
      };
      byReference.set(image, { verdict: Promise.resolve(verdict), until });
      return verdict;
    }
  };

  return {
    check(image) {
      const known = byReference.get(image);
      if (known !== undefined && known.until > Date.now()) return known.verdict;
      const verdict = checkOnce(image);
      byReference.set(image, { verdict, until: Number.POSITIVE_INFINITY });
      return verdict;
    },
    async close() {
      await Promise.all([...clients.values()].map((c) => c.close()));
      clients.clear();
    },
  };
}
