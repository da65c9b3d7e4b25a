import { intervalLoop } from '../background-loop.js';
import { defineFeature } from '../feature.js';
import { ATTACHMENT_EVENTS } from './events.js';
import { attachmentRoutes } from './routes.js';
import { attachmentComponents } from './schemas.js';
import { attachmentExamples } from './examples.js';
import { AttachmentService } from './service.js';
import { binaryChunkReader, bytesChunkReader } from './chunk-reader.js';
import { byDialect } from '../db/database.js';

declare module '../feature.js' {
  interface FeatureServices {
    attachments: AttachmentService;
  }
}

const SWEEP_INTERVAL_MS = 10 * 60_000;

/** Files attached to work orders: under /records/{id}/attachments, with the work orders' scopes. */
export const attachmentsFeature = defineFeature({
  name: 'attachments',
  events: ATTACHMENT_EVENTS,
  schemas: attachmentComponents,
  examples: attachmentExamples,
  build({ database, clock, config, logger }) {
    const attachments = new AttachmentService(database.db, clock, config.attachments.maxBytes, byDialect(database, { sqlite: ({ db }) => bytesChunkReader(db), postgres: ({ pool }) => binaryChunkReader(pool) }));
    return {
      services: { attachments },
      api: attachmentRoutes(attachments, config.attachments.maxBytes),
      jobs: [
        {
          placement: 'every-worker',
          periodMs: SWEEP_INTERVAL_MS,
          does: 'deletes uploads abandoned part-way',
          loop: intervalLoop({ name: 'attachment-sweeper', intervalMs: SWEEP_INTERVAL_MS, work: () => attachments.sweepAbandonedUploads(), logger, errorMessage: 'sweeping abandoned uploads failed' }),
        },
      ],
    };
  },
});
