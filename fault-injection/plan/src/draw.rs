//! Hashes: FNV-1a (the plan text's identity in the counter file) and splitmix64 (the
//! stateless `%P` draws).

use crate::Trigger;

/// FNV-1a, used to tie the shared counter file to one plan text.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// splitmix64: the per-call random draw for `%P` triggers.
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Whether the `ordinal`-th matching call of rule `rule`, in the process whose random
/// stream is `stream`, fires with probability `ppm`. Every process of a tree has its
/// own stream, so N processes making one call each draw N independent decisions.
pub fn draw(seed: u64, stream: u64, rule: usize, ordinal: u64, ppm: u32) -> bool {
    let call = splitmix64((rule as u64 + 1).wrapping_mul(0x1000_0000_01b3) ^ ordinal);
    let x = splitmix64(seed ^ splitmix64(stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ call));
    (x % 1_000_000) < u64::from(ppm)
}

/// Whether a call that is the `ordinal`-th match of rule `rule` fires.
pub fn fires(trigger: Trigger, seed: u64, stream: u64, rule: usize, ordinal: u64) -> bool {
    match trigger {
        Trigger::Always => true,
        Trigger::Nth(n) => ordinal == n,
        Trigger::From(n) => ordinal >= n,
        Trigger::Ppm(p) => draw(seed, stream, rule, ordinal, p),
    }
}
