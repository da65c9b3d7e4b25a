import { intervalLoop } from '../background-loop.js';
import { defineFeature } from '../feature.js';
import { errorsPageUrl } from '../http/error-docs.js';
import { PageBudgets } from '../http/page-budgets.js';
import { isoNow } from '../clock.js';
import { IntakeLinkService } from './links.js';
import { intakeLinkRoutes } from './link-routes.js';
import { INTAKE_PREFIX, intakePageRoutes } from './page-routes.js';
import { ProofOfWork } from './proof-of-work.js';
import { intakeComponents } from './schemas.js';
import { purgeSpentSolutions } from './repository.js';
import { intakeExamples } from './examples.js';

declare module '../feature.js' {
  interface FeatureServices {
    intakeLinks: IntakeLinkService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof INTAKE_SCOPES, string> {}
}

const INTAKE_SCOPES = {
  'intake:manage': 'Create, edit, rotate, disable and delete intake links (the public request forms).',
} as const;

const SOLUTION_PURGE_INTERVAL_MS = 10 * 60_000;

/** Intake links: public forms, QR codes and status pages through which people without a key file work requests (docs/requests.md). */
export const intakeFeature = defineFeature({
  name: 'intake',
  tags: [{ name: 'Intake links', description: 'Public forms (and their QR codes) through which tenants, staff and visitors file work requests without an API key. See docs/requests.md.' }],
  scopes: INTAKE_SCOPES,
  schemas: intakeComponents,
  examples: intakeExamples,
  build({ database, clock, config, logger, services }) {
    const { db } = database;
    const links = new IntakeLinkService(db, clock, config.publicUrl);
    // The key is derived from the deployment's secret key: every process checks the challenges any other made.
    // Derived on first use: a command builds every feature, and must not create the key file.
    let hmacKey: string | undefined;
    const proofOfWork = new ProofOfWork(() => (hmacKey ??= services.secrets.derive('intake proof-of-work').toString('hex')), clock, config.intake.proofOfWorkMaxNumber);
    const budgets = new PageBudgets(db, clock, { namespace: 'intake', perLink: config.intake.submissionsPerLink, perAddress: config.intake.submissionsPerAddress });
    return {
      services: { intakeLinks: links },
      api: intakeLinkRoutes(links),
      pages: [
        {
          plugin: intakePageRoutes({ db, config, errorsPageUrl: errorsPageUrl(config.publicUrl), links, budgets, proofOfWork, requests: services.requests, attachments: services.attachments }),
          prefix: INTAKE_PREFIX,
          sameOriginOnly: true,
        },
      ],
      jobs: [
        {
          placement: 'every-worker',
          periodMs: SOLUTION_PURGE_INTERVAL_MS,
          does: 'deletes the spent proof-of-work solutions of the intake form whose challenge has expired',
          loop: intervalLoop({
            name: 'intake-solution-purge',
            intervalMs: SOLUTION_PURGE_INTERVAL_MS,
            work: () => purgeSpentSolutions(db, isoNow(clock)),
            logger,
            errorMessage: 'purging spent intake solutions failed',
          }),
        },
      ],
    };
  },
});
