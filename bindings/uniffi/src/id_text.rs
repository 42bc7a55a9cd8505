//! Text forms of 64-bit ids on the JVM: the functions `idToText` / `idFromText` (the
//! hand-written Kotlin object `IdText` gathers them for Java). A `Long` id is read as its 64
//! bits, as every snowflake on the JVM: an unsigned layout's id above 2^63 - 1 is a negative
//! `Long` whose decimal text is the unsigned number (`java.lang.Long.toUnsignedString`).

use idforge::text::{self, TextForm as RtTextForm};

use crate::error::Result;

/// A text form of a 64-bit id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum TextForm {
    /// Digits, no sign, no leading zero: JSON-safe; text order is not id order.
    Decimal,
    /// 13 Crockford base32 characters (TSID's form): upper case out, either case in; sorts
    /// like the ids.
    Base32,
    /// 11 characters of `0-9A-Za-z`; sorts like the ids byte-wise (not case-blind).
    Base62,
}

impl From<TextForm> for RtTextForm {
    fn from(form: TextForm) -> Self {
        match form {
            TextForm::Decimal => RtTextForm::Decimal,
            TextForm::Base32 => RtTextForm::Base32,
            TextForm::Base62 => RtTextForm::Base62,
        }
    }
}

/// The 64 bits of `id` written in `form`.
#[uniffi::export]
pub fn id_to_text(id: i64, form: TextForm) -> String {
    text::id_to_text(id as u64, form.into())
}

/// The id whose text in `form` is `text_in`, as its 64 bits. Only the id's one text is taken
/// (base32 in either case): otherwise `InvalidDecimal`, `InvalidBase32` or `InvalidBase62`.
#[uniffi::export]
pub fn id_from_text(text_in: String, form: TextForm) -> Result<i64> {
    Ok(text::id_from_text(&text_in, form.into())? as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_map_one_to_one() {
        let forms = [TextForm::Decimal, TextForm::Base32, TextForm::Base62];
        let mapped: Vec<RtTextForm> = forms.into_iter().map(Into::into).collect();
        assert_eq!(mapped, RtTextForm::ALL);
        assert_eq!(id_to_text(-1, TextForm::Decimal), u64::MAX.to_string());
        assert_eq!(
            id_from_text(u64::MAX.to_string(), TextForm::Decimal).ok(),
            Some(-1)
        );
    }
}
