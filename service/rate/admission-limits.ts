/**
 * The numbers of read admission (./admission.ts): what each is and its default. Apart from the
 * scheduler so the entry points' settings (stack/config/settings.ts) read them without loading it.
 */
export interface AdmissionLimits {
  /** Expensive reads (GraphQL query executions, REST reads not in the cache) running at once (0: no admission, every read runs at once). */
  concurrency: number;
  /** Expensive reads one caller may have waiting for their turn; one more is refused 429. */
  queuePerCaller: number;
  /** Expensive reads waiting in all; one more is refused 429. */
  queueTotal: number;
  /** The Retry-After (s) told to a refused caller. */
  retryAfterSeconds: number;
}

/**
 * Two at once: on SQLite (synchronous driver) a read runs on the one thread whatever the number,
 * and fewer in flight means a caller let through first is answered sooner; the second keeps the
 * thread busy while the first waits on PostgreSQL. Eight waiting per caller covers a page's
 * parallel requests; 256 in all is about two seconds of 50-offer pages at the measured cost.
 */
export const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = { concurrency: 2, queuePerCaller: 8, queueTotal: 256, retryAfterSeconds: 1 };
