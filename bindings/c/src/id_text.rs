//! Text forms of 64-bit ids (snowflakes, or any `uint64_t` key): decimal, 13-character
//! Crockford base32 (TSID's form) and 11-character base62.

use std::ffi::c_char;

use runtime::text::{self, TextForm};

use crate::error::panic_boundary;
use crate::ptr;
use crate::status::idforge_status;

/// The longest id text (20 decimal digits); a buffer needs one more byte, for the NUL.
pub const IDFORGE_ID_TEXT_MAX_LEN: usize = 20;

/// Writes `id` in `form` (an `idforge_text_form`) and a NUL to `out` (`len` >= 21 holds every
/// form). `INVALID_ARGUMENT` for an unknown form, `BUFFER_TOO_SMALL` writing nothing when the
/// text and its NUL do not fit.
///
/// # Safety
/// `out` is NULL or points to `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_id_to_text(
    id: u64,
    form: u32,
    out: *mut c_char,
    len: usize,
) -> idforge_status {
    panic_boundary(|| {
        let mut buf = [0u8; text::MAX_LEN];
        let text = text::format(id, TextForm::from_number(form)?, &mut buf);
        // SAFETY: the caller's guarantee.
        unsafe { ptr::write_str(text, out, len, "out") }
    })
}

/// Reads the id whose text in `form` is `text` (NUL-terminated) into `*out`. Only the one text
/// of an id is taken (base32 in either case); anything else is the form's error:
/// `INVALID_DECIMAL` (a sign, a space, a leading zero, over 2^64 - 1), `INVALID_BASE32` (not 13
/// characters, `I L O U`, over 2^64 - 1) or `INVALID_BASE62` (not 11 characters). `*out` is
/// written only on success.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_id_from_text(
    text: *const c_char,
    form: u32,
    out: *mut u64,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (text, out) = unsafe { (ptr::cstr(text, "text")?, ptr::out(out, "out")?) };
        out.write(text::parse(text.to_bytes(), TextForm::from_number(form)?)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::idforge_text_form;

    #[test]
    fn the_max_len_is_the_runtime_one() {
        assert_eq!(IDFORGE_ID_TEXT_MAX_LEN, text::MAX_LEN);
    }

    #[test]
    fn form_numbers_are_the_runtime_forms_in_order() {
        for (number, form) in [
            (idforge_text_form::Decimal as u32, TextForm::Decimal),
            (idforge_text_form::Base32 as u32, TextForm::Base32),
            (idforge_text_form::Base62 as u32, TextForm::Base62),
        ] {
            assert_eq!(TextForm::from_number(number), Ok(form));
        }
    }
}
