// SPDX-License-Identifier: Apache-2.0
/** A repository scan as `createImageScanner` answers it, built from tags alone (tests only). */
import type { ImageRepositoryScan } from '../releases/discovery/images.ts';

/** The scan of a repository whose tags point at these digests: no index, nothing signed or moved. */
export const scanOf = (tags: Readonly<Record<string, string>>): ImageRepositoryScan => ({
  tags: new Map(Object.entries(tags)),
  indexes: new Map(),
  signed: new Set(),
  moved: [],
  rebuilds: [],
  skipped: [],
  requests: {
    ...{ ping: 0, tagList: 1, manifestHead: 0, manifestGet: 0, blobHead: 0, blobGet: 0 },
    ...{ referrers: 0, token: 0, push: 0, retries: 0 },
  },
});
