//! Generators for uids and generateName suffixes: deterministic for a given seed (tests set
//! one to get the same uids on every run), and seeded at random otherwise, so that a server
//! started again, with or without its saved state, never hands out a uid it gave out before
//! (as kube-apiserver never does).

/// Random bytes from the operating system's generator.
pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    use ring::rand::SecureRandom as _;
    let mut out = [0u8; N];
    if ring::rand::SystemRandom::new().fill(&mut out).is_err() {
        // No system generator: fall back to the process's hash keys and the clock, which
        // differ from run to run.
        use std::hash::{BuildHasher as _, Hasher as _};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        for (i, b) in out.iter_mut().enumerate() {
            h.write_usize(i);
            *b = h.finish() as u8;
        }
    }
    out
}

/// A random seed for a [`UidGenerator`].
pub(crate) fn random_seed() -> u64 {
    u64::from_le_bytes(random_bytes())
}

/// A seeded generator: the same seed yields the same uids in the same order.
#[derive(Debug, Clone)]
pub(crate) struct UidGenerator {
    state: u64,
}

impl UidGenerator {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        // splitmix64
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A random (version 4 shaped) UUID string.
    pub(crate) fn uid(&mut self) -> String {
        let hi = self.next_u64();
        let lo = self.next_u64();
        let hi = (hi & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000;
        let lo = (lo & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            hi >> 32,
            (hi >> 16) & 0xFFFF,
            hi & 0xFFFF,
            lo >> 48,
            lo & 0xFFFF_FFFF_FFFF
        )
    }

    /// Five characters from the alphabet kube-apiserver uses for generateName.
    pub(crate) fn name_suffix(&mut self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        let mut v = self.next_u64();
        (0..5)
            .map(|_| {
                let c = ALPHABET[(v % ALPHABET.len() as u64) as usize] as char;
                v /= ALPHABET.len() as u64;
                c
            })
            .collect()
    }
}
