// SPDX-License-Identifier: Apache-2.0
// `npm run build`'s second step: copies the dashboard's page and stylesheet next to its compiled
// modules (src/dashboard/ → dist/dashboard/), where the operator's dashboard listener reads them in
// the built package; tsc emits only what it compiles. They stay real .html/.css files (rather than
// TypeScript string modules) so that editors, Prettier and the browser's devtools see them as
// what they are; the listener fails at start, naming the file, if a build skipped this step.
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dashboardPageFiles } from '../src/operator/api/dashboard-assets.ts';

const root = join(import.meta.dirname, '..');
const from = join(root, 'src', 'dashboard');
const to = join(root, 'dist', 'dashboard');
await mkdir(to, { recursive: true });
for (const file of dashboardPageFiles) await copyFile(join(from, file), join(to, file));
