import { Registry } from 'prom-client';

/**
 * The metrics of one role a process may take (serving the API, or running the background jobs), kept
 * out of `/metrics` until the process takes that role on: a `wo serve --no-worker` then shows no
 * delivery or sequencer series, and a `wo worker` no rate-limit or event-feed series, instead of
 * zeros that read like a role that stalled. `wo serve` takes both.
 */
export class RoleMetrics {
  /** Where the role's metrics are registered as they are created. */
  readonly registry = new Registry();
  private exposed = false;

  constructor(private readonly served: Registry) {}

  /** Adds the role's metrics to the registry `/metrics` serves; the first call does, later ones nothing. */
  expose(): void {
    if (this.exposed) return;
    this.exposed = true;
    for (const { name } of this.registry.getMetricsAsArray()) this.served.registerMetric(this.registry.getSingleMetric(name)!);
  }
}
