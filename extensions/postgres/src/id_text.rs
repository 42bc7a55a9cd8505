//! Text forms of 64-bit ids in SQL: `idforge_id_to_text` and `idforge_id_from_text` (a bigint
//! is read as its 64 bits, as every snowflake in the extension: an unsigned layout's id past
//! 2^63 - 1 is a negative bigint whose decimal text is the unsigned number).

use idforge::text::{self, TextForm};
use pgrx::prelude::*;

use crate::error::{PgError, or_raise};

fn form_of(name: &str) -> TextForm {
    or_raise(name.parse::<TextForm>().map_err(PgError::from))
}

/// `id` written in the form named `form`: `decimal`, `base32` (13 Crockford characters,
/// sortable) or `base62` (11 characters, sortable byte-wise).
#[pg_extern(immutable, parallel_safe)]
fn idforge_id_to_text(id: i64, form: &str) -> String {
    text::id_to_text(id as u64, form_of(form))
}

/// The id whose text in the form named `form` is `text`; only the id's one text is taken
/// (INVALID_DECIMAL, INVALID_BASE32, INVALID_BASE62 otherwise).
#[pg_extern(immutable, parallel_safe)]
fn idforge_id_from_text(text_in: &str, form: &str) -> i64 {
    let form = form_of(form);
    or_raise(text::id_from_text(text_in, form).map_err(PgError::from)) as i64
}
