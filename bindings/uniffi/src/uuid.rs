//! `Uuid`: 128 bits that cross to the JVM as `java.util.UUID` (uniffi.toml maps the custom
//! type), carried as its two signed halves, as `UUID(mostSignificantBits, leastSignificantBits)`.

/// The two halves of a UUID, the form `Uuid` crosses the FFI in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct UuidBits {
    /// The upper 64 bits (`UUID.mostSignificantBits`).
    pub msb: i64,
    /// The lower 64 bits (`UUID.leastSignificantBits`).
    pub lsb: i64,
}

/// Any 128 bits; a `java.util.UUID` on the JVM. Which version it must be is checked where it is
/// used, so a wrong one is a typed `IdforgeException`, never a failure of the conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uuid(pub(crate) u128);

impl From<Uuid> for UuidBits {
    fn from(u: Uuid) -> UuidBits {
        UuidBits {
            msb: (u.0 >> 64) as u64 as i64,
            lsb: u.0 as u64 as i64,
        }
    }
}

impl From<UuidBits> for Uuid {
    fn from(b: UuidBits) -> Uuid {
        Uuid(u128::from(b.msb as u64) << 64 | u128::from(b.lsb as u64))
    }
}

uniffi::custom_type!(Uuid, UuidBits, {
    lower: |u| UuidBits::from(u),
    try_lift: |b| Ok(Uuid::from(b)),
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_halves_keep_every_bit() {
        let v = 0x018b_cfe5_687b_7abc_8123_4567_89ab_cdef_u128;
        let bits = UuidBits::from(Uuid(v));
        assert_eq!(bits.msb, 0x018b_cfe5_687b_7abc);
        assert_eq!(bits.lsb as u64, 0x8123_4567_89ab_cdef);
        for v in [0, 1, u128::MAX, v, 1 << 63, 1 << 127] {
            assert_eq!(Uuid::from(UuidBits::from(Uuid(v))), Uuid(v));
        }
    }
}
