//! 64x64 -> 128-bit products without u128 arithmetic: the BPF backend has no `__multi3` /
//! `__udivti3`, and a function returning u128 is rejected ("only small returns supported").
//! Values are (high, low) pairs of u64.

/// Full product of two u64 as (high, low).
#[inline(always)]
pub fn mul(a: u64, b: u64) -> (u64, u64) {
    let (a1, a0) = (a >> 32, a & 0xffff_ffff);
    let (b1, b0) = (b >> 32, b & 0xffff_ffff);
    let p00 = a0.wrapping_mul(b0);
    let p01 = a0.wrapping_mul(b1);
    let p10 = a1.wrapping_mul(b0);
    let p11 = a1.wrapping_mul(b1);
    let mid = (p00 >> 32) + (p01 & 0xffff_ffff) + (p10 & 0xffff_ffff);
    let lo = (p00 & 0xffff_ffff) | (mid << 32);
    let hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    (hi, lo)
}

/// `a * b <= c * d`, exactly.
#[inline(always)]
pub fn product_le(a: u64, b: u64, c: u64, d: u64) -> bool {
    let (h1, l1) = mul(a, b);
    let (h2, l2) = mul(c, d);
    h1 < h2 || (h1 == h2 && l1 <= l2)
}

/// `floor(a * b / c)`; `None` when `c == 0` or the quotient does not fit in u64.
#[inline(always)]
pub fn mul_div_floor(a: u64, b: u64, c: u64) -> Option<u64> {
    if c == 0 {
        return None;
    }
    let (hi, lo) = mul(a, b);
    if hi == 0 {
        return Some(lo / c);
    }
    if hi >= c {
        return None;
    }
    Some(div_wide(hi, lo, c))
}

/// `(hi * 2^64 + lo) / c` for `hi < c`: restoring long division, one bit at a time (rare path:
/// products above 2^64). `hi < c` keeps the running remainder below 2c; `carry` holds its 65th bit.
#[inline(never)]
fn div_wide(hi: u64, lo: u64, c: u64) -> u64 {
    let (mut rem, mut q) = (hi, 0u64);
    let mut i = 64;
    while i > 0 {
        i -= 1;
        let carry = rem >> 63;
        rem = (rem << 1) | ((lo >> i) & 1);
        q <<= 1;
        if carry == 1 || rem >= c {
            rem = rem.wrapping_sub(c);
            q |= 1;
        }
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: u64, b: u64, c: u64) {
        let exact = (a as u128) * (b as u128);
        assert_eq!(mul(a, b), ((exact >> 64) as u64, exact as u64));
        let q = exact / c as u128;
        assert_eq!(mul_div_floor(a, b, c), if q > u64::MAX as u128 { None } else { Some(q as u64) }, "{a} {b} {c}");
    }

    #[test]
    fn matches_u128_reference() {
        let vals = [0u64, 1, 2, 3, 7, 10_000, 999_999, 1 << 31, (1 << 32) - 1, 1 << 32, 1 << 63, (1 << 63) + 12345, u64::MAX - 1, u64::MAX];
        for &a in &vals {
            for &b in &vals {
                for &c in &vals[1..] {
                    check(a, b, c);
                }
                for &c in &vals {
                    for &d in &vals {
                        assert_eq!(product_le(a, b, c, d), (a as u128) * (b as u128) <= (c as u128) * (d as u128));
                    }
                }
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (a, b, c) = (x, x.rotate_left(21) >> (x % 40), (x.rotate_left(7) >> (x % 60)) | 1);
            check(a, b, c);
        }
    }
}
