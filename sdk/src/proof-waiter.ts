import type { ApiResponse } from './client.js';
import type { Schemas } from './operation-types.js';
import { retryAfterMs } from './retry-policy.js';

export type ProofBundle = Schemas['ProofBundle'];

export interface WaitForProofOptions {
  /** The work order whose latest proof to wait for. */
  recordId: string;
  /** Give up after this long (default 60 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Waits until a work order's latest proof is sealed (200) and answers its bundle. */
export type ProofWaiter = (options: WaitForProofOptions) => Promise<ProofBundle>;

type GetRecordProof = (input: { path: { id: string }; signal?: AbortSignal }) => Promise<ApiResponse<'getRecordProof'>>;

export async function waitForProof(getRecordProof: GetRecordProof, options: WaitForProofOptions): Promise<ProofBundle> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const answer = await getRecordProof({ path: { id: options.recordId }, ...(options.signal ? { signal: options.signal } : {}) });
    if (answer.status === 200) return answer.data as ProofBundle;
    // 202: the statement waits for the log's sequencer, which says when to ask again.
    const pause = retryAfterMs(answer.response.headers.get('retry-after')) ?? 1000;
    if (Date.now() + pause > deadline) throw new Error(`the proof of ${options.recordId} was not sealed within ${options.timeoutMs ?? 60_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, pause));
    options.signal?.throwIfAborted();
  }
}
