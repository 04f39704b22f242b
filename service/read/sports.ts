/**
 * The sports a contract may carry (`Contract.sport`) and the `sport` filter accepts. Names are
 * lower case; the filter matches them without regard to case, and an unknown name is a 400 that
 * lists these. The operator's create-contract refuses any other.
 */
export const SPORTS = [
  "football",
  "american-football",
  "basketball",
  "baseball",
  "ice-hockey",
  "tennis",
  "cricket",
  "rugby",
  "golf",
  "boxing",
  "mma",
  "motorsport",
  "cycling",
  "esports",
  "other",
] as const;
export type Sport = (typeof SPORTS)[number];

/** The sport named by `v` (any case), or null when it is not one of SPORTS. */
export function sportOf(v: string): Sport | null {
  const s = v.trim().toLowerCase();
  return (SPORTS as readonly string[]).includes(s) ? (s as Sport) : null;
}
