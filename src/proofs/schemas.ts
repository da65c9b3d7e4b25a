import { Type } from '@sinclair/typebox';
import { BUNDLE_MEDIA_TYPE } from './verify.js';

const Base64Hash = Type.String({ description: 'SHA-256 hash, standard base64.' });

export const ProofBundleSchema = Type.Object(
  {
    status: Type.Literal('sealed', {
      description: 'Tells this 200 answer from the 202 `PendingProof` (`status: pending`). Not covered by any signature and not needed to verify: bundles saved without it verify the same.',
    }),
    version: Type.Literal(1),
    mediaType: Type.Literal(BUNDLE_MEDIA_TYPE),
    proofId: Type.String({ description: 'Proof id (`prf_…`); the signed statement names it too.' }),
    recordId: Type.String(),
    jws: Type.String({ description: 'Compact JWS (EdDSA/Ed25519) whose payload is the RFC 8785 bytes of the completion statement. Its ASCII bytes are the log leaf.' }),
    leafIndex: Type.Integer({ minimum: 0 }),
    treeSize: Type.Integer({ minimum: 1, description: 'Size of the tree of the checkpoint below.' }),
    inclusionProof: Type.Array(Base64Hash, { description: 'RFC 9162 audit path of the leaf, bottom-up.' }),
    checkpoint: Type.String({
      description: 'C2SP tlog-checkpoint in a C2SP signed note, signed by the log key; with a witness policy, followed by the witnesses’ C2SP tlog-cosignature lines (verify them with `wo proof verify --policy`).',
    }),
    timestampToken: Type.Optional(
      Type.String({
        description:
          'With a TSA configured (WO_TSA_URL): an RFC 3161 TimeStampToken (DER, standard base64) over the checkpoint body (the note up to its blank line, each line ending in a newline), its signer chaining to the TSA roots the service was given. Absent while the TSA has not timestamped the checkpoint (fetch the bundle again later) or without a TSA. `wo proof verify --tsa-roots` checks it and states “timestamped no later than T”.',
      }),
    ),
    keys: Type.Object({
      statementKid: Type.String({ description: 'RFC 7638 thumbprint of the statement key (also the JWS `kid`).' }),
      logKeyName: Type.String({ description: 'Signed-note key name of the log key (the log origin).' }),
      logKeyId: Type.String({ description: 'Signed-note key id of the log key, hex.' }),
    }),
  },
  {
    $id: 'ProofBundle',
    description: `Completion proof bundle, media type \`${BUNDLE_MEDIA_TYPE}\`. Verify it offline with the JWKS at /.well-known/jwks.json (docs/proofs.md).`,
  },
);

export const PendingProofSchema = Type.Object(
  {
    status: Type.Literal('pending', { description: 'Tells this 202 answer from the 200 `ProofBundle` (`status: sealed`).' }),
    proofId: Type.String(),
    recordId: Type.String(),
    createdAt: Type.String(),
  },
  { $id: 'PendingProof', description: 'The statement is signed but not yet sealed into the log (normally within one batch interval: `WO_PROOF_BATCH_INTERVAL_MS`, 250 ms by default). Retry after `Retry-After` seconds.' },
);

export const ProofIdParams = Type.Object({ proofId: Type.String({ minLength: 1, maxLength: 64 }) });

export const InclusionQuery = Type.Object(
  {
    leafIndex: Type.Integer({ minimum: 0, maximum: 2_147_483_647 }),
    treeSize: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'At most the size of the latest signed checkpoint.' }),
  },
  { additionalProperties: false },
);

export const ConsistencyQuery = Type.Object(
  {
    first: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
    second: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'At most the size of the latest signed checkpoint.' }),
  },
  { additionalProperties: false },
);

export const TileParams = Type.Object({
  level: Type.String({ description: 'The tile level L, 0 to 63 (`entries`, the entry bundles, is not served: 404).', maxLength: 8 }),
  '*': Type.String({ description: 'The tile index N in 3-digit path elements (`x001/x234/067`), then `.p/<W>` for a partial tile.', maxLength: 64 }),
});

export const CheckpointQuery = Type.Object(
  {
    treeSize: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'A signed checkpoint of exactly this size; latest when absent.' })),
  },
  { additionalProperties: false },
);

export const InclusionProofSchema = Type.Object(
  {
    leafIndex: Type.Integer(),
    treeSize: Type.Integer(),
    leafHash: Base64Hash,
    inclusionProof: Type.Array(Base64Hash, { description: 'RFC 9162 audit path of the leaf, bottom-up.' }),
  },
  { $id: 'InclusionProof', description: 'RFC 9162 inclusion proof of one leaf in a tree of `treeSize` leaves.' },
);

export const ConsistencyProofSchema = Type.Object(
  {
    first: Type.Integer(),
    second: Type.Integer(),
    consistencyProof: Type.Array(Base64Hash),
  },
  { $id: 'ConsistencyProof', description: 'RFC 9162 consistency proof: the tree of size `second` extends the tree of size `first`.' },
);

export const SignedCheckpointSchema = Type.String({
  $id: 'SignedCheckpoint',
  description: 'A C2SP tlog-checkpoint (origin, tree size, base64 root hash) in a C2SP signed note, signed by the log key, and with a witness policy cosigned by its witnesses (C2SP tlog-cosignature lines after the log’s).',
});

export const VerifierKeySchema = Type.String({
  $id: 'VerifierKey',
  description: 'The log key as a signed-note verifier key: `<name>+<hex key id>+<base64(0x01 ‖ public key)>`, one line.',
});

const JwkSchema = Type.Object(
  {
    kty: Type.Literal('OKP'),
    crv: Type.Literal('Ed25519'),
    x: Type.String(),
    kid: Type.String(),
    use: Type.Literal('sig'),
    alg: Type.Literal('EdDSA'),
    'x-wo-role': Type.Union([Type.Literal('statement'), Type.Literal('transparency-log')]),
    'x-wo-created-at': Type.Optional(Type.String({ description: 'A statement key: when it was made.' })),
    'x-wo-log-origin': Type.Optional(Type.String({ description: 'The transparency-log key: the log’s origin, the first line of its checkpoints.' })),
    'x-wo-note-key-id': Type.Optional(Type.String({ description: 'The transparency-log key: its signed-note key id, hex.' })),
    'x-wo-verifier-key': Type.Optional(Type.String({ description: 'The transparency-log key as a signed-note verifier key.' })),
  },
  { additionalProperties: true },
);

export const JwksSchema = Type.Object(
  { keys: Type.Array(JwkSchema) },
  { $id: 'Jwks', description: 'JSON Web Key Set (RFC 7517): every statement key ever used, and the transparency-log key.' },
);

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const proofComponents = [ProofBundleSchema, PendingProofSchema, InclusionProofSchema, ConsistencyProofSchema, SignedCheckpointSchema, VerifierKeySchema, JwksSchema];
