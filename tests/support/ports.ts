/**
 * Ports for the servers the suites start in child processes (`--port`, `--admin-port`, the roles'
 * replicas): `n` ports in a row, each checked free on loopback.
 *
 * Drawn from 10000-19999, a range nothing else of the test run draws from: the kernel gives
 * outgoing connections (the suites' own HTTP, RPC and PostgreSQL clients) local ports from its
 * ephemeral range, 32768-60999 on Linux (/proc/sys/net/ipv4/ip_local_port_range), and each
 * solana-test-validator of `tests/rpc/` (run beside the other projects) takes 40 ports from a
 * base in 20000-32727 (harness/validator.ts). A port drawn in either range could be taken
 * between the check and the child's bind, and the child would exit (EADDRINUSE); here only
 * another draw of this helper can take it, and the check skips what one already has.
 */
import { portFree } from "../../harness/validator";

const LOW = 10_000;
const HIGH = 20_000; // exclusive: the validator harness's ranges start here

/** `n` consecutive ports below 20000, each free on 127.0.0.1 when checked. */
export async function freePorts(n: number): Promise<number[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = LOW + Math.floor(Math.random() * (HIGH - LOW - n + 1));
    const ports = Array.from({ length: n }, (_, d) => base + d);
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return ports;
  }
  throw new Error(`no ${n} free ports in a row in ${LOW}-${HIGH - 1} on loopback`);
}
