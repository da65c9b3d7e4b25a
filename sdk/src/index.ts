export { createClient, type ApiResponse, type ClientOptions, type OperationMethod, type WorkOrderClient } from './client.js';
export type {
  BinaryBody,
  CallOptions,
  CustomFieldFilters,
  CustomFieldRange,
  ListItem,
  ListOperationId,
  OperationArgs,
  OperationId,
  OperationInput,
  OperationResult,
  ProblemCode,
  Schemas,
  WebhookEnvelope,
  WebhookEventName,
} from './operation-types.js';
export { ProblemError, UnexpectedResponseError, isProblem, isProblemCode, type Problem } from './problem-error.js';
export type { RetryOptions } from './retry-policy.js';
export type { EventFeed, FeedEvent, FollowOptions } from './event-feed.js';
export type { ProofBundle, ProofWaiter, WaitForProofOptions } from './proof-waiter.js';
export { verifyWebhook, WebhookVerificationError, type VerifiedWebhook, type VerifyWebhookOptions, type WebhookHeaders, type WebhookVerificationReason } from './verify-webhook.js';
export { verifyProof, type EvidenceFile, type FileVerdict, type VerifyProofOptions, type VerifyProofResult, type Witnessing, type Timestamp } from './verify-proof.js';
export type { CompletionStatement, EvidenceDigest, HistoryEntry, ProofFailureReason } from './proof-types.js';
/** @deprecated Named `HistoryEntry` since `listRecordHistory` answers the same entries; this name stays as long as the major version. */
export type StatementHistoryEntry = import('./proof-types.js').HistoryEntry;
export { PROBLEM_CODES } from './generated/operations.js';
