/**
 * The hot reads' SQL, built and compiled by kysely once per shape instead of once per request.
 *
 * Profiles of the uncached read path (BENCHMARKS.md, issue 21) put a fifth of the server's time
 * in kysely building each query (immutable nodes, select lists parsed) and compiling it (a visitor
 * over the whole tree), for queries whose text depends only on a few things (which filters, how
 * many addresses). kysely always sends values as parameters, so a shape's text stays the same for
 * any values: this keeps the first compilation of each shape and runs it again with the new values
 * (kysely's own `compile()` and `executeQuery`, nothing hand-written in SQL).
 *
 * The caller names the shape (a key covering everything but the values) and the values that vary
 * (`tail`: the last parameters, in order). The first compilation is checked: when its parameters
 * do not end with `tail`, the shape is not kept and every call builds its query as before, so a
 * wrong `tail` costs speed, never a wrong answer.
 */
import type { Compilable, CompiledQuery, Kysely } from "kysely";
import { readNow, type Database } from "../../indexer";

/** Shapes kept at most (IN-lists of each page size, filter combinations); the oldest goes first. */
const MAX_SHAPES = 500;

interface Shape {
  compiled: CompiledQuery;
  /** The parameters before the tail: fixed for the shape. */
  head: readonly unknown[];
}

export class CompiledReads {
  private readonly shapes = new Map<string, Shape | null>();

  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The rows of `build()`, whose parameters are the shape's fixed ones followed by `tail`. `build`
   * runs only when the shape is not kept: a kept shape needs no query built.
   */
  async rows<R>(shape: string, tail: readonly unknown[], build: () => Compilable<R> | Promise<Compilable<R>>): Promise<R[]> {
    let s = this.shapes.get(shape);
    if (s === undefined) {
      const compiled = (await build()).compile();
      s = endsWith(compiled.parameters, tail) ? { compiled, head: compiled.parameters.slice(0, compiled.parameters.length - tail.length) } : null;
      if (this.shapes.size >= MAX_SHAPES) this.shapes.delete(this.shapes.keys().next().value!);
      this.shapes.set(shape, s);
      if (s === null) return (await this.db.executeQuery(compiled)).rows as R[];
    }
    if (s === null) return (await this.db.executeQuery((await build()).compile())).rows as R[];
    const run: CompiledQuery = { ...s.compiled, parameters: s.head.length ? [...s.head, ...tail] : tail };
    // On SQLite with the connection free, without kysely's lock around it (indexer/store/sqlite-reads.ts).
    return (readNow(this.db, run) ?? (await this.db.executeQuery(run)).rows) as R[];
  }
}

const endsWith = (params: readonly unknown[], tail: readonly unknown[]) =>
  params.length >= tail.length && tail.every((v, i) => params[params.length - tail.length + i] === v);
