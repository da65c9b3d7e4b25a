import { createChallenge, extractParams, verifySolution } from 'altcha-lib/v1';
import type { Challenge } from 'altcha-lib/v1/types';
import type { Clock } from '../clock.js';
import type { SpentSolution } from '../requests/service.js';

/** How long a challenge handed out with the form may be solved and sent. */
export const CHALLENGE_LIFETIME_MS = 30 * 60_000;

/**
 * The public form's proof-of-work: ALTCHA challenges (altcha-lib, SHA-256), made and checked here,
 * solved by the form's own script. Nothing leaves the service: it runs offline.
 *
 * @NOTE: a challenge is signed with a key derived from the deployment's secret key, so every process
 * checks what any other handed out; it names its link and expires (both inside the signed salt), and
 * a solution is spent once: its signature is recorded in the submission's transaction, so a replay,
 * even at the same instant on another process, meets the unique key and is refused.
 */
export class ProofOfWork {
  constructor(
    /** Called on first use, so a command that never serves the form creates no key file. */
    private readonly loadHmacKey: () => string,
    private readonly clock: Clock,
    private readonly maxNumber: number,
  ) {}

  /** A fresh challenge for a form of `linkId`. */
  challenge(linkId: string): Promise<Challenge> {
    return createChallenge({
      hmacKey: this.loadHmacKey(),
      maxNumber: this.maxNumber,
      expires: new Date(this.clock.now().getTime() + CHALLENGE_LIFETIME_MS),
      params: { link: linkId },
    });
  }

  /** The solution to spend if `payload` solves a live challenge of `linkId`; undefined for any other payload. */
  async check(payload: string, linkId: string): Promise<SpentSolution | undefined> {
    let decoded: { signature?: unknown };
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as { signature?: unknown };
    } catch {
      return undefined;
    }
    if (decoded === null || typeof decoded !== 'object' || typeof decoded.signature !== 'string') return undefined;
    // Expiry is checked against the service's clock below, not the library's.
    if (!(await verifySolution(payload, this.loadHmacKey(), false).catch(() => false))) return undefined;
    const params = extractParams(payload);
    const expiresAtMs = Number(params.expires) * 1000;
    if (params.link !== linkId || !Number.isFinite(expiresAtMs) || expiresAtMs <= this.clock.now().getTime()) return undefined;
    return { digest: decoded.signature, expiresAt: new Date(expiresAtMs).toISOString() };
  }
}
