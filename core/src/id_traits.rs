//! The trait impls every id type has in the same shape, written once: `Display` and `FromStr`
//! through the type's own text writer and parser, and for the 128-bit ids the number and byte
//! views. A macro because each type keeps its own inherent `const fn`s, which a trait cannot
//! offer.

/// `Display` (the text form, honouring width and alignment flags) and `FromStr` for an id:
/// `text_traits!(Type, buffer length, writer, parser)`.
macro_rules! text_traits {
    ($id:ident, $len:expr, $write:ident, $parse:ident) => {
        #[doc = concat!("The text of [`", stringify!($id), "::", stringify!($write), "`]")]
        #[doc = "(honouring width and alignment flags)."]
        impl core::fmt::Display for $id {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                let mut buf = [0u8; $len];
                f.pad(self.$write(&mut buf))
            }
        }

        #[doc = concat!("Parses as [`", stringify!($id), "::", stringify!($parse), "`].")]
        impl core::str::FromStr for $id {
            type Err = crate::error::Error;

            fn from_str(s: &str) -> crate::error::Result<$id> {
                $id::$parse(s)
            }
        }
    };
}

/// The number and byte views of a 128-bit id (a `u128` newtype whose big-endian bytes sort as
/// the id does): `as_u128`, `to_bytes` and `From<Type> for u128`.
macro_rules! u128_views {
    ($id:ident) => {
        impl $id {
            /// The id as a number.
            #[inline]
            pub const fn as_u128(&self) -> u128 {
                self.0
            }

            /// The 16 big-endian bytes: the binary form, which sorts as the id does.
            #[inline]
            pub const fn to_bytes(&self) -> [u8; 16] {
                self.0.to_be_bytes()
            }
        }

        #[doc = concat!("The [`", stringify!($id), "`] as a number.")]
        impl From<$id> for u128 {
            fn from(id: $id) -> u128 {
                id.0
            }
        }
    };
}
