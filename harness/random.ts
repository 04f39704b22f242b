/** A small seeded PRNG (xorshift64*), so randomized suites are reproducible from their seed. */
export class Rng {
  private s: bigint;
  constructor(seed: number | bigint) {
    this.s = BigInt(seed) ^ 0x9e3779b97f4a7c15n || 1n;
  }
  next(): bigint {
    let x = this.s;
    x ^= x >> 12n;
    x ^= (x << 25n) & 0xffffffffffffffffn;
    x ^= x >> 27n;
    this.s = x;
    return (x * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn;
  }
  /** Uniform integer in [lo, hi]. */
  big(lo: bigint, hi: bigint): bigint {
    return lo + (this.next() % (hi - lo + 1n));
  }
  int(lo: number, hi: number): number {
    return Number(this.big(BigInt(lo), BigInt(hi)));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(0, xs.length - 1)];
  }
  chance(p: number): boolean {
    return Number(this.next() % 1_000_000n) < p * 1_000_000;
  }
}
