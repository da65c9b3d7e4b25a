import net from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of a server, whose link the test can cut and restore. */
export interface TcpProxy {
  readonly port: number;
  /** Closes every open connection (both sides) and refuses new ones, like a server gone away. */
  cut(): Promise<void>;
  /** Accepts connections again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  await listen(0);
  const { port } = server.address() as net.AddressInfo;
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  // destroy(), not resetAndDestroy(): sockets reset here left a handle that kept this process from exiting.
  const closeAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port,
    async cut() {
      const closed = stopListening();
      closeAll();
      await closed;
    },
    restore: () => listen(port),
    async close() {
      const closed = stopListening();
      closeAll();
      await closed;
    },
  };
}
