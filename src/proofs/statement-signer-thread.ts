// The statement signer's thread (see statement-signer.ts): signs the batches it is sent.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { signStatements, type StatementSigningKey } from './statement-signing.js';
import { SIGNING_THREAD_NICE, type SignBatch, type SignBatchResult } from './statement-signer.js';

const key = workerData as StatementSigningKey;

// Background work: on Linux a thread has its own nice value, and this one yields the CPU to the
// event loop (the API) whenever both want it. Where that is not allowed, it runs at normal priority.
try {
  setPriority(0, SIGNING_THREAD_NICE);
} catch {
  // not permitted here (or not supported): normal priority
}

parentPort!.on('message', (batch: SignBatch) => {
  parentPort!.postMessage({ batchId: batch.batchId, outcomes: signStatements(batch.statements, key) } satisfies SignBatchResult);
});
