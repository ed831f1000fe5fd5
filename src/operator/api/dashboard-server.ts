// SPDX-License-Identifier: Apache-2.0
/**
 * The dashboard (17) on a listener of its own (config `dashboard.listen`): a browser
 * presents no fleet certificate, so the page cannot live behind the API's mutual TLS. This listener
 * serves the page (`src/dashboard/`: HTML, CSS and ES modules, see `dashboard-assets.ts`) with its
 * first data in it, the reads the page makes, signing in, and the actions of signed-in operators
 * and admins (`dashboard-routes.ts`). Who may call what is decided here, before any route runs:
 *
 * - the page, its files, `/v1/session` and single sign-on's two routes: anyone (the page holds
 *   data only for a reader);
 * - every other GET: a signed-in person, or anyone with `dashboard.anonymousRead`;
 * - the actions (POST): a signed-in operator or admin, from this origin, with the CSRF header;
 * - anything else: 403.
 *
 * Plain HTTP by default (bind it to loopback or a management network), TLS with the API's server
 * certificate on request. Every answer forbids framing (no clickjacking of the action buttons) and
 * carries a content security policy allowing only this origin's scripts and styles.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { createApiApp } from '../../platform/https/app.ts';
import type { Identity } from '../../platform/https/identity.ts';
import { limitedServerFactory, type ListenerLimits } from '../../platform/https/listener.ts';
import { listenUrl, type ListeningApi } from '../../platform/https/server.ts';
import { DashboardRoutes } from '../../protocol/dashboard.ts';
import type { DashboardUser } from '../../protocol/dashboard-config.ts';
import { OperatorRoutes } from '../../protocol/operator.ts';
import { withReleasesEvery } from './read-every.ts';
import type { OperatorApiDeps } from './context.ts';
import {
  loadDashboard,
  treeOf,
  type DashboardAsset,
  type DashboardTree,
} from './dashboard-assets.ts';
import { DashboardAuth } from './dashboard-auth.ts';
import { pageTemplate } from './dashboard-page.ts';
import { dashboardRoutes } from './dashboard-routes.ts';
import { SessionBook } from './dashboard-sessions.ts';
import { dashboardState } from './dashboard-state.ts';
import { DashboardSso, type SsoSettings } from './dashboard-sso.ts';
import { ssoRoutes } from './dashboard-sso-routes.ts';
import { errorAnswer } from './errors.ts';
import { LoginLimiter } from './login-limiter.ts';

/** Who may use the dashboard (the operator config's `dashboard`, `dashboard-config.ts`). */
export interface DashboardAccess {
  readonly users: readonly DashboardUser[];
  readonly anonymousRead: boolean;
  readonly sessionTtl: number;
  /** Single sign-on with an OpenID Connect provider (`dashboard.oidc`), besides tokens. */
  readonly sso?: SsoSettings | undefined;
}

/** Options of {@link createDashboardServer}. */
export interface DashboardServerOptions {
  readonly deps: OperatorApiDeps;
  readonly access: DashboardAccess;
  /** The server certificate and key (PEM); undefined: plain HTTP. */
  readonly tls: { readonly cert: string; readonly key: string } | undefined;
  readonly host: string;
  readonly port: number;
  /** Where the page is read from. @default the tree this module runs from (`src/` or `dist/`) */
  readonly tree?: DashboardTree;
  /** Deadlines and caps. @default {@link dashboardLimits} over the listener defaults */
  readonly limits?: Partial<ListenerLimits> | undefined;
}

/**
 * The dashboard listener's caps: browsers, each page with one event stream, counted by address (no
 * client certificates here) — and one office's people often share one address, so a peer may hold
 * more than on the API. The listener's cap is the default 256.
 */
export const dashboardLimits: Partial<ListenerLimits> = {
  maxConnectionsPerPeer: 64,
  maxStreamsPerPeer: 32,
};

/** The routes writes may go to: the API's rollout actions, holds, and release blocks. */
const actions = new Set<string>([
  OperatorRoutes.pause,
  OperatorRoutes.resume,
  OperatorRoutes.approve,
  OperatorRoutes.cancel,
  OperatorRoutes.rollback,
  OperatorRoutes.hold,
  OperatorRoutes.release,
  OperatorRoutes.block,
  OperatorRoutes.unblock,
]);

/**
 * `POST /v1/rollouts/r1/pause` → `pause rollout r1`, `POST /v1/releases/block` → `block a
 * release`, as refusals name an action.
 */
function actionName(request: FastifyRequest): string {
  const [, , kind = '', id = '', verb = ''] = request.url.split('?')[0]?.split('/') ?? [];
  if (kind === 'releases') return `${id} a release`;
  return `${verb} ${kind === 'machines' ? 'machine' : 'rollout'} ${decodeURIComponent(id)}`;
}

const securityHeaders = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

/** The hook deciding who may call what (see the module's comment); answers refusals itself. */
function guard(app: FastifyInstance, auth: DashboardAuth, open: ReadonlySet<string>) {
  const identities = new WeakMap<FastifyRequest, Identity>();
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    try {
      const reading = request.method === 'GET' || request.method === 'HEAD';
      if (route !== undefined && open.has(route)) return undefined;
      if (reading) {
        if (route !== undefined) auth.checkRead(request);
        return undefined;
      }
      if (request.method !== 'POST' || route === undefined || !actions.has(route))
        throw new MoltError(
          ErrorCode.Forbidden,
          `${request.method} ${request.url}: this listener reads and takes the dashboard's actions only`,
          {
            hint: 'change anything else through the operator API with a fleet certificate (`molt …`)',
          },
        );
      identities.set(request, auth.checkWrite(request, actionName(request)));
    } catch (e) {
      const answer = errorAnswer(e);
      return reply.code(answer.status).send(answer.body);
    }
    return undefined;
  });
  app.addHook('onSend', async (_request, reply) => {
    void reply.headers(securityHeaders);
  });
  return (request: FastifyRequest): Identity => {
    const who = identities.get(request);
    if (who === undefined) throw new MoltError(ErrorCode.Internal, 'an action without a session');
    return who;
  };
}

/** Serve the page with its data, its files, the reads and the actions; resolves once it listens. */
export async function createDashboardServer(
  options: DashboardServerOptions,
): Promise<ListeningApi> {
  // Every page refreshes every 2 s and shows each pool's next release: the registry is asked at
  // most every 10 s for all of them.
  const o = { ...options, deps: withReleasesEvery(options.deps) };
  const assets = await loadDashboard(o.tree ?? treeOf(import.meta.url));
  const tls = o.tls;
  const app = createApiApp({
    name: 'dashboard',
    errorAnswer,
    onInternalError: o.deps.onInternalError,
    serverFactory: limitedServerFactory(tls, { ...dashboardLimits, ...o.limits }),
  });
  const now = o.deps.now;
  const secret = (): string => randomBytes(32).toString('base64url');
  const sso = o.access.sso === undefined ? undefined : new DashboardSso(o.access.sso, now);
  const auth = new DashboardAuth({
    users: o.access.users,
    anonymousRead: o.access.anonymousRead,
    tls: tls !== undefined,
    sessions: new SessionBook({ ttlMs: o.access.sessionTtl, now, secret }),
    limiter: new LoginLimiter({ now }),
    sso: sso?.name,
  });
  const open = [DashboardRoutes.session, DashboardRoutes.oidcLogin, DashboardRoutes.oidcCallback];
  const who = guard(app, auth, new Set([...assets.keys(), ...open]));
  dashboardRoutes(app, { deps: o.deps, auth, who });
  if (sso !== undefined) ssoRoutes(app, auth, sso);
  servePage(app, { assets, auth, deps: o.deps });
  await app.listen({ host: o.host, port: o.port });
  const url = `${listenUrl(app, o.host, tls === undefined ? 'http' : 'https')}/`;
  return { url, close: () => app.close() };
}

/** The page (with the state its viewer may see) and one route per allowed file. */
function servePage(
  app: FastifyInstance,
  o: { assets: ReadonlyMap<string, DashboardAsset>; auth: DashboardAuth; deps: OperatorApiDeps },
): void {
  const { assets, auth } = o;
  const index = assets.get('/');
  if (index === undefined) throw new MoltError(ErrorCode.Internal, 'the dashboard has no page');
  const page = pageTemplate(index.body);
  app.get('/', async (request, reply) => {
    const session = auth.viewOf(auth.sessionOf(request));
    const readable = session.user !== undefined || session.anonymousRead;
    const state = readable ? await dashboardState(o.deps, session) : { session };
    return reply
      .header('content-type', index.contentType)
      .header('cache-control', 'no-store')
      .send(page(state));
  });
  // One route per allowed file: anything else, `..` included, is the API's 404.
  for (const [path, { contentType, body }] of assets) {
    if (path === '/') continue;
    app.get(path, (_request, reply) =>
      reply.header('content-type', contentType).header('cache-control', 'no-cache').send(body),
    );
  }
}
