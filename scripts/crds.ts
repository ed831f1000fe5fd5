// SPDX-License-Identifier: Apache-2.0
// Writes deploy/kubernetes/crds.yaml from the schemas the operator reads molt's custom resources
// with (src/protocol/kube-crds). A unit test fails while the checked-in file differs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCrds } from '../src/protocol/kube-crds/render.ts';

const file = join(import.meta.dirname, '../deploy/kubernetes/crds.yaml');
writeFileSync(file, renderCrds());
console.log(`wrote ${file}`);
