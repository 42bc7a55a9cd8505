//! `idforge_describe_id`: any id's fields as one JSON object, read by the runtime's rules (the
//! ones `idforge decode` uses).

use std::ffi::c_char;

use runtime::text::id::{Field, FieldMap, IdKind, describe};
use runtime::{CoreError, Layout};

use crate::error::{FfiError, panic_boundary};
use crate::layout::idforge_layout;
use crate::ptr;
use crate::status::idforge_status;

/// The longest JSON `idforge_describe_id` writes, without its NUL (a snowflake's, with its
/// layout's spec, is the longest: under 400 bytes).
pub const IDFORGE_DESCRIBE_MAX_LEN: usize = 511;

fn kind_of(kind: u32) -> Result<Option<IdKind>, FfiError> {
    // The order of IdKind::ALL is the numbering of idforge_id_kind after Any (checked by a test).
    match kind {
        0 => Ok(None),
        k => IdKind::ALL
            .get(k as usize - 1)
            .copied()
            .map(Some)
            .ok_or_else(|| CoreError::InvalidArgument("unknown idforge_id_kind").into()),
    }
}

/// The fields as a JSON object, in their order; 64-bit ids are strings.
fn to_json(fields: &[Field]) -> String {
    serde_json::to_string(&FieldMap(fields)).unwrap_or_default()
}

/// Writes the fields of the id written as `text` (NUL-terminated) to `out` as one JSON object
/// and a NUL, in the order `idforge decode` prints them: `type` and `id` first (a snowflake's
/// `layout` between them), then `time` (RFC 3339 UTC) and the kind's own fields; ids and
/// other 64-bit values are strings. `kind` is an `idforge_id_kind`; `layout` reads snowflakes
/// (NULL: Twitter's). A buffer of `IDFORGE_DESCRIBE_MAX_LEN + 1` bytes holds any answer;
/// `BUFFER_TOO_SMALL` writes nothing. Text that is no id is `INVALID_ARGUMENT`, or the error of
/// the kind it was read as.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `layout` is NULL or readable; `out` is NULL or points to
/// `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_describe_id(
    text: *const c_char,
    kind: u32,
    layout: *const idforge_layout,
    out: *mut c_char,
    len: usize,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantee.
        let text = unsafe { ptr::cstr(text, "text")? };
        let text = text
            .to_str()
            .map_err(|_| CoreError::InvalidArgument("the id text is not UTF-8"))?;
        let layout = if layout.is_null() {
            Layout::TWITTER
        } else {
            // SAFETY: the caller's guarantee (not NULL: checked above).
            unsafe { ptr::get(layout, "layout")? }.to_layout()?
        };
        let fields = describe(text, kind_of(kind)?, None, &layout)?;
        // SAFETY: the caller's guarantee.
        unsafe { ptr::write_str(&to_json(&fields), out, len, "out") }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::idforge_id_kind;

    #[test]
    fn kind_numbers_are_the_runtime_kinds_in_order() {
        for (number, kind) in [
            (idforge_id_kind::Snowflake as u32, IdKind::Snowflake),
            (idforge_id_kind::Objectid as u32, IdKind::ObjectId),
            (idforge_id_kind::Flake128 as u32, IdKind::Flake128),
            (idforge_id_kind::Uuid7 as u32, IdKind::Uuid7),
            (idforge_id_kind::Ulid as u32, IdKind::Ulid),
        ] {
            assert_eq!(kind_of(number).unwrap(), Some(kind));
        }
        assert_eq!(kind_of(idforge_id_kind::Any as u32).unwrap(), None);
        assert!(kind_of(6).is_err());
    }

    #[test]
    fn the_longest_answer_fits_the_max_len() {
        // The widest layout spec, and the largest numbers in it.
        let spec = "epoch=1000000000000000,tick=1000000,time=21,node=22,seq=21,order=time_seq_node,unsigned";
        let layout = Layout::parse(spec).unwrap();
        let id = u64::MAX;
        let fields = describe(&id.to_string(), None, None, &layout).unwrap();
        let json = to_json(&fields);
        assert!(
            json.len() <= IDFORGE_DESCRIBE_MAX_LEN,
            "{} bytes: {json}",
            json.len()
        );
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed["type"], "snowflake");
        // Every kind's answer is valid JSON.
        for text in [
            "ffffffff0000000000000000",
            "0190163d-8694-739b-aea5-966c26f8ad91",
            "01J09D7ZPJQ76YP3AVBP8JGFRA",
            "2D7a6d0e1c1a4b5e8f00ab",
        ] {
            let json = to_json(&describe(text, None, None, &Layout::TWITTER).unwrap());
            serde_json::from_str::<serde_json::Value>(&json).unwrap();
        }
    }
}
