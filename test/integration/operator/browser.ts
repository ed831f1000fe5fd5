// SPDX-License-Identifier: Apache-2.0
// The dashboard tests' browser: Debian's Chromium driven by playwright-core, and the token sign-in.
import { chromium, type Browser, type Page } from 'playwright-core';

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
