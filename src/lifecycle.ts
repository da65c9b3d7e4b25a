/**
 * Where a serving process is in its life. `running` until SIGTERM/SIGINT; `draining` while a load
 * balancer takes it out of rotation (/readyz answers 503, everything else is still served); `closing`
 * once the HTTP server stops accepting (what still arrives is refused with a 503 problem).
 */
export type LifecyclePhase = 'running' | 'draining' | 'closing';

export class Lifecycle {
  private current: LifecyclePhase = 'running';

  get phase(): LifecyclePhase {
    return this.current;
  }

  beginDrain(): void {
    if (this.current === 'running') this.current = 'draining';
  }

  beginClosing(): void {
    this.current = 'closing';
  }
}
