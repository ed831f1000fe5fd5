// SPDX-License-Identifier: Apache-2.0
/** One named health check run after a new slot boots and before it is committed. */
export interface HealthResult {
  readonly name: string;
  readonly status: 'ok' | 'failing' | 'skipped';
  readonly message: string;
}

export interface HealthCheck {
  readonly name: string;
  run(signal: AbortSignal): Promise<HealthResult>;
}
