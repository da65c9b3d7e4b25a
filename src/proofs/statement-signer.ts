import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { signStatements, type SignedStatement, type SigningOutcome, type StatementSigningKey, type UnsignedStatement } from './statement-signing.js';

/** The signing thread's nice value (Linux: per thread, 0 normal … 19 lowest). */
export const SIGNING_THREAD_NICE = 10;

/** The thread's protocol: one message per batch, answered with one message. */
export interface SignBatch {
  batchId: number;
  statements: UnsignedStatement[];
}

export interface SignBatchResult {
  batchId: number;
  outcomes: SigningOutcome[];
}

/**
 * Signs completion statements for the sequencer, in a worker thread.
 *
 * Why a thread: canonicalizing (RFC 8785) and signing (Ed25519) a statement of a few kilobytes
 * was a large share of what a completion cost the event loop when it was done in the completing
 * transaction (bench/analysis.md, session 10). On the thread it runs on another core, beside the API
 * rather than in front of it. The result is the same either way (Ed25519 signatures are
 * deterministic), so when the thread cannot run (it failed to start, or died) statements are signed
 * inline: only speed is lost.
 */
export class StatementSigner {
  private worker: Worker | undefined;
  private inline = false;
  private nextBatchId = 1;
  private readonly waiting = new Map<number, { resolve: (outcomes: SigningOutcome[]) => void; reject: (error: Error) => void }>();

  private readonly logger: Logger | undefined;
  private readonly threadModule: string;

  /**
   * `signingKey` is asked for when the first batch is signed, so a process that never signs needs
   * no key. `threadModule`: the thread's module beside this one, without extension (tests point it elsewhere).
   */
  constructor(
    private readonly signingKey: () => StatementSigningKey,
    options: { logger?: Logger; threadModule?: string } = {},
  ) {
    this.logger = options.logger;
    this.threadModule = options.threadModule ?? './statement-signer-thread';
  }

  /** Signatures by statement id; a statement that could not be signed is absent (and logged). */
  async sign(statements: UnsignedStatement[]): Promise<Map<string, SignedStatement>> {
    if (statements.length === 0) return new Map();
    let outcomes: SigningOutcome[];
    try {
      outcomes = this.inline ? signStatements(statements, this.signingKey()) : await this.signInThread(statements);
    } catch (error) {
      this.inline = true;
      this.logger?.warn({ err: error }, 'the statement signing thread failed: signing on the event loop from now on');
      outcomes = signStatements(statements, this.signingKey());
    }
    const signed = new Map<string, SignedStatement>();
    for (const outcome of outcomes) {
      if ('error' in outcome) this.logger?.error({ proofId: outcome.id, error: outcome.error }, 'a stored completion statement could not be signed');
      else signed.set(outcome.id, { jws: outcome.jws, digest: outcome.digest });
    }
    return signed;
  }

  /** Whether signing runs on the thread (false once it failed). */
  get threaded(): boolean {
    return !this.inline;
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private signInThread(statements: UnsignedStatement[]): Promise<SigningOutcome[]> {
    const worker = (this.worker ??= this.startThread());
    const batchId = this.nextBatchId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(batchId, { resolve, reject });
      worker.postMessage({ batchId, statements } satisfies SignBatch);
    });
  }

  private startThread(): Worker {
    const worker = startThreadModule(this.threadModule, this.signingKey());
    // The sequencer's interval keeps the process alive while it should; the thread never does.
    worker.unref();
    worker.on('message', ({ batchId, outcomes }: SignBatchResult) => {
      this.waiting.get(batchId)?.resolve(outcomes);
      this.waiting.delete(batchId);
    });
    const failWaiting = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const { reject } of this.waiting.values()) reject(error);
      this.waiting.clear();
    };
    worker.on('error', failWaiting);
    worker.on('exit', (code) => failWaiting(new Error(`the statement signing thread exited with code ${code}`)));
    return worker;
  }
}

/**
 * Starts a thread on the module beside this one: the built `.js`, or, when this process runs the
 * TypeScript sources (tests, `npm run wo`), the `.ts` through tsx, which Node 20 does not hand on
 * to worker threads by itself.
 */
function startThreadModule(relative: string, workerData: unknown): Worker {
  // The thread holds one chunk of statements at a time (~1 MB): a small heap keeps the process's
  // memory near what it was without it. Exceeding it ends the thread, and signing goes inline.
  const options = { workerData, resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 } };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`${relative}.js`, import.meta.url), options);
  const source = new URL(`${relative}.ts`, import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api'); // from here, whatever the working directory
  return new Worker(`import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`, { ...options, eval: true });
}
