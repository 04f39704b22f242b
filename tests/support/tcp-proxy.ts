/**
 * A loopback TCP relay in front of a real server, which a test can cut (every open connection
 * destroyed, new ones refused) and restore: how the RPC source's websocket drop is produced
 * without touching the validator or the client library.
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private down = false;
  /** Connections accepted while up (a reconnect shows as a new one). */
  connections = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpProxy> {
    let proxy: TcpProxy | null = null;
    const server = createServer((client) => {
      if (!proxy || proxy.down) {
        client.destroy();
        return;
      }
      proxy.connections++;
      const upstream = connect(targetPort, targetHost);
      for (const s of [client, upstream]) {
        proxy.sockets.add(s);
        s.on("close", () => proxy?.sockets.delete(s));
        s.on("error", () => undefined);
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const addr = server.address();
    if (addr === null || typeof addr === "string") throw new Error("proxy has no port");
    proxy = new TcpProxy(server, addr.port);
    return proxy;
  }

  /** Drops every connection and refuses new ones until restore(). */
  cut(): void {
    this.down = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.down = false;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
