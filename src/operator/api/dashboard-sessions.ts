// SPDX-License-Identifier: Apache-2.0
/**
 * Who is signed in to the dashboard (docs/adr/0007 §12): sessions kept in the operator's memory,
 * each with its user, a CSRF token and an end. Bounded: at most `max` at once — a sign-in past
 * that ends the oldest — so a stream of sign-ins cannot grow the operator without limit. A restart
 * signs everybody out (nothing about sessions is stored); so does a standby taking over.
 */
import { makeRoom } from '../../core/bounded.ts';
import type { DashboardUser } from '../../protocol/dashboard-config.ts';

/** One sign-in. */
export interface Session {
  /** The cookie's value: 32 random bytes. */
  readonly id: string;
  readonly user: Pick<DashboardUser, 'name' | 'role'>;
  /** What writes echo in `x-molt-csrf`: 32 random bytes, not the cookie. */
  readonly csrf: string;
  /** Epoch ms. */
  readonly expiresAt: number;
}

/** Options of {@link SessionBook}. */
export interface SessionBookOptions {
  readonly ttlMs: number;
  /** Sessions at most. @default 1000 */
  readonly max?: number;
  /** Epoch ms. */
  readonly now: () => number;
  /** A new random secret (a session id, a CSRF token). */
  readonly secret: () => string;
}

/** The sessions of one dashboard listener. */
export class SessionBook {
  // Insertion order is creation order and every session lives `ttlMs`: the first ends first.
  private readonly sessions = new Map<string, Session>();
  private readonly max: number;

  private readonly o: SessionBookOptions;

  constructor(o: SessionBookOptions) {
    this.o = o;
    this.max = o.max ?? 1000;
  }

  /** Start a session for `user`; past `max`, the oldest ends. */
  create(user: Session['user']): Session {
    this.sweep();
    makeRoom(this.sessions, this.max);
    const session: Session = {
      id: this.o.secret(),
      user: { name: user.name, role: user.role },
      csrf: this.o.secret(),
      expiresAt: this.o.now() + this.o.ttlMs,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id; an expired one is ended here. */
  get(id: string | undefined): Session | undefined {
    if (id === undefined) return undefined;
    const s = this.sessions.get(id);
    if (s === undefined) return undefined;
    if (s.expiresAt > this.o.now()) return s;
    this.sessions.delete(id);
    return undefined;
  }

  /** End a session (sign out). */
  end(id: string): void {
    this.sessions.delete(id);
  }

  /** How long a session lasts. */
  get ttlMs(): number {
    return this.o.ttlMs;
  }

  /** How many sessions are open. */
  get size(): number {
    return this.sessions.size;
  }

  private sweep(): void {
    const now = this.o.now();
    for (const [id, s] of this.sessions) {
      if (s.expiresAt > now) break;
      this.sessions.delete(id);
    }
  }
}
