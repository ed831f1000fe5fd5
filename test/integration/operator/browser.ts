// SPDX-License-Identifier: Apache-2.0
// The dashboard tests' browser (Debian's Chromium driven by playwright-core), the token sign-in,
// and the operator process they sign in to.
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import { OperatorDashboardPrefix, OperatorServingPrefix } from '../../../src/protocol/operator.ts';
import { moltEntry } from '../lab/harness.ts';

/** Headless Chromium (`MOLT_CHROMIUM` or Debian's); `timeoutMs` bounds its start. */
export function launchChromium(timeoutMs?: number): Promise<Browser> {
  return chromium.launch({
    ...(timeoutMs !== undefined && { timeout: timeoutMs }),
    executablePath: process.env['MOLT_CHROMIUM'] ?? '/usr/bin/chromium',
    // Root has no user namespaces for Chromium's sandbox here; the page is our own.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

/** Sign in on the dashboard's sign-in page with a user's token; resolves once signed in. */
export async function signInWithToken(page: Page, token: string): Promise<void> {
  await page.locator('#login-page').waitFor({ state: 'visible', timeout: 10_000 });
  await page.fill('#login-token', token);
  await page.click('#login-form button[type="submit"]');
  await page.locator('#who').waitFor({ timeout: 10_000 });
}

/** The `molt operator` process of this checkout, serving its API and its dashboard, and leading. */
export interface DashboardOperator {
  readonly process: ManagedProcess;
  /** Where its API serves (mutual TLS). */
  readonly api: string;
  /** Where its dashboard serves. */
  readonly url: string;
}

/** Start `molt operator --config config`; resolves once it leads (stopped again if it does not). */
export async function startDashboardOperator(
  config: string,
  timeoutMs: number,
): Promise<DashboardOperator> {
  const operator = startProcess('molt operator', process.execPath, [
    ...[moltEntry, 'operator', '--config', config],
  ]);
  const printed = async (prefix: string): Promise<string> =>
    (await operator.waitFor(new RegExp(`${prefix}(\\S+)`), timeoutMs))[1] ?? '';
  try {
    const api = await printed(OperatorServingPrefix);
    const url = await printed(OperatorDashboardPrefix);
    await operator.waitFor(/leading as/, timeoutMs);
    return { process: operator, api, url };
  } catch (e) {
    // The output says why it did not come up.
    console.log(`molt operator did not come up:\n${operator.output().slice(-4000)}`);
    await operator.stop(5_000);
    throw e;
  }
}
