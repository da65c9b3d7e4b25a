import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { errors } from '../errors.js';
import { IdParams } from '../http/schema-types.js';
import { problems, componentRef } from '../http/openapi.js';
import type { ProofAnswer, ProofService } from './service.js';
import { BUNDLE_MEDIA_TYPE } from './verify.js';
import { CheckpointQuery, ConsistencyProofSchema, ConsistencyQuery, InclusionProofSchema, InclusionQuery, ProofIdParams, TileParams } from './schemas.js';
import { parseTilePath, tileEnd, tilePath, TILE_WIDTH } from './tiles.js';

const tags = ['Proofs'];
const ProblemRef = Type.Ref('Problem');
const proofResponses = {
  // Keyed by the media type without its parameter: Fastify picks the serializer by that name.
  200: { description: `The sealed proof bundle (\`Content-Type: ${BUNDLE_MEDIA_TYPE}\`).`, content: { [BUNDLE_MEDIA_TYPE.split(';')[0]!]: { schema: Type.Ref('ProofBundle') } } },
  202: {
    ...Type.Ref('PendingProof'),
    description: 'Recorded, not yet signed and sealed into the log (the sequencer does both, within a batch interval); retry after `Retry-After` seconds.',
    headers: { 'retry-after': Type.String({ description: 'Seconds to wait before asking again.' }) },
  },
  ...problems(404),
};

function sendProof(reply: FastifyReply, answer: ProofAnswer) {
  if (answer.status === 'pending') return reply.code(202).header('retry-after', '1').send(answer);
  // Written by JSON.stringify, not the response schema's serializer: the bundle is built to its schema,
  // field by field in its order (the same bytes), and is mostly long strings (the JWS, the checkpoint),
  // which the serializer scans in JavaScript before writing them, and JSON.stringify natively.
  return reply.code(200).type(BUNDLE_MEDIA_TYPE).send(JSON.stringify(answer.bundle));
}

/** Authenticated proof retrieval under /api/v1 (scope proofs:read; other organizations' proofs are 404). */
export function proofRoutes(proofs: ProofService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/records/:id/proof',
      {
        config: { scope: 'proofs:read' },
        schema: {
          tags,
          operationId: 'getRecordProof',
          summary: 'The latest completion proof of a work order',
          description: 'After a reopen and a new completion this is the newer proof; its statement names the older one in `supersedes`.',
          params: IdParams,
          response: proofResponses,
        },
      },
      async (request, reply) => sendProof(reply, await proofs.forRecord(principalOf(request).orgId, request.params.id)),
    );

    app.get(
      '/proofs/:proofId',
      {
        config: { scope: 'proofs:read' },
        schema: { tags, operationId: 'getProof', summary: 'A completion proof bundle by id', description: 'The proof id comes from `record.proof_delivered` (`proofId`). 200: the sealed bundle (`status: sealed`); 202: not sealed yet (`status: pending`), retry after `Retry-After`.', params: ProofIdParams, response: proofResponses },
      },
      async (request, reply) => sendProof(reply, await proofs.byId(principalOf(request).orgId, request.params.proofId)),
    );
  };
}

/**
 * Full tiles served lately, by path: a full tile never changes, and one in here was already found
 * within the published tree (which only grows), so it is answered without reading the database.
 * 1,024 tiles of 8 KiB: 8 MiB at most; the oldest served goes first.
 */
class FullTileCache {
  private readonly tiles = new Map<string, Buffer>();
  constructor(private readonly capacity = 1024) {}
  get(path: string): Buffer | undefined {
    const tile = this.tiles.get(path);
    if (tile) {
      this.tiles.delete(path);
      this.tiles.set(path, tile);
    }
    return tile;
  }
  set(path: string, tile: Buffer): void {
    this.tiles.set(path, tile);
    if (this.tiles.size > this.capacity) this.tiles.delete(this.tiles.keys().next().value!);
  }
}

/** Public, unauthenticated transparency-log endpoints under /api/v1/transparency. */
export function transparencyRoutes(proofs: ProofService): FastifyPluginAsyncTypebox {
  const log = proofs.log;
  const fullTiles = new FullTileCache();
  // Published checkpoints only: one still waiting for its witnesses is not part of the public log yet.
  const latestSize = async () => (await log.latestPublished())?.treeSize ?? 0;
  const atMostLatest = async (field: string, size: number) => {
    const latest = await latestSize();
    if (size > latest) throw errors.validation([{ field, message: `must be at most ${latest}, the size of the latest published checkpoint` }]);
  };
  return async (app) => {
    app.get(
      '/transparency/checkpoint',
      {
        schema: {
          tags,
          operationId: 'getTransparencyCheckpoint',
          summary: 'A signed checkpoint of the transparency log (C2SP signed note, text/plain), with its witnesses’ cosignatures',
          description:
            'Public: the C2SP tlog-tiles `<prefix>/checkpoint` of the log at `/api/v1/transparency`. The latest published checkpoint, or the one of exactly `treeSize`: what inclusion and consistency proofs are checked against. With a witness policy, published once witnessed (the cosignature lines follow the log’s signature); a checkpoint still waiting for its witnesses is 404.',
          querystring: CheckpointQuery,
          response: {
            200: {
              description: 'The signed note.',
              content: { 'text/plain': { schema: Type.Ref('SignedCheckpoint') } },
              headers: {
                'x-wo-publication': Type.Union([Type.Literal('log-signed'), Type.Literal('witnessed'), Type.Literal('unwitnessed')], {
                  description: 'How it was published: `log-signed` (no witness policy), `witnessed` (its quorum cosigned), `unwitnessed` (WO_WITNESS_FAIL_OPEN, without the quorum). Informative: a verifier checks the cosignatures themselves.',
                }),
              },
            },
            400: ProblemRef,
            404: ProblemRef,
          },
        },
      },
      async (request, reply) => {
        const checkpoint = request.query.treeSize === undefined ? await log.latestPublished() : await log.publishedAt(request.query.treeSize);
        if (!checkpoint) throw errors.notFound(request.query.treeSize === undefined ? 'A checkpoint (nothing is published yet)' : `A published checkpoint of size ${request.query.treeSize}`);
        // tlog-tiles: the checkpoint is mutable, cached a few seconds at most (more cosignatures may follow).
        return reply
          .header('cache-control', 'public, max-age=5')
          .header('x-wo-publication', checkpoint.publication)
          .type('text/plain; charset=utf-8')
          .send(checkpoint.note);
      },
    );

    app.get(
      '/transparency/tile/:level/*',
      {
        schema: {
          // @NOTE: not in the OpenAPI document: `<N>` spans path segments (`x001/x234/067`), which an
          // OpenAPI path parameter cannot; tlog-tiles clients build the paths themselves (docs/proofs.md).
          hide: true,
          tags,
          operationId: 'getTransparencyTile',
          summary: 'A C2SP tlog-tiles hash tile: `tile/<L>/<N>[.p/<W>]` (application/octet-stream)',
          description:
            'Public. Up to 256 consecutive 32-byte hashes at Merkle level 8·L (level 0: leaf hashes), as C2SP tlog-tiles v0.1.0 defines them; `N` is written in 3-digit path elements (1234067 → `x001/x234/067`), `.p/<W>` marks a partial tile of W hashes. Served for every tile of the tree up to the latest published checkpoint (partial tiles of every published size included); a full tile never changes and is cached for a year (`immutable`). Entry bundles (`tile/entries/…`) are not public: the leaves are organizations’ signed statements, each read through its own proof.',
          params: TileParams,
          response: {
            200: { description: 'The tile: W × 32 bytes.', content: { 'application/octet-stream': { schema: {} } }, headers: { 'cache-control': Type.Literal('public, max-age=31536000, immutable') } },
            ...problems(404),
          },
        },
      },
      async (request, reply) => {
        const tile = parseTilePath(request.params.level, request.params['*']);
        if (!tile) throw errors.notFound(`A tile at ${request.url} (the path must be tile/<L>/<N>[.p/<W>] as C2SP tlog-tiles writes it)`);
        const path = tilePath(tile);
        let bytes = tile.width === TILE_WIDTH ? fullTiles.get(path) : undefined;
        if (!bytes) {
          if (tileEnd(tile) > (await latestSize())) throw errors.notFound(`Tile ${request.params.level}/${request.params['*']} (the published tree does not hold it yet)`);
          bytes = await log.tile(tile);
          if (tile.width === TILE_WIDTH) fullTiles.set(path, bytes);
        }
        // A full tile, and a partial one of a given width, hold hashes that never change.
        return reply.header('cache-control', 'public, max-age=31536000, immutable').type('application/octet-stream').send(bytes);
      },
    );

    app.get(
      '/transparency/verifier-key',
      {
        schema: {
          tags,
          operationId: 'getTransparencyVerifierKey',
          summary: 'The log key as a signed-note verifier key: <name>+<hex key id>+<base64(0x01 ‖ public key)>',
          description: 'Public. The same key as the JWKS’s `transparency-log` entry, in the form signed-note tools take.',
          response: { 200: { description: 'The verifier key, one line.', content: { 'text/plain': { schema: Type.Ref('VerifierKey') } } } },
        },
      },
      async (_request, reply) => reply.type('text/plain; charset=utf-8').send(`${proofs.verifierKey}\n`),
    );

    app.get(
      '/transparency/inclusion',
      {
        schema: {
          tags,
          operationId: 'getInclusionProof',
          summary: 'RFC 9162 inclusion proof of a leaf in a tree size up to the latest checkpoint',
          description: 'Public. Proves that leaf `leafIndex` is in the tree of `treeSize` leaves, whose root a signed checkpoint names.',
          querystring: InclusionQuery,
          response: { 200: componentRef(InclusionProofSchema), 400: ProblemRef },
        },
      },
      async (request) => {
        const { leafIndex, treeSize } = request.query;
        await atMostLatest('querystring.treeSize', treeSize);
        if (leafIndex >= treeSize) throw errors.validation([{ field: 'querystring.leafIndex', message: 'must be smaller than treeSize' }]);
        const [leafHash, inclusionProof] = await Promise.all([log.leafHash(leafIndex), log.inclusionProof(leafIndex, treeSize)]);
        return { leafIndex, treeSize, leafHash: leafHash!, inclusionProof };
      },
    );

    app.get(
      '/transparency/consistency',
      {
        schema: {
          tags,
          operationId: 'getConsistencyProof',
          summary: 'RFC 9162 consistency proof between two tree sizes up to the latest checkpoint',
          description: 'Public. Proves that the tree of size `second` extends the tree of size `first` (the log only appends).',
          querystring: ConsistencyQuery,
          response: { 200: componentRef(ConsistencyProofSchema), 400: ProblemRef },
        },
      },
      async (request) => {
        const { first, second } = request.query;
        if (first > second) throw errors.validation([{ field: 'querystring.first', message: 'must be at most second' }]);
        await atMostLatest('querystring.second', second);
        return { first, second, consistencyProof: await log.consistencyProof(first, second) };
      },
    );
  };
}
