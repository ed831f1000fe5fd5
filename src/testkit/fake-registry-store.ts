// SPDX-License-Identifier: Apache-2.0
import { createHash } from 'node:crypto';

/** A manifest as the fake registry stores it. */
export interface StoredManifest {
  readonly bytes: Uint8Array;
  readonly mediaType: string;
  readonly digest: string;
  /** Digest of the `subject` the manifest refers to, if any. */
  readonly subject?: string;
  /** The manifest's `artifactType`, else its config's media type (what the referrers API reports). */
  readonly artifactType?: string;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** One repository of the fake registry. */
export interface FakeRepository {
  readonly blobs: Map<string, Uint8Array>;
  readonly manifests: Map<string, StoredManifest>;
  /** tag → manifest digest */
  readonly tags: Map<string, string>;
  /** upload id → state token the client must hand back verbatim */
  readonly uploads: Map<string, string>;
}

/** The `sha256:<hex>` digest of `bytes`. */
export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** In-memory content of the fake registry, by repository name. */
export class FakeRegistryStore {
  private readonly repos = new Map<string, FakeRepository>();

  /** The repository, or undefined when nothing was ever pushed to it. */
  get(name: string): FakeRepository | undefined {
    return this.repos.get(name);
  }

  /** The repository, created empty when missing (pushes create repositories). */
  ensure(name: string): FakeRepository {
    let repo = this.repos.get(name);
    if (repo === undefined) {
      repo = { blobs: new Map(), manifests: new Map(), tags: new Map(), uploads: new Map() };
      this.repos.set(name, repo);
    }
    return repo;
  }

  /** Resolve a tag or digest to a stored manifest. */
  manifest(name: string, reference: string): StoredManifest | undefined {
    const repo = this.repos.get(name);
    if (repo === undefined) return undefined;
    const digest = reference.includes(':') ? reference : repo.tags.get(reference);
    return digest === undefined ? undefined : repo.manifests.get(digest);
  }

  /** Manifests whose `subject` is `digest`, in digest order. */
  referrers(name: string, digest: string): StoredManifest[] {
    const repo = this.repos.get(name);
    if (repo === undefined) return [];
    return [...repo.manifests.values()]
      .filter((m) => m.subject === digest)
      .sort((a, b) => (a.digest < b.digest ? -1 : 1));
  }
}
