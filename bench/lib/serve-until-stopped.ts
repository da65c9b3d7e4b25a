import type { FastifyInstance } from 'fastify';

/** Listens on 127.0.0.1:$PORT and, on SIGTERM or SIGINT, closes the app, runs `cleanup` and exits (bench servers). */
export async function serveUntilStopped(app: FastifyInstance, cleanup: () => void): Promise<void> {
  await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
  const stop = () => {
    void app.close().then(() => {
      cleanup();
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
