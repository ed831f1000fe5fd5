// SPDX-License-Identifier: Apache-2.0
/**
 * The commit the packed molt comes from, for the `org.opencontainers.image.revision` label: the
 * checkout's HEAD, but only when nothing tracked has changed since — a label naming a commit the
 * image does not match would send whoever debugs it to the wrong code.
 */
import { packageRoot } from '../../platform/package-files.ts';
import { runTool } from '../build/tools.ts';

/** HEAD of the checkout molt runs from, when it is one and is clean; otherwise undefined. */
export async function commitOf(root: string = packageRoot): Promise<string | undefined> {
  try {
    const step = { step: 'revision (git)', cwd: root };
    const head = (await runTool('git', ['rev-parse', 'HEAD'], step)).trim();
    const changed = await runTool('git', ['status', '--porcelain', '--untracked-files=no'], step);
    return changed.trim() === '' && /^[0-9a-f]{40,64}$/.test(head) ? head : undefined;
  } catch {
    return undefined;
  }
}
