// SPDX-License-Identifier: Apache-2.0
/** {@link ControlPlaneHealth} and {@link BundleResolver} in memory: scripted verdicts and tags. */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { KubeComponent } from '../../core/kubernetes/types.ts';
import type { BundleResolver, ControlPlaneHealth, HealthVerdict } from './kube-health.ts';

export class FakeControlPlaneHealth implements ControlPlaneHealth {
  /** Every gate asked, as `<component>`. */
  readonly asked: KubeComponent[] = [];
  /** The next gates of these components fail (each entry once). */
  readonly failNext: KubeComponent[] = [];
  /** What `metrics` answers (undefined: no cluster to read). */
  exposition: string | undefined = '';

  afterApply(o: {
    cluster: string;
    component: KubeComponent;
    since: number;
  }): Promise<HealthVerdict> {
    this.asked.push(o.component);
    const i = this.failNext.indexOf(o.component);
    if (i < 0) return Promise.resolve({ ok: true, message: `${o.component} healthy` });
    this.failNext.splice(i, 1);
    return Promise.resolve({ ok: false, message: `the ${o.component} Lease was not renewed` });
  }

  metrics(): Promise<string | undefined> {
    return Promise.resolve(this.exposition);
  }
}

/** Bundles by `<repository>:<version>`. */
export class FakeBundleResolver implements BundleResolver {
  readonly tags = new Map<string, string>();
  /** Bundle references `verify` refuses (as unsigned). */
  readonly unsigned = new Set<string>();
  readonly verified: string[] = [];

  constructor(entries: Readonly<Record<string, string>> = {}) {
    for (const [k, v] of Object.entries(entries)) this.tags.set(k, v);
  }

  resolve(repository: string, version: string): Promise<string | undefined> {
    return Promise.resolve(this.tags.get(`${repository}:${version}`));
  }

  verify(bundle: string): Promise<void> {
    this.verified.push(bundle);
    if (!this.unsigned.has(bundle)) return Promise.resolve();
    return Promise.reject(
      new MoltError(ErrorCode.SignatureMissing, `${bundle} has no signature (fake)`),
    );
  }
}
