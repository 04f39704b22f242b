//! programs/offers/take-best-vectors.json: take_best's odds limit and whole sweeps, computed with
//! math.rs the way take_best.rs applies it (each offer in the list's order, what is left of the
//! total carried from one to the next, fill-or-kill all or nothing). tests/offers/take-best-rules.test.ts
//! recomputes every row with idl/client/take-best-rules.ts. `UPDATE_MATH_VECTORS=1 cargo test -p offers`
//! rewrites it after a deliberate change.

extern crate std;
use crate::math::{matched_for_take, odds_at_least, sweep_take, Skip, SweepStep};
use std::{format, string::String, vec, vec::Vec};

const M: u64 = u64::MAX;
const UNIT: u64 = 1_000_000;

fn q(v: u64) -> String {
    format!("\"{v}\"")
}

#[derive(Clone)]
struct O {
    side: u8,
    open: bool,
    own: bool,
    total: u64,
    target: u64,
    filled: u64,
    min: u64,
    held: u64,
}

impl O {
    fn allocated(&self) -> u64 {
        if self.filled == self.target {
            self.total
        } else {
            kit::wide::mul_div_floor(self.filled, self.total, self.target).unwrap()
        }
    }
}

struct Sweep {
    side: u8,
    amount: u64,
    num: u64,
    den: u64,
    fill_or_kill: bool,
    max_wager: u64,
    offers: Vec<O>,
}

fn skip_name(s: Skip) -> &'static str {
    match s {
        Skip::WrongSide => "WrongSide",
        Skip::OfferNotOpen => "OfferNotOpen",
        Skip::SelfTake => "SelfTake",
        Skip::OddsBelowLimit => "OddsBelowLimit",
        Skip::PositionAboveMaximum => "PositionAboveMaximum",
        Skip::TakeBelowMinimum => "TakeBelowMinimum",
        Skip::TakeTooSmallToMatch => "TakeTooSmallToMatch",
    }
}

fn render_sweep(s: &Sweep) -> String {
    let mut left = s.amount;
    let mut fills = Vec::new();
    let mut offers = Vec::new();
    for o in &s.offers {
        offers.push(format!(
            "{{\"side\": {}, \"open\": {}, \"own\": {}, \"creatorTotal\": {}, \"takerTarget\": {}, \"takerFilled\": {}, \"creatorAllocated\": {}, \"minimumTake\": {}, \"held\": {}}}",
            o.side,
            o.open,
            o.own,
            q(o.total),
            q(o.target),
            q(o.filled),
            q(o.allocated()),
            q(o.min),
            q(o.held)
        ));
        if left == 0 {
            fills.push("{\"skip\": \"AmountTaken\"}".into());
            continue;
        }
        let step = SweepStep {
            taker_side: s.side,
            offer_side: o.side,
            offer_open: o.open,
            self_take: o.own,
            odds_numerator: s.num,
            odds_denominator: s.den,
            creator_total: o.total,
            taker_target: o.target,
            taker_filled: o.filled,
            creator_allocated: o.allocated(),
            minimum_take: o.min,
            held: o.held,
            maximum_wager: s.max_wager,
            left,
        };
        match sweep_take(&step) {
            Ok((take, matched)) => {
                assert_eq!(matched, matched_for_take(take, o.total, o.target, o.filled, o.allocated()));
                left -= take;
                fills.push(format!("{{\"take\": {}, \"matched\": {}}}", q(take), q(matched)));
            }
            Err(k) => fills.push(format!("{{\"skip\": \"{}\"}}", skip_name(k))),
        }
    }
    let taken = s.amount - left;
    let error = if taken == 0 {
        "\"NothingTaken\""
    } else if s.fill_or_kill && left > 0 {
        "\"NotFilled\""
    } else {
        "null"
    };
    format!(
        "{{\"side\": {}, \"amount\": {}, \"worstOdds\": [{}, {}], \"mode\": \"{}\", \"maximumWager\": {}, \"offers\": [{}], \"fills\": [{}], \"taken\": {}, \"error\": {error}}}",
        s.side,
        q(s.amount),
        q(s.num),
        q(s.den),
        if s.fill_or_kill { "fill-or-kill" } else { "fill-and-kill" },
        q(s.max_wager),
        offers.join(", "),
        fills.join(", "),
        q(taken)
    )
}

fn open(total: u64, target: u64, min: u64) -> O {
    O { side: 2, open: true, own: false, total, target, filled: 0, min, held: 0 }
}

fn sweep(amount: u64, num: u64, den: u64, offers: Vec<O>) -> Sweep {
    Sweep { side: 1, amount, num, den, fill_or_kill: false, max_wager: 500 * UNIT, offers }
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn render() -> String {
    let mut odds = Vec::new();
    let vals = [0u64, 1, 2, 3, 7, UNIT, 1 << 32, 1 << 63, M - 1, M];
    for &s in &vals {
        for &t in &vals[1..] {
            for (n, d) in
                [(1u64, 1u64), (2, 1), (3, 2), (t.saturating_add(s), t), (t.saturating_add(s).saturating_add(1), t), (M, 1), (M, M - 1), (0, 1), (1, M)]
            {
                odds.push(format!(
                    "{{\"creatorTotal\": {}, \"takerTarget\": {}, \"numerator\": {}, \"denominator\": {}, \"atLeast\": {}}}",
                    q(s),
                    q(t),
                    q(n),
                    q(d),
                    odds_at_least(s, t, n, d)
                ));
            }
        }
    }

    let mut sweeps = vec![
        // Odds exactly at the limit are taken, one unit worse are not: 8 against 10 pays 18:10.
        sweep(5 * UNIT, 18, 10, vec![open(8 * UNIT, 10 * UNIT, UNIT)]),
        sweep(5 * UNIT, 18 * UNIT + 1, 10 * UNIT, vec![open(8 * UNIT, 10 * UNIT, UNIT)]),
        sweep(5 * UNIT, 18 * UNIT - 1, 10 * UNIT, vec![open(8 * UNIT, 10 * UNIT, UNIT), open(1, 1, 1)]),
        // Best first, then the rest of the total from the next one, a worse one passed over.
        sweep(25 * UNIT, 2, 1, vec![open(30 * UNIT, 10 * UNIT, UNIT), open(5 * UNIT, 10 * UNIT, UNIT), open(20 * UNIT, 20 * UNIT, UNIT)]),
        // The remainder exception: 0.5 left on an offer with a minimum of 1 is taken whole.
        sweep(10 * UNIT, 1, 1, vec![O { filled: 9_500_000, ..open(10 * UNIT, 10 * UNIT, UNIT) }, open(10 * UNIT, 10 * UNIT, UNIT)]),
        // What is left of the total is below the next offer's minimum: passed over, not failed.
        sweep(10_500_000, 1, 1, vec![open(10 * UNIT, 10 * UNIT, UNIT), open(10 * UNIT, 10 * UNIT, UNIT), open(UNIT, 500_000, 1)]),
        // The position cap counts what the taker holds already.
        sweep(
            100 * UNIT,
            1,
            1,
            vec![
                O { held: 450 * UNIT, ..open(100 * UNIT, 100 * UNIT, UNIT) },
                O { held: 500 * UNIT, ..open(UNIT, UNIT, 1) },
                open(100 * UNIT, 100 * UNIT, 60 * UNIT),
            ],
        ),
        // Own offers, the other side, closed offers.
        sweep(
            10 * UNIT,
            1,
            1,
            vec![
                O { own: true, ..open(10 * UNIT, 10 * UNIT, UNIT) },
                O { side: 1, ..open(10 * UNIT, 10 * UNIT, UNIT) },
                O { open: false, ..open(10 * UNIT, 10 * UNIT, UNIT) },
            ],
        ),
        // Too small to match: 1 micro against 1 for 3.
        sweep(1, 1, 1, vec![open(1, 3, 1)]),
    ];
    let mut fok = sweep(25 * UNIT, 1, 1, vec![open(10 * UNIT, 10 * UNIT, UNIT), open(10 * UNIT, 10 * UNIT, UNIT)]);
    fok.fill_or_kill = true;
    sweeps.push(fok);
    let mut fok_ok = sweep(20 * UNIT, 1, 1, vec![open(10 * UNIT, 10 * UNIT, UNIT), open(10 * UNIT, 10 * UNIT, UNIT)]);
    fok_ok.fill_or_kill = true;
    sweeps.push(fok_ok);
    // Extremes: u64-sized terms.
    sweeps.push(Sweep { max_wager: M, ..sweep(M, M, 1, vec![open(M, 1, 1), open(M - 1, M, 1), open(1, M, M)]) });

    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let scales = [1u64, 1000, UNIT];
    for _ in 0..250 {
        let den = 1 + r.below(4);
        let num = den + r.below(2 * den + 1);
        let scale = scales[r.below(3) as usize];
        let n = 1 + r.below(5) as usize;
        let mut offers = Vec::new();
        for _ in 0..n {
            let target = (1 + r.below(50)) * scale;
            let total = (1 + r.below(100)) * scale / (1 + r.below(4));
            let total = total.max(1);
            let filled = if r.below(3) == 0 { r.below(target + 1) } else { 0 };
            offers.push(O {
                side: if r.below(8) == 0 { 1 } else { 2 },
                open: r.below(10) != 0,
                own: r.below(12) == 0,
                total,
                target,
                filled,
                min: 1 + r.below(12) * scale,
                held: if r.below(4) == 0 { r.below(60) * scale } else { 0 },
            });
        }
        sweeps.push(Sweep { side: 1, amount: 1 + r.below(120) * scale, num, den, fill_or_kill: r.below(3) == 0, max_wager: (1 + r.below(80)) * scale, offers });
    }
    let rows: Vec<String> = sweeps.iter().map(render_sweep).collect();
    format!("{{\n  \"oddsAtLeast\": [\n    {}\n  ],\n  \"sweeps\": [\n    {}\n  ]\n}}\n", odds.join(",\n    "), rows.join(",\n    "))
}

#[test]
fn odds_at_least_is_the_exact_comparison() {
    let vals = [0u64, 1, 2, 3, 7, UNIT, 1 << 32, 1 << 63, M - 1, M];
    for &s in &vals {
        for &t in &vals[1..] {
            for &n in &vals {
                for &d in &vals[1..] {
                    // (T + S) * den can reach 2^129: the reference compares through the difference,
                    // and agrees with the plain products wherever they fit in a u128.
                    let reference = if n <= d { true } else { (s as u128) * (d as u128) >= ((n - d) as u128) * (t as u128) };
                    assert_eq!(odds_at_least(s, t, n, d), reference, "{s} {t} {n} {d}");
                    if let Some(lhs) = (t as u128 + s as u128).checked_mul(d as u128) {
                        assert_eq!(reference, lhs >= (n as u128) * (t as u128));
                    }
                }
            }
        }
    }
}

#[test]
fn vectors_file_matches_rust() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/take-best-vectors.json");
    let text = render();
    if std::env::var_os("UPDATE_MATH_VECTORS").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(committed == text, "{path} differs from what math.rs computes; rerun with UPDATE_MATH_VECTORS=1 if the change is deliberate");
}
