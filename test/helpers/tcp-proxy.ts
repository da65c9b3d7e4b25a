import net from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of a server, whose link the test can cut and restore. */
export interface TcpProxy {
  readonly port: number;
  /** Closes every open connection (both sides) and refuses new ones, like a server gone away. */
  cut(): Promise<void>;
  /** Accepts connections again on the same port. */
  restore(): Promise<void>;
  /**
   * Keeps every connection open but forwards nothing any more, either way (what is sent is taken and
   * dropped), like a frozen server whose kernel still acknowledges: the link is never closed.
   */
  stall(): void;
  /** Forwards again, on the connections opened from now on (those stalled stay silent). */
  unstall(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let stalled = false;
  const stalledSockets = new WeakSet<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
      if (stalled) stalledSockets.add(socket);
    }
    const forward = (from: net.Socket, to: net.Socket) => from.on('data', (chunk) => !stalledSockets.has(from) && to.write(chunk));
    forward(client, upstream);
    forward(upstream, client);
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
    stall() {
      stalled = true;
      for (const socket of sockets) stalledSockets.add(socket);
    },
    unstall() {
      stalled = false;
    },
    async close() {
      const closed = stopListening();
      closeAll();
      await closed;
    },
  };
}
