// SPDX-License-Identifier: Apache-2.0
// Fuzz targets (docs/patterns/testing.md): what a registry sends the OCI client — manifest, index
// and descriptor bodies, WWW-Authenticate challenges and token answers, Link and Retry-After.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  accepted,
  anyBytes,
  fuzzJson,
  fuzzParameters,
  fuzzText,
  outcome,
  outcomeAsync,
} from '../testkit/fuzz.ts';
import { ErrorCode } from '../core/errors.ts';
import { Authenticator } from './auth.ts';
import { parseChallenges } from './challenge.ts';
import { parseRetryAfter } from './http-errors.ts';
import { nextLink } from './link.ts';
import {
  checkBodyMediaType,
  parseDescriptor,
  parseImageManifest,
  parseIndex,
  parseJson,
} from './manifest.ts';

const digest = (c: string): string => `sha256:${c.repeat(64)}`;
const descriptor = {
  mediaType: 'application/vnd.oci.image.layer.v1.tar',
  digest: digest('a'),
  size: 10,
  annotations: { 'org.opencontainers.image.title': 'vmlinuz' },
  platform: { os: 'linux', architecture: 'arm64', variant: 'v8' },
};
const manifest = {
  schemaVersion: 2,
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  config: { ...descriptor, mediaType: 'application/vnd.oci.image.config.v1+json' },
  layers: [descriptor, { ...descriptor, digest: digest('b') }],
  annotations: { a: 'b' },
  subject: descriptor,
};
const index = { schemaVersion: 2, manifests: [descriptor], annotations: {} };
const challenges = [
  'Bearer realm="https://auth.example/token",service="registry",scope="repository:a/b:pull"',
  'Basic realm="x", Bearer realm="http://127.0.0.1:1/t",error="insufficient_scope"',
  'Bearer realm="a\\"b,c"',
  'Bearer realm="https://r.io:5001/token",service="r"',
  'Bearer realm="http://r.io/token"',
  'Bearer realm="https://r.io.evil/token"',
];
const links = [
  '</v2/_catalog?last=a&n=1>; rel="next"',
  '<https://r.io/v2/x/tags/list?n=2>;rel=next, <a>; rel=prev',
];
const url = 'http://127.0.0.1:5000/v2/acme/tags/list?n=100';

describe('fuzz: registry answers', () => {
  it('manifest, index and descriptor bodies parse into values that parse again the same', () => {
    const json = fc.oneof(
      fuzzJson([manifest, index, descriptor]),
      anyBytes(600).map((b) => {
        const r = outcome(() => parseJson(b, 'bytes'));
        return r.ok ? r.value : null;
      }),
    );
    fc.assert(
      fc.property(json, (v) => {
        const codes = [ErrorCode.ManifestInvalid];
        const roundTrip = (parse: (x: unknown) => unknown): void => {
          const r = outcome(() => parse(v));
          if (accepted(r, ...codes))
            assert.deepEqual(parse(JSON.parse(JSON.stringify(r.value))), r.value);
        };
        roundTrip((x) => parseImageManifest(x, 'm'));
        roundTrip((x) => parseIndex(x, 'i'));
        roundTrip((x) => parseDescriptor(x, 'd', 'f'));
        accepted(
          outcome(() => {
            checkBodyMediaType(v, manifest.mediaType, 'm');
          }),
          ...codes,
        );
      }),
      fuzzParameters(2_000),
    );
  });

  it('parseJson reads any bytes or throws the code it is given', () => {
    fc.assert(
      fc.property(anyBytes(600), (bytes) => {
        accepted(
          outcome(() => parseJson(bytes, 'b', ErrorCode.RegistryProtocol)),
          ErrorCode.RegistryProtocol,
        );
      }),
      fuzzParameters(1_000),
    );
  });

  it('WWW-Authenticate challenges parse into lower-case schemes and parameters, never a throw', () => {
    fc.assert(
      fc.property(fuzzText(challenges, 300), (header) => {
        const r = outcome(() => parseChallenges(header), 'parseChallenges');
        assert.ok(r.ok);
        for (const c of r.value) {
          assert.match(c.scheme, /^[!#$%&'*+.^_`|~0-9a-z-]+$/);
          for (const k of Object.keys(c.params)) assert.equal(k, k.toLowerCase());
        }
      }),
      fuzzParameters(2_000),
    );
  });

  it('a challenge and a token answer authenticate or fail with a registry code; the password reaches only https on the registry host', async () => {
    const tokenBody = fc.oneof(
      fuzzJson([{ token: 'abc', expires_in: 300 }, { access_token: 'x' }]).map((j) =>
        JSON.stringify(j),
      ),
      fuzzText(['{"token":"t"}', 'null', '[]'], 80),
    );
    await fc.assert(
      fc.asyncProperty(
        fuzzText(challenges, 200),
        tokenBody,
        fc.constantFrom(200, 401, 404, 500),
        async (header, body, status) => {
          const auth = new Authenticator({
            registry: 'r.io',
            credentials: { username: 'u', password: 'p' },
            requestToken: (to, headers) => {
              if (headers['authorization'] !== undefined) {
                const target = new URL(to);
                assert.equal(target.protocol, 'https:', `the password went to ${to}`);
                assert.equal(target.hostname, 'r.io', `the password went to ${to}`);
              }
              return Promise.resolve({ status, body });
            },
            now: () => 0,
          });
          const scopes = outcome(() => auth.challenged(header, ['repository:a:pull'], undefined));
          assert.ok(scopes.ok, 'challenged never throws');
          const r = await outcomeAsync(
            () => auth.authorization(scopes.value ?? []),
            'authorization',
          );
          if (
            !accepted(
              r,
              ErrorCode.RegistryProtocol,
              ErrorCode.RegistryUnauthorized,
              ErrorCode.RegistryServerError,
              ErrorCode.RegistryCredentialsWithheld,
            )
          )
            return;
          if (r.value !== undefined) assert.match(r.value, /^(Basic|Bearer) /);
        },
      ),
      fuzzParameters(1_000),
    );
  });

  it('Link headers give a next URL or none, never a throw', () => {
    fc.assert(
      fc.property(fuzzText(links, 200), (header) => {
        const r = outcome(() => nextLink(header, url), 'nextLink');
        if (!accepted(r, ErrorCode.RegistryProtocol) || r.value === undefined) return;
        assert.equal(new URL(r.value).href, r.value);
      }),
      fuzzParameters(2_000),
    );
  });

  it('Retry-After gives a non-negative delay or none', () => {
    fc.assert(
      fc.property(fuzzText(['120', 'Wed, 21 Oct 2015 07:28:00 GMT', ' 5 '], 60), (value) => {
        const r = outcome(() => parseRetryAfter(value, Date.UTC(2015, 9, 21)));
        assert.ok(r.ok);
        if (r.value !== undefined)
          assert.ok(r.value >= 0 && !Number.isNaN(r.value), String(r.value));
      }),
      fuzzParameters(1_000),
    );
  });
});
