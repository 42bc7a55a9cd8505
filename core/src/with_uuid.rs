//! Conversions between the 128-bit ids and [`uuid::Uuid`] (feature `uuid`, off by default):
//! the same 128 bits, big-endian. Every ULID and flake-128 is a `Uuid` and back; a `Uuid` is a
//! [`Uuid7`] only when its version and variant bits say so (`InvalidUuid` otherwise).

use uuid::Uuid;

use crate::error::Error;
use crate::flake128::Flake128;
use crate::ulid::Ulid;
use crate::uuid7::Uuid7;

impl From<Uuid7> for Uuid {
    fn from(id: Uuid7) -> Uuid {
        Uuid::from_bytes(id.to_bytes())
    }
}

impl TryFrom<Uuid> for Uuid7 {
    type Error = Error;

    /// The UUIDv7 of these bits; another version or variant is [`Error::InvalidUuid`].
    fn try_from(u: Uuid) -> Result<Uuid7, Error> {
        Uuid7::from_bytes(u.into_bytes())
    }
}

impl From<Ulid> for Uuid {
    fn from(id: Ulid) -> Uuid {
        Uuid::from_bytes(id.to_bytes())
    }
}

impl From<Uuid> for Ulid {
    fn from(u: Uuid) -> Ulid {
        Ulid::from_bytes(u.into_bytes())
    }
}

impl From<Flake128> for Uuid {
    fn from(id: Flake128) -> Uuid {
        Uuid::from_bytes(id.to_bytes())
    }
}

impl From<Uuid> for Flake128 {
    fn from(u: Uuid) -> Flake128 {
        Flake128::from_bytes(u.into_bytes())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_same_bits_both_ways() {
        let id = Uuid7::from_fields(1_700_000_000_000, 0x123, 0x3456_789A_BCDE_F012).unwrap();
        let u = Uuid::from(id);
        assert_eq!(u.get_version_num(), 7);
        let (mut theirs, mut ours) = ([0u8; 36], [0u8; Uuid7::TEXT_LEN]);
        assert_eq!(
            &*u.hyphenated().encode_lower(&mut theirs),
            id.to_text(&mut ours)
        );
        assert_eq!(Uuid7::try_from(u), Ok(id));
        assert!(Uuid7::try_from(Uuid::from_u128(1)).is_err());
        let ulid = Ulid::from(u);
        assert_eq!(Uuid::from(ulid), u);
        let flake = Flake128::from_u128(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10);
        assert_eq!(Flake128::from(Uuid::from(flake)), flake);
        assert_eq!(Uuid::from(flake).as_u128(), flake.as_u128());
    }
}
